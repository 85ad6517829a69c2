"""Fast checks of mklbook.solvers: certificates, agreement with cvxpy reference formulations, bad input."""
import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sps
from hypothesis import given, settings, strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel

from mklbook.solvers import (SolverError, crammer_singer_dual, kernel_ridge, kernel_ridge_path, solve_lp,
                             solve_qp, svm_dual, svr_dual)

FAST = settings(max_examples=6, deadline=None)


def factor(K):
    d, V = np.linalg.eigh((K + K.T) / 2)
    return V * np.sqrt(np.clip(d, 0, None))


def binary_problem(m, seed, gamma=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m + 20, 4))
    y = np.where(X[:, 0] + 0.7 * rng.standard_normal(m + 20) > 0, 1.0, -1.0)
    if len(np.unique(y[:m])) < 2:
        y[0], y[1] = 1.0, -1.0
    K = rbf_kernel(X, gamma=gamma)
    return K[:m, :m], K[m:, :m], y[:m], X


@FAST
@given(seed=st.integers(0, 2**31 - 1), log_c=st.floats(-1, 2), loss=st.sampled_from(["hinge", "squared_hinge"]))
def test_svm_certificate_and_cvxpy(seed, log_c, loss):
    C = 10.0 ** log_c
    K, Kte, y, _ = binary_problem(50, seed)
    K0 = K.copy()
    r = svm_dual(K, y, C=C, loss=loss)
    assert r.status == "optimal" and 0 <= r.gap <= 1e-8
    np.testing.assert_equal(K, K0)
    a = cp.Variable(50)
    quad = cp.sum_squares(factor(K).T @ cp.multiply(y, a))
    if loss == "hinge":
        prob = cp.Problem(cp.Maximize(cp.sum(a) - quad / 2), [a >= 0, a <= C, y @ a == 0])
    else:
        prob = cp.Problem(cp.Maximize(cp.sum(a) - quad / 2 - cp.sum_squares(a) / (4 * C)), [a >= 0, y @ a == 0])
    prob.solve(solver="CLARABEL")
    assert abs(r.objective - prob.value) <= 1e-6 * max(1.0, abs(prob.value))
    assert abs(r.primal - r.objective) <= 1e-8 * max(1.0, abs(r.primal))
    assert r.decision_function(Kte).shape == (20,)


@FAST
@given(seed=st.integers(0, 2**31 - 1), log_c=st.floats(-1, 2), eps=st.floats(0.0, 0.5))
def test_svr_certificate_and_cvxpy(seed, log_c, eps):
    C = 10.0 ** log_c
    K, _, _, X = binary_problem(50, seed)
    t = np.sin(X[:50, 0]) + 0.1 * X[:50, 1]
    r = svr_dual(K, t, C=C, epsilon=eps)
    assert r.status == "optimal" and r.gap <= 1e-8
    b = cp.Variable(50)
    prob = cp.Problem(cp.Maximize(t @ b - eps * cp.norm1(b) - cp.sum_squares(factor(K).T @ b) / 2),
                      [cp.abs(b) <= C, cp.sum(b) == 0])
    prob.solve(solver="CLARABEL")
    assert abs(r.objective - prob.value) <= 1e-6 * max(1.0, abs(prob.value))


@FAST
@given(seed=st.integers(0, 2**31 - 1), c=st.integers(2, 5), log_c=st.floats(-1, 1.5))
def test_crammer_singer_certificate_and_cvxpy(seed, c, log_c):
    C = 10.0 ** log_c
    rng = np.random.default_rng(seed)
    m = 40
    codes = np.r_[np.arange(c), rng.integers(0, c, m - c)]
    X = rng.standard_normal((m, 5))
    X[:, :min(c, 5)] += np.eye(c)[codes][:, :min(c, 5)]
    K = rbf_kernel(X, gamma=0.3)
    r = crammer_singer_dual(K, codes, C=C)
    assert r.status == "optimal" and r.gap <= 1e-6
    Y = np.eye(c)[codes]
    T = cp.Variable((m, c))
    prob = cp.Problem(cp.Maximize(cp.sum(cp.multiply(Y, T)) - cp.sum_squares(factor(K).T @ T) / 2),
                      [T <= C * Y, cp.sum(T, axis=1) == 0])
    prob.solve(solver="CLARABEL")
    assert abs(r.objective - prob.value) <= 1e-6 * max(1.0, abs(prob.value))
    assert (r.tau <= C * Y + 1e-12).all() and np.abs(r.tau.sum(axis=1)).max() < 1e-9 * C
    assert r.decision_function(K[:3]).shape == (3, c)


