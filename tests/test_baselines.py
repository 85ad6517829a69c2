"""Baselines: scikit-learn compatibility and certificates."""
import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import scipy.sparse as sp

from mklbook.baselines import L1MKL, L2KRRMKL, UniformMKL, l1_mkl, l1_mkl_rank_one, l2_krr_mkl
from mklbook.kernels import FeatureStack, Gaussian

KS = [Gaussian(0.1), Gaussian(1.0)]


# all of scikit-learn's checks apply; L1MKL declares itself binary-only (tag multi_class=False), so the checks use
# binary problems for it
@parametrize_with_checks([UniformMKL(KS), L1MKL(KS), L1MKL(KS, memory_budget=1.0), L2KRRMKL(KS),
                          L2KRRMKL(KS, memory_budget=1.0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_l1_mkl_on_feature_stack_matches_dense():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((50, 4))
    y = np.sign(Z[:, 0] + 0.5 * Z[:, 1])
    fs = FeatureStack(Z * np.sqrt(50) / np.linalg.norm(Z, axis=0))
    a = l1_mkl(fs, y, C=1.0)
    b = l1_mkl(fs.toarray(), y, C=1.0)
    assert a.status == b.status == "optimal"
    assert a.objective == pytest.approx(b.objective, rel=1e-6)


def test_l2_krr_mkl_certificate():
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((40, 5))
    r = l2_krr_mkl(FeatureStack(Z), Z[:, 0] - Z[:, 1], lam=0.5, Lambda=2.0)
    assert r.status == "optimal" and r.gap <= 1e-8
    assert np.linalg.norm(r.weights) == pytest.approx(2.0, rel=1e-6)


def _rank_one_problem(seed=2, m=60, p=10):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((m, p))
    return Z, np.sign(Z[:, 0] - 0.5 * Z[:, 2] + 0.3 * rng.standard_normal(m))


def test_l1_mkl_rank_one_bad_input():
    Z, y = _rank_one_problem()
    Z0, y0 = Z.copy(), y.copy()
    assert l1_mkl_rank_one(Z, y, C=0.7).weights.sum() == pytest.approx(1.0)
    np.testing.assert_array_equal(Z, Z0)
    np.testing.assert_array_equal(y, y0)
    with pytest.raises(ValueError, match="single class"):
        l1_mkl_rank_one(Z, np.ones(len(y)))
    with pytest.raises(ValueError, match="C must be a positive"):
        l1_mkl_rank_one(Z, y, C=0.0)
    bad = sp.csr_array(Z)
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        l1_mkl_rank_one(bad, y)
    Zn = Z.copy()
    Zn[0, 0] = np.inf
    with pytest.raises(ValueError):
        l1_mkl_rank_one(Zn, y)
    with pytest.raises(ValueError, match="labels"):
        l1_mkl_rank_one(Z, y[:-1])
    with pytest.warns(UserWarning, match="selects no feature"):
        r = l1_mkl_rank_one(Z, y, C=1e-4)
    assert (r.weights == 0).all()


@pytest.mark.parametrize("make", ["UniformMKL", "L1MKL", "L2KRRMKL", "AlignMKL", "AlignmentKRR"])
def test_part2_estimators_refuse_non_psd_kernels(make):
    import mklbook.alignment as al
    import mklbook.baselines as bl
    from mklbook.kernels import Sigmoid
    est = (getattr(bl, make, None) or getattr(al, make))([Sigmoid(1.0, 0.0), Gaussian(1.0)])
    X = np.random.default_rng(0).standard_normal((30, 3))
    y = np.sign(X[:, 0]) if make in ("UniformMKL", "L1MKL", "AlignMKL") else X[:, 0]
    with pytest.raises(ValueError, match="Sigmoid.*not PSD"):
        est.fit(X, y)


def test_l2krrmkl_past_the_memory_budget_solves_the_same_problem_when_the_features_are_exact():
    from sklearn.datasets import make_friedman1
    X, y = make_friedman1(300, 10, noise=1.0, random_state=0)
    X0 = X.copy()
    exact, low = L2KRRMKL().fit(X[:150], y[:150]), L2KRRMKL(memory_budget=1.0).fit(X[:150], y[:150])
    assert exact.low_rank_ is None and low.low_rank_ is not None and np.array_equal(X, X0)
    assert low.result_.status == "optimal"
    np.testing.assert_allclose(low.weights_, exact.weights_, atol=1e-8)      # 150 rows < 200 directions: exact features
    np.testing.assert_allclose(low.predict(X[150:]), exact.predict(X[150:]), atol=1e-8)
    assert abs(low.result_.objective - exact.result_.objective) <= 1e-8 * exact.result_.objective
    big = L2KRRMKL(memory_budget=1.0).fit(X[:250], y[:250])                   # 250 rows: approximate features
    assert big.score(X[250:], y[250:]) >= L2KRRMKL().fit(X[:250], y[:250]).score(X[250:], y[250:]) - 0.05
    with pytest.raises(ValueError, match="features"):
        low.predict(X[:5, :4])


def test_ridge_by_loo_is_the_brute_force_leave_one_out_choice_and_does_not_leak_through_centering():
    "The exact LOO of KRR with an offset, refitted 60 times per ridge, picks the same ridge; offset-free LOO would leak."
    from mklbook.baselines import RIDGE_SEARCH, ridge_by_loo
    from mklbook.kernels import center
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * rng.standard_normal(60)               # noisy: a large ridge should win
    K = center(Gaussian(0.5)(X))
    lams = np.array(RIDGE_SEARCH)

    def brute(lam):                                                        # refit without point i, with an offset
        err = []
        for i in range(60):
            o = np.r_[0:i, i + 1:60]
            A = np.block([[K[np.ix_(o, o)] + lam * np.eye(59), np.ones((59, 1))], [np.ones((1, 59)), np.zeros((1, 1))]])
            sol = np.linalg.solve(A, np.r_[y[o] - y.mean(), 0.0])
            err.append(y[i] - y.mean() - K[i, o] @ sol[:59] - sol[59])
        return np.mean(np.square(err))

    best = lams[int(np.argmin([brute(lam) for lam in lams]))]
    assert ridge_by_loo(K, y) == best and best > lams.min()
    # the trap it avoids: offset-free LOO on a centered kernel with centered targets predicts y_i itself as lam -> 0
    i, o = 0, np.arange(1, 60)
    yc = y - y.mean()
    pred = K[i, o] @ np.linalg.solve(K[np.ix_(o, o)] + 1e-10 * np.eye(59), yc[o])
    assert pred == pytest.approx(yc[i], abs=1e-3)


def test_l2krrmkl_auto_ridge_is_the_certified_machine_at_the_chosen_ridge():
    "lam='auto' chooses lam_ before learning the weights: the fit is L2KRRMKL(lam=lam_) exactly, on both paths."
    from sklearn.datasets import make_friedman1
    from mklbook.baselines import RIDGE_SEARCH
    X, y = make_friedman1(200, 6, noise=0.5, random_state=1)
    auto = L2KRRMKL().fit(X, y)
    assert auto.lam_ in RIDGE_SEARCH and auto.estimator_.alpha == auto.lam_ and auto.result_.status == "optimal"
    fixed = L2KRRMKL(lam=auto.lam_).fit(X, y)
    np.testing.assert_allclose(auto.weights_, fixed.weights_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(auto.predict(X[:20]), fixed.predict(X[:20]), rtol=1e-10)
    assert L2KRRMKL(lam=0.3).fit(X, y).lam_ == 0.3
    low = L2KRRMKL(memory_budget=1.0).fit(X, y)                          # 200 rows: exact features, same choice
    assert low.lam_ == auto.lam_
    with pytest.raises(ValueError, match="lam"):
        L2KRRMKL(lam="best").fit(X, y)


def test_l2_krr_mkl_newton_and_fixed_point_reach_the_same_certified_weights():
    "Projected Newton (default on arrays), the Anderson fixed point and cvxpy agree; Newton needs fewer solves."
    import cvxpy as cp
    from mklbook.kernels import KernelBank
    rng = np.random.default_rng(3)
    X = rng.standard_normal((80, 4))
    y = X[:, 0] ** 2 - np.sin(X[:, 1]) + 0.2 * rng.standard_normal(80)
    y -= y.mean()
    Ks = KernelBank([Gaussian(g) for g in (0.05, 0.3, 1.0, 3.0)], normalize="trace", center=True).fit_transform(X)
    runs = {m: l2_krr_mkl(Ks, y, lam=0.1, Lambda=1.5, tol=1e-10, method=m) for m in ("newton", "fixed-point")}
    assert all(r.status == "optimal" and r.gap <= 1e-10 for r in runs.values())
    np.testing.assert_allclose(runs["newton"].weights, runs["fixed-point"].weights, atol=1e-8)
    assert runs["newton"].n_solves < runs["fixed-point"].n_solves
    mu = cp.Variable(4, nonneg=True)
    ref = cp.Problem(cp.Minimize(cp.matrix_frac(y, sum(mu[k] * Ks[k] for k in range(4)) + 0.1 * np.eye(80))),
                     [cp.norm(mu, 2) <= 1.5])
    ref.solve()
    F = lambda w: float(y @ np.linalg.solve(np.tensordot(w, Ks, axes=1) + 0.1 * np.eye(80), y))
    w_ref = np.maximum(mu.value, 0) * min(1.0, 1.5 / np.linalg.norm(np.maximum(mu.value, 0)))   # feasible
    assert np.linalg.norm(runs["newton"].weights) <= 1.5 * (1 + 1e-12) and runs["newton"].weights.min() >= 0
    assert runs["newton"].objective == pytest.approx(F(runs["newton"].weights), rel=1e-10)
    assert runs["newton"].objective <= F(w_ref) * (1 + 1e-6)              # no feasible point of cvxpy's does better
    shifted = l2_krr_mkl(Ks, y, lam=0.1, Lambda=0.5, mu0=np.array([0.2, 0.0, 0.3, 0.0]), tol=1e-10)  # a ball off 0
    np.testing.assert_allclose(shifted.weights, l2_krr_mkl(Ks, y, lam=0.1, Lambda=0.5, mu0=np.array([0.2, 0.0, 0.3, 0.0]),
                                                           tol=1e-10, method="fixed-point").weights, atol=1e-8)
    with pytest.raises(ValueError, match="method must be"):
        l2_krr_mkl(Ks, y, method="lbfgs")
    with pytest.raises(ValueError, match="FeatureStack"):
        l2_krr_mkl(FeatureStack(X), y, method="newton")


def test_l2_krr_mkl_newton_names_an_indefinite_stack():
    "psd='assume' on an indefinite stack: Newton's Cholesky fails with a message that names the fix, not LinAlgError."
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 30))
    with pytest.raises(ValueError, match="not positive definite.*PSD kernels"):
        l2_krr_mkl(np.stack([A + A.T, np.eye(30)]), rng.standard_normal(30), lam=1e-3, psd="assume")


def test_l2_newton_reused_factorisations_reach_the_same_weights_with_fewer_factorisations():
    "CG preconditioned by an older factor replaces some factorisations; the fixed point and its certificate are unchanged."
    from mklbook.baselines import _l2_newton, _trace_m_scale
    from mklbook.kernels import KernelBank
    rng = np.random.default_rng(4)
    X = rng.standard_normal((300, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(300)
    y -= y.mean()
    Ks = KernelBank([Gaussian(g) for g in (0.02, 0.1, 0.5, 2.0)], normalize="trace", center=True).fit_transform(X)
    s = _trace_m_scale(Ks)
    fresh = _l2_newton(Ks, y, 1e-3, np.zeros(4), 1.0, s, 1e-10, 100, reuse_factor=False)
    reused = _l2_newton(Ks, y, 1e-3, np.zeros(4), 1.0, s, 1e-10, 100)
    assert fresh[2] <= 1e-10 and reused[2] <= 1e-10
    np.testing.assert_allclose(reused[0], fresh[0], rtol=1e-8)
    assert fresh[5] == fresh[4] and reused[5] < fresh[5]                 # every solve factorised vs. some by CG


def test_cg_with_factor_keeps_to_its_budget_and_its_bound():
    "CG from a nearby factor meets the Chebyshev bound; past its budget it returns None (then the caller factorises)."
    from mklbook.baselines import _cg_steps_needed, _cg_with_factor, _relative_change
    from mklbook.solvers import cholesky_factor
    import scipy.linalg as sla
    rng = np.random.default_rng(5)
    Z = rng.standard_normal((3, 80, 80))
    Ks = Z @ Z.transpose(0, 2, 1)
    b = rng.standard_normal(80)
    w_ref = np.array([1.0, 0.5, 2.0])
    cf = cholesky_factor(np.tensordot(w_ref, Ks, axes=1) + 1e-6 * np.eye(80))
    for delta in (0.01, 0.3):
        w = w_ref * (1 + delta * np.array([1.0, -1.0, 0.5]))
        A = np.tensordot(w, Ks, axes=1) + 1e-6 * np.eye(80)
        x = _cg_with_factor(A, b, cf, np.zeros(80), 1e-12, int(np.ceil(_cg_steps_needed(_relative_change(w, w_ref), 1e-12))))
        assert x is not None and np.linalg.norm(b - A @ x) <= 1e-12 * np.linalg.norm(b)
    assert _cg_with_factor(A, b, cf, np.zeros(80), 1e-12, 1) is None
    assert _relative_change(np.array([0.0, 1.0]), np.array([0.0, 1.0])) == 0.0
    assert _relative_change(np.array([0.1, 1.0]), np.array([0.0, 1.0])) == np.inf and _cg_steps_needed(np.inf, 1e-14) == np.inf


def test_l2krrmkl_second_stage_is_the_kernel_ridge_fit_without_refactorising():
    "The fixed point's last dual is KernelRidge's dual at the learned weights; a dual that does not solve it is refitted."
    from sklearn.datasets import make_friedman1
    from sklearn.kernel_ridge import KernelRidge
    X, y = make_friedman1(250, 6, noise=0.5, random_state=2)
    est = L2KRRMKL().fit(X, y)
    K = est.estimator_.X_fit_
    ref = KernelRidge(kernel="precomputed", alpha=est.lam_).fit(K, y - est.y_mean_)
    np.testing.assert_allclose(est.estimator_.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-10 * np.abs(ref.dual_coef_).max())
    assert est.estimator_.n_features_in_ == ref.n_features_in_ == 250
    np.testing.assert_allclose(est.predict(X[:30]), est._combined_test_kernel(X[:30]) @ ref.dual_coef_ + est.y_mean_,
                               rtol=1e-9)
    est.result_.alpha = est.result_.alpha * 1.01                       # no longer the solution: the stage is fitted
    refit = est._fit_second_stage(KernelRidge(kernel="precomputed", alpha=est.lam_), K, y - est.y_mean_)
    np.testing.assert_allclose(refit.dual_coef_, ref.dual_coef_, rtol=1e-12)