@pytest.mark.parametrize("seed", range(6))
def test_crammer_singer_sweep_matches_the_vectorised_projection(seed):
    """`_cs_sweep` solves each example's sub-problem on Python floats; it must equal, bit for bit, the same sweep done
    with `crammer_singer_project` (the vectorised sorting rule) on one row at a time."""
    from mklbook.solvers import _cs_sweep, crammer_singer_project
    rng = np.random.default_rng(seed)
    m, c, C = int(rng.integers(30, 120)), int(rng.integers(2, 8)), float(rng.choice([0.1, 1.0, 10.0]))
    K = rbf_kernel(rng.standard_normal((m, 4)), gamma=float(rng.uniform(0.05, 2.0)))
    codes = rng.integers(0, c, m)
    T = crammer_singer_project(C * rng.standard_normal((m, c)), codes, np.full(m, C))
    G = np.eye(c)[codes] - K @ T
    dinv = 1.0 / np.diag(K)
    for _ in range(4):
        W = rng.choice(m, size=16, replace=False)
        Tr, Gr = T.copy(), G.copy()                          # the reference: one projection per example, in turn
        for i in W:
            tn = crammer_singer_project((Tr[i] + Gr[i] * dinv[i])[None], codes[i:i + 1], np.array([C]))[0]
            Gr -= np.outer(K[:, i], tn - Tr[i])
            Tr[i] = tn
        T, G = _cs_sweep(K, T, G, W, codes, C, dinv)
        np.testing.assert_array_equal(T, Tr)
        np.testing.assert_allclose(G, Gr, rtol=0, atol=1e-12)   # the sweep updates G in one product: round-off only



@pytest.mark.parametrize("fit_intercept", [False, True])
def test_kernel_ridge_eigh_fallback(monkeypatch, fit_intercept):
    import mklbook.solvers as S
    K, _, _, X = binary_problem(40, 4)
    t = X[:40, 1]
    ref = kernel_ridge(K, t, 0.1, fit_intercept=fit_intercept)

    def fail(*args, **kwargs):
        raise np.linalg.LinAlgError("forced")
    monkeypatch.setattr(S, "cholesky_factor", fail)     # the factorisation kernel_ridge uses
    r = kernel_ridge(K, t, 0.1, fit_intercept=fit_intercept)
    assert r.solver == "eigh" and r.converged
    np.testing.assert_allclose(r.alpha, ref.alpha, rtol=1e-8, atol=1e-10)
    assert abs(r.bias - ref.bias) < 1e-8


def test_svm_polish_survives_lapack_failures(monkeypatch):
    "A face system gelsd cannot solve (seen once on a2a) falls back to QR; a polish that fails keeps libsvm's answer."
    import mklbook.solvers as S
    K, _, y, _ = binary_problem(60, 4)
    ref = svm_dual(K, y, C=10.0, tol=1e-10)
    solve, lstsq = S.sla.solve, S.sla.lstsq

    def no_solve(*args, **kwargs):
        raise np.linalg.LinAlgError("forced")

    def no_gelsd(A, b, *args, lapack_driver=None, **kwargs):
        if lapack_driver is None:
            raise np.linalg.LinAlgError("SVD did not converge in Linear Least Squares")
        return lstsq(A, b, *args, lapack_driver=lapack_driver, **kwargs)
    monkeypatch.setattr(S.sla, "solve", no_solve)
    monkeypatch.setattr(S.sla, "lstsq", no_gelsd)
    r = svm_dual(K, y, C=10.0, tol=1e-10)
    assert r.gap <= 1e-9 and abs(r.objective - ref.objective) <= 1e-8 * abs(ref.objective)
    monkeypatch.setattr(S.sla, "solve", solve)
    monkeypatch.setattr(S, "_polish", no_solve)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = svm_dual(K, y, C=10.0, tol=1e-10, warn=False)
    assert np.isfinite(r.gap) and r.objective <= ref.objective + 1e-9 * abs(ref.objective)   # honest, not polished


def test_crammer_singer_low_rank_uses_interior_point():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((120, 2))
    y = (X[:, 0] > 0).astype(int) + 2 * (X[:, 1] > 0)
    K = X @ X.T                                           # rank 2
    r = crammer_singer_dual(K, y, C=10.0)
    assert r.converged and "interior point" in r.solver


@pytest.mark.parametrize("sparse", [False, True])
def test_lp_strong_duality_and_cvxpy(sparse):
    rng = np.random.default_rng(0)
    n, k = 30, 40
    A = rng.standard_normal((k, n))
    x0 = rng.uniform(0, 1, n)
    b = A @ x0 + rng.uniform(0, 1, k)
    Aeq = rng.standard_normal((2, n))
    c = rng.standard_normal(n)
    r = solve_lp(c, sps.csr_matrix(A) if sparse else A, b, Aeq, Aeq @ x0, bounds=(-1, 2))
    assert r.status == "optimal" and r.gap < 1e-9
    assert abs(r.objective - r.dual_objective) <= 1e-9 * max(1, abs(r.objective))
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(c @ x), [A @ x <= b, Aeq @ x == Aeq @ x0, x >= -1, x <= 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        prob.solve(solver="CLARABEL")
    assert abs(r.objective - prob.value) <= 1e-6 * max(1, abs(prob.value))


def test_lp_infeasible_unbounded_reported():
    with pytest.warns(ConvergenceWarning):
        r = solve_lp([1.0, 1.0], A_ub=[[1.0, 1.0]], b_ub=[-1.0])
    assert r.status == "infeasible" and r.x is None and r.objective == np.inf
    with pytest.raises(SolverError, match="infeasible"):
        r.check()
    r = solve_lp([-1.0, 0.0], A_ub=[[0.0, 1.0]], b_ub=[1.0], warn=False)
    assert r.status == "unbounded" and r.x is None




K_, KTE_, Y_, _ = binary_problem(30, 2)
KNAN = K_.copy()
KNAN[1, 2] = np.nan
BAD = [
    (lambda: svm_dual(K_[:, :20], Y_), "square (m, m)"),
    (lambda: svm_dual(K_, Y_[:29]), "29 labels but there are 30 samples"),
    (lambda: svm_dual(K_, np.ones(30)), "single class"),
    (lambda: svm_dual(K_, Y_, C=0.0), "C must be a positive finite number"),
    (lambda: svm_dual(K_, Y_, C=-2.0), "C must be a positive finite number"),
    (lambda: svm_dual(KNAN, Y_), "NaN or inf"),
    (lambda: svm_dual(K_, Y_).decision_function(KTE_[:, :10]), "has 10 columns"),
    (lambda: svr_dual(K_, Y_, epsilon=-1.0), "epsilon must be a non-negative"),
    (lambda: svr_dual(KNAN, Y_), "NaN or inf"),
    (lambda: kernel_ridge(K_, Y_, 0.0), "lam must be a positive"),
    (lambda: kernel_ridge(K_, Y_[:10], 1.0), "one target per training point"),
    (lambda: kernel_ridge_path(K_, Y_, []), "non-empty"),
    (lambda: crammer_singer_dual(K_, np.zeros(30)), "single class"),
    (lambda: crammer_singer_dual(K_, Y_, C=0.0), "C must be a positive finite number"),
    (lambda: crammer_singer_dual(np.ones((30, 29)), Y_), "square (m, m)"),
    (lambda: solve_lp([1.0, np.nan]), "NaN or inf"),
    (lambda: solve_lp([1.0, 1.0], A_ub=[[1.0]], b_ub=[1.0]), "A_ub must have shape (k, 2)"),
    (lambda: solve_qp(-np.eye(2), np.zeros(2)), "not convex"),
]


@pytest.mark.parametrize("call,msg", BAD)
def test_bad_input(call, msg):
    with pytest.raises((ValueError, TypeError)) as e:
        call()
    assert msg in str(e.value)


def test_inputs_not_modified():
    K0, y0 = K_.copy(), Y_.copy()
    svm_dual(K_, Y_)
    svm_dual(K_, Y_, loss="squared_hinge")
    svr_dual(K_, Y_)
    kernel_ridge(K_, Y_, 0.1, fit_intercept=True)
    kernel_ridge_path(K_, Y_, [0.1, 1.0])
    crammer_singer_dual(K_, Y_)
    np.testing.assert_equal(K_, K0)
    np.testing.assert_equal(Y_, y0)


def test_assumed_psd_is_said_in_the_status_of_every_dual():
    from mklbook.solvers import crammer_singer_dual, kernel_ridge, svm_dual, svr_dual
    X = np.random.default_rng(0).standard_normal((60, 3))
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    yb, yc, yr = np.sign(X[:, 0]), (X[:, 0] > 0).astype(int) + (X[:, 1] > 0), X[:, 0]
    for res in (svm_dual(K, yb, psd="assume"), svr_dual(K, yr, psd="assume"), kernel_ridge(K, yr, 1.0, psd="assume"),
                crammer_singer_dual(K, yc, psd="assume")):
        assert res.status == "optimal (PSD assumed)" and res.converged and "promised" in res.message, res
        assert res.check() is res
    assert svm_dual(K, yb).status == "optimal" and svm_dual(K, yb, psd="trusted").status == "optimal"


def test_singular_face_solve_agrees_with_the_minimum_norm_solution():
    """Duplicate training points make the polish's face systems singular. The ridge-LU-plus-refinement solve
    (`_singular_solve`) must solve the system to backward error 64 eps and match the eigendecomposition's minimum-norm
    solution on the kernel's range; an inconsistent system must fall back to least squares."""
    from mklbook.solvers import _min_norm_solve, _singular_solve
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((40, 3))
    X = np.vstack([Z, Z[:25]])                                  # 25 duplicated rows: K has rank <= 40
    K = rbf_kernel(X, gamma=0.3)
    n = K.shape[0]
    A = np.block([[K, np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
    b = A @ rng.standard_normal(n + 1)                          # consistent
    x_fast, x_ref = _singular_solve(A, b), _min_norm_solve(A, b)
    assert np.abs(A @ x_fast - b).max() <= 64 * np.finfo(float).eps * (np.abs(A).sum(1).max() * np.abs(x_fast).max() + np.abs(b).max())
    assert np.allclose(A @ x_fast, A @ x_ref, atol=1e-10)
    assert np.linalg.norm(x_fast - x_ref) <= 1e-4 * np.linalg.norm(x_ref)   # the same solution up to the cut directions
    b_bad = b.copy()
    w, V = np.linalg.eigh(A)
    b_bad += 10 * V[:, np.argmin(np.abs(w))]                    # a component outside the range: no exact solution
    assert np.allclose(_singular_solve(A, b_bad), _min_norm_solve(A, b_bad))
    A0 = np.zeros((4, 4))                           # a zero kernel block: no ridge scale, minimum norm
    A0[:3, 3] = A0[3, :3] = 1.0
    np.testing.assert_allclose(_singular_solve(A0, np.r_[0.0, 0.0, 0.0, 1.0])[:3], np.full(3, 1 / 3), atol=1e-12)


def test_svm_dual_certifies_on_duplicated_points(monkeypatch):
    "The certified SVM on data with many duplicated rows (singular faces in the polish) reaches its gap."
    import mklbook.solvers as solvers
    calls, solve = [], solvers._singular_solve
    monkeypatch.setattr(solvers, "_singular_solve", lambda A, b: calls.append(A.shape) or solve(A, b))
    rng = np.random.default_rng(5)
    Z = rng.integers(0, 2, size=(60, 6)).astype(float)          # binary features: many identical rows
    X = np.vstack([Z, Z, Z[:30]])
    y = np.where(X[:, 0] + X[:, 1] + 0.3 * rng.standard_normal(X.shape[0]) > 1, 1.0, -1.0)
    r = svm_dual(rbf_kernel(X, gamma=0.2), y, C=10.0, tol=1e-9)
    assert r.status == "optimal" and r.gap <= 1e-9
    assert calls, "the polish met no singular face: the test no longer exercises _singular_solve"


def test_large_factorisations_run_on_one_blas_thread(monkeypatch):
    """Past SERIAL_CHOLESKY_ROWS, the library's kernel factorisations and a second-stage estimator's fit run with one
    BLAS thread (OpenBLAS's threaded dpotrf segfaults on large orders on some CPUs); below it, nothing changes."""
    from threadpoolctl import threadpool_info
    from sklearn.base import BaseEstimator, RegressorMixin
    import mklbook.solvers as S
    from mklbook.alignment import AlignMKL
    from mklbook.kernels import Gaussian
    threads = lambda: min(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

    class Spy(RegressorMixin, BaseEstimator):
        def fit(self, K, y):
            self.seen_threads_ = threads()
            self.mean_ = float(np.mean(y))
            return self

        def predict(self, K):
            return np.full(K.shape[0], self.mean_)

    X = np.random.default_rng(0).standard_normal((60, 3))
    y = X[:, 0] + 0.1 * X[:, 1]
    outside = threads()
    est = AlignMKL([Gaussian(0.1), Gaussian(1.0)], estimator=Spy()).fit(X, y)
    assert est.estimator_.seen_threads_ == outside
    monkeypatch.setattr(S, "SERIAL_CHOLESKY_ROWS", 50)
    est = AlignMKL([Gaussian(0.1), Gaussian(1.0)], estimator=Spy()).fit(X, y)
    assert est.estimator_.seen_threads_ == 1 and threads() == outside
    r = S.kernel_ridge(Gaussian(0.5)(X), y, 1.0)                      # the factorisation itself, past the limit
    assert r.status == "optimal"


def test_bordered_factor_solves_the_face_system_and_refuses_what_it_cannot():
    """The polish's face systems `[K_FF 1; 1' 0]` solved through one Cholesky factor of `K_FF` (Schur complement on
    the border) must match a dense solve of the bordered matrix; an indefinite block and a singular one (duplicated
    points) are refused with the reason, so that `_face_solve` hands them to `_singular_solve`, which solves both."""
    from mklbook.solvers import _bordered_factor, _face_solve, _singular_solve
    rng = np.random.default_rng(7)
    X = rng.standard_normal((80, 4))
    K = rbf_kernel(X, gamma=1.0)                                    # condition number about 260
    n = K.shape[0]
    A = np.block([[K, np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
    rhs = rng.standard_normal(n + 1)
    solve, why = _bordered_factor(K.copy())
    assert why is None
    x, ref = solve(rhs), np.linalg.solve(A, rhs)
    assert np.linalg.norm(x - ref) <= 1e-12 * np.linalg.norm(ref) and np.abs(A @ x - rhs).max() <= 1e-12
    Kd = rbf_kernel(np.vstack([X, X[:10]]), gamma=1.0)             # duplicated rows: singular (LAPACK finds a zero or
    solve, why = _bordered_factor(Kd.copy())                        # negative pivot, or a condition number ~ 1/eps)
    assert solve is None and why in ("ill-conditioned", "indefinite")
    Ki = K - 0.5 * np.eye(n)                                        # indefinite: the factorisation fails
    assert _bordered_factor(Ki.copy()) == (None, "indefinite")
    Ai = np.block([[Ki, np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
    np.testing.assert_allclose(_singular_solve(Ai, rhs), np.linalg.solve(Ai, rhs), rtol=1e-8, atol=1e-8)
    # the face solve itself, with fixed variables at both bounds, against the dense bordered solve
    c = np.zeros(n)
    c[:5], c[5:10] = 1.0, -1.0
    seg = np.r_[np.full(10, -1), np.zeros(n - 10, int)]
    slopes = np.c_[np.ones(n), -np.ones(n)]
    F, N = np.arange(10, n), np.arange(10)
    xF, b, singular = _face_solve(K, c, seg, slopes, F, N)
    AF = np.block([[K[np.ix_(F, F)], np.ones((F.size, 1))], [np.ones((1, F.size)), np.zeros((1, 1))]])
    ref = np.linalg.solve(AF, np.r_[1.0 - K[np.ix_(F, N)] @ c[N], -c[N].sum()])
    assert not singular
    assert np.linalg.norm(np.r_[xF, b] - ref) <= 1e-12 * np.linalg.norm(ref)


def test_cholesky_factor_solves_on_both_routes_and_refuses_a_matrix_that_is_not_pd(monkeypatch):
    """`cholesky_factor` factorises by numpy up to SHARED_POOL_ROWS rows and by scipy beyond: either factor must solve
    the system through `scipy.linalg.cho_solve`, leave the input untouched unless overwriting is allowed past the
    threshold, and raise LinAlgError on a matrix that is not positive definite."""
    import scipy.linalg as sla
    import mklbook.solvers as S
    rng = np.random.default_rng(11)
    A = rbf_kernel(rng.standard_normal((60, 3)), gamma=0.5) + 0.1 * np.eye(60)
    b = rng.standard_normal(60)
    A0 = A.copy()
    for rows in (S.SHARED_POOL_ROWS, 10):                  # numpy's route, then scipy's (threshold below 60 rows)
        monkeypatch.setattr(S, "SHARED_POOL_ROWS", rows)
        x = sla.cho_solve(S.cholesky_factor(A), b)
        assert np.abs(A @ x - b).max() <= 1e-10 * np.abs(b).max()
        np.testing.assert_array_equal(A, A0)
        with pytest.raises(np.linalg.LinAlgError):
            S.cholesky_factor(A - 2.0 * np.eye(60))


@pytest.mark.parametrize("seed", range(4))
def test_crammer_singer_offsets_split_off_solve_the_formed_kernel_s_problem(seed):
    """`offset=s` (the constant kernel s 11' never formed; the offsets split off and found by Broyden steps) reaches the
    optimum of the dual on `K + s`: same value, same scores, offsets `s T'1`, warm starts included; the caller's K is
    not touched, and `offset=0` is the plain solver, bit for bit."""
    rng = np.random.default_rng(seed)
    m, c = int(rng.integers(60, 200)), int(rng.integers(2, 6))
    C, s = float(rng.choice([0.5, 1.0, 10.0])), float(rng.choice([0.5, 1.0, 4.0]))
    X = rng.standard_normal((m, 5))
    y = rng.integers(0, c, m)
    X[:, :min(c, 5)] += 1.5 * np.eye(c)[y][:, :min(c, 5)]
    K = rbf_kernel(X, gamma=0.3)
    K0 = K.copy()
    r = crammer_singer_dual(K, y, C=C, tol=1e-9, offset=s, fallback=False)
    ref = crammer_singer_dual(K + s, y, C=C, tol=1e-9, fallback=False)
    assert r.converged and ref.converged and "offsets split off" in r.solver
    np.testing.assert_array_equal(K, K0)
    assert abs(r.objective - ref.objective) <= 1e-8 * abs(ref.objective)
    assert r.gap <= 1e-9 and abs(r.primal - r.objective) <= 1e-8 * max(1.0, abs(r.primal))
    np.testing.assert_allclose(r.intercept, s * r.tau.sum(axis=0), rtol=0, atol=1e-15)
    F, F_ref = r.decision_function(K[:25]), (K[:25] + s) @ ref.tau
    np.testing.assert_allclose(F, F_ref, rtol=0, atol=1e-5 * max(1.0, np.abs(F_ref).max()))
    warm = crammer_singer_dual(0.9 * K + 0.1 * np.eye(m), y, C=C, tol=1e-9, offset=s, tau0=r.tau, fallback=False)
    cold = crammer_singer_dual(0.9 * K + 0.1 * np.eye(m), y, C=C, tol=1e-9, offset=s, fallback=False)
    assert warm.converged and abs(warm.objective - cold.objective) <= 1e-8 * abs(cold.objective)
    plain, zero = crammer_singer_dual(K, y, C=C, fallback=False), crammer_singer_dual(K, y, C=C, offset=0.0, fallback=False)
    np.testing.assert_array_equal(plain.tau, zero.tau)
    assert zero.offset == 0.0 and not zero.intercept.any()


def test_crammer_singer_offset_enters_the_sweep_and_the_face_newton_step_as_the_formed_kernel():
    "The rank-one terms of s 11' in a sweep and in a face-Newton step give what the formed K + s gives (round-off only)."
    from mklbook.solvers import _cs_face_newton, _cs_grad, _cs_sweep, crammer_singer_project
    rng = np.random.default_rng(3)
    m, c, C, s = 90, 4, 1.0, 2.0
    K = rbf_kernel(rng.standard_normal((m, 4)), gamma=0.5)
    codes = rng.integers(0, c, m)
    Y = np.eye(c)[codes]
    T = crammer_singer_project(C * rng.standard_normal((m, c)), codes, np.full(m, C))
    G, Gf = _cs_grad(K, T, Y, s), Y - (K + s) @ T
    np.testing.assert_allclose(G, Gf, rtol=0, atol=1e-12)
    W = rng.choice(m, size=16, replace=False)
    T1, G1 = _cs_sweep(K, T.copy(), G.copy(), W, codes, C, 1.0 / (np.diag(K) + s), s)
    T2, G2 = _cs_sweep(K + s, T.copy(), Gf.copy(), W, codes, C, 1.0 / np.diag(K + s))
    np.testing.assert_allclose(T1, T2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(G1, G2, rtol=0, atol=1e-11)
    N1, _ = _cs_face_newton(K, T1, Y, C * Y, s)
    N2, _ = _cs_face_newton(K + s, T1, Y, C * Y)
    np.testing.assert_allclose(N1, N2, rtol=0, atol=1e-7 * max(1.0, np.abs(N2).max()))


def test_crammer_singer_refuses_a_negative_offset():
    K = rbf_kernel(np.random.default_rng(0).standard_normal((20, 3)))
    with pytest.raises(ValueError, match="offset"):
        crammer_singer_dual(K, np.arange(20) % 3, offset=-1.0)


def test_crammer_singer_working_set_is_the_q_largest_positive_violations():
    "The working set: the q largest positive psi (all of them when fewer), whatever share of psi is exactly 0."
    from mklbook.solvers import _cs_working_set
    rng = np.random.default_rng(0)
    for zeros in (0.0, 0.5, 0.95, 1.0):
        psi = np.where(rng.random(500) < zeros, 0.0, rng.random(500))
        pos = np.flatnonzero(psi > 0)
        for q in (1, 16, 499, 600):
            W = _cs_working_set(psi, q)
            assert set(W.tolist()) == set(pos[np.argsort(-psi[pos])[:q]].tolist())
            assert (psi[W] > 0).all()


# --- one_blas_pool: scipy's BLAS on one thread inside the solvers and the estimators' fits --------------------------
def _blas_threads():
    from mklbook.solvers import _threadpools
    return {c.filepath: c.get_num_threads() for c in _threadpools().lib_controllers if c.user_api == "blas"}


def test_one_blas_pool_limits_only_the_other_libraries_and_restores_them():
    from threadpoolctl import threadpool_limits
    from mklbook.solvers import _other_blas, one_blas_pool
    others = _other_blas()
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        with one_blas_pool():
            inside = _blas_threads()
            with one_blas_pool():
                pass
            assert _blas_threads() == inside                       # an inner exit keeps the limit
        assert _blas_threads() == before
    assert all(inside[p] == 1 for p in others)
    assert all(inside[p] == before[p] for p in before if p not in others)   # numpy's pool keeps its threads


def test_one_blas_pool_acts_in_the_main_thread_only():
    """A worker thread's block changes nothing (scipy's OpenBLAS ignores set_num_threads from other threads, so a
    worker could not restore what it set); with the main thread inside, workers entering and leaving keep the limit,
    and the main thread's exit restores every pool."""
    import time
    from concurrent.futures import ThreadPoolExecutor
    from threadpoolctl import threadpool_limits
    from mklbook.solvers import _other_blas, one_blas_pool
    others = _other_blas()

    def worker(delay):
        with one_blas_pool():
            time.sleep(delay)
            return {p: _blas_threads()[p] for p in others}

    with threadpool_limits(limits=2, user_api="blas"), ThreadPoolExecutor(3) as ex:
        before = _blas_threads()
        alone = list(ex.map(worker, [0.03, 0.01]))
        assert _blas_threads() == before
        with one_blas_pool():
            nested = list(ex.map(worker, [0.03, 0.01, 0.02]))
            still = _blas_threads()
        assert _blas_threads() == before
    assert all(d == {p: before[p] for p in others} for d in alone)
    assert all(v == 1 for d in nested for v in d.values()) and all(still[p] == 1 for p in others)


def test_one_blas_pool_can_be_switched_off(monkeypatch):
    from threadpoolctl import threadpool_limits
    import mklbook.solvers as S
    monkeypatch.setattr(S, "ONE_BLAS_POOL", False)
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        with S.one_blas_pool():
            assert _blas_threads() == before


def test_a_fit_and_a_solver_leave_the_pools_as_they_found_them():
    from threadpoolctl import threadpool_limits
    from mklbook.classic_mkl import GMKL
    from sklearn.datasets import make_classification
    X, y = make_classification(120, 5, random_state=0)
    K, _, yb, _ = binary_problem(60, 1)
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        GMKL().fit(X, y)
        assert _blas_threads() == before
        svm_dual(K, yb, C=1.0)
        assert _blas_threads() == before
        with pytest.raises(ValueError):                            # an error inside the block restores them too
            svm_dual(K, yb, C=-1.0)
        assert _blas_threads() == before


def test_large_factorisations_get_scipys_threads_back(monkeypatch):
    from threadpoolctl import threadpool_limits
    import mklbook.solvers as S
    others = S._other_blas()
    if not others:
        pytest.skip("one BLAS library: nothing is limited")
    seen = []
    real = S.sla.cho_factor
    monkeypatch.setattr(S, "SHARED_POOL_ROWS", 8)                  # send a small factorisation to scipy
    monkeypatch.setattr(S.sla, "cho_factor",
                        lambda *a, **k: (seen.append(max(_blas_threads()[p] for p in others)), real(*a, **k))[1])
    A = np.eye(20) + 0.1
    with threadpool_limits(limits=2, user_api="blas"):
        with S.one_blas_pool():
            c, lower = S.cholesky_factor(A)
            assert all(_blas_threads()[p] == 1 for p in others)    # limited again after it
    assert seen == [2]          # (a single-threaded build among the others stays at 1; scipy's gets its 2 back)
    np.testing.assert_allclose(S.sla.cho_solve((c, lower), np.ones(20)), np.linalg.solve(A, np.ones(20)))
