"""GMKL, NLMKL, Lp-norm MKL, IKL and two-layer MKL: fast paths against slow references, certificates, bad input, scikit-learn."""
import cvxpy as cp
import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.baselines import l1_mkl
from mklbook.classic_mkl import (GMKL, IKL, NLMKL, LpMKL, TwoLayerMKL, combine_kernels, gmkl, ikl, lp_mkl, nlmkl,
                                 project_ball, two_layer_mkl)
from mklbook.kernels import Gaussian, KernelBank, Polynomial, stack_quad
from mklbook.solvers import svm_dual

KS = [Gaussian(0.1), Gaussian(1.0)]


# scikit-learn's checks; the classifiers are binary (tag multi_class=False), IKL searches one narrow Gaussian range
@parametrize_with_checks([LpMKL(KS), LpMKL(KS, p=1), GMKL(KS), GMKL(KS, reg="l2"), NLMKL(KS),
                          IKL(families=("gaussian",), tau_range=(0.5, 2.0), max_outer=2), TwoLayerMKL(KS),
                          TwoLayerMKL(KS, p=2, class_weight="balanced")])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _problem(m=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 3))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] + 0.2 * rng.standard_normal(m) > 0, 1.0, -1.0)
    Ks = KernelBank([Gaussian(0.05), Gaussian(0.5), Gaussian(5.0), Polynomial(2)], normalize="trace").fit_transform(X)
    return X, y, Ks * m


def _cvx_dual(Ks, y, C, penalty):
    "max_a 1'a - penalty(t) s.t. t_k >= a'YK_kYa, 0 <= a <= C, y'a = 0: the reference for the MKL duals."
    m = len(y)
    a, t = cp.Variable(m), cp.Variable(len(Ks))
    Ls = [np.linalg.cholesky(K + 1e-10 * np.eye(m)) for K in Ks]
    cons = [a >= 0, a <= C, y @ a == 0] + [t[k] >= cp.sum_squares(Ls[k].T @ cp.multiply(y, a)) for k in range(len(Ks))]
    prob = cp.Problem(cp.Maximize(cp.sum(a) - penalty(t)), cons)
    prob.solve(solver="CLARABEL")
    return prob.value


@pytest.mark.parametrize("p", [1.5, 2.0, 3.0])
def test_lp_mkl_matches_the_cvxpy_dual(p):
    _, y, Ks = _problem()
    r = lp_mkl(Ks, y, p=p, C=1.0, tol=1e-6)
    ref = _cvx_dual(Ks, y, 1.0, lambda t: 0.5 * cp.norm(t, p / (p - 1)))
    assert r.status == "optimal" and r.lower <= r.objective
    assert abs(r.objective - ref) <= 1e-5 * abs(ref)
    assert abs(np.sum(r.weights ** p) - 1) < 1e-9


def test_lp_mkl_p1_agrees_with_l1_mkl_within_the_certificates():
    _, y, Ks = _problem(seed=1)
    a, b = lp_mkl(Ks, y, p=1, tol=1e-5), l1_mkl(Ks, y, tol=1e-5)
    assert a.status == b.status == "optimal"
    assert abs(a.objective - b.objective) <= (a.gap + b.gap) * max(1.0, abs(b.objective))
    plain = lp_mkl(Ks, y, p=1, tol=1e-5, accelerate=False, max_iter=20000)
    assert plain.status == "optimal" and plain.n_iter > a.n_iter         # the over-relaxation pays
    assert abs(plain.objective - a.objective) <= 2e-5 * abs(a.objective)


@pytest.mark.parametrize("reg", ["l1", "l2"])
def test_gmkl_matches_the_cvxpy_dual_and_its_two_solvers_agree(reg):
    _, y, Ks = _problem(seed=2)
    sigma = 0.7
    pen = (lambda t: 0.0 * cp.sum(t)) if reg == "l1" else (lambda t: cp.sum_squares(t) / (8 * sigma))
    m = len(y)
    if reg == "l1":                                   # max 1'a s.t. a'YK_kYa <= 2 sigma
        a = cp.Variable(m)
        Ls = [np.linalg.cholesky(K + 1e-10 * np.eye(m)) for K in Ks]
        cons = [a >= 0, a <= 1.0, y @ a == 0] + [cp.sum_squares(L.T @ cp.multiply(y, a)) <= 2 * sigma for L in Ls]
        ref = cp.Problem(cp.Maximize(cp.sum(a)), cons).solve(solver="CLARABEL")
    else:
        ref = _cvx_dual(Ks, y, 1.0, pen)
    pg = gmkl(Ks, y, sigma=sigma, reg=reg, method="projected-gradient", tol=1e-6, max_iter=3000)
    assert pg.status == "optimal" and abs(pg.objective - ref) <= 2e-5 * abs(ref)
    if reg == "l1":
        cp_ = gmkl(Ks, y, sigma=sigma, reg="l1", method="silp", tol=1e-6)
        assert cp_.status == "optimal" and abs(cp_.objective - ref) <= 2e-5 * abs(ref)
        assert cp_.n_solves < pg.n_solves


@pytest.mark.parametrize("p", [1, 2])
def test_project_ball_matches_cvxpy(p):
    rng = np.random.default_rng(p)
    for _ in range(5):
        v, mu0 = 2 * rng.standard_normal(6), np.abs(rng.standard_normal(6)) * (rng.random(6) > 0.4)
        x = cp.Variable(6)
        prob = cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [x >= 0, cp.norm(x - mu0, p) <= 0.8])
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
        got = project_ball(v, mu0, 0.8, p)
        # the objective is 2-strongly convex: a value within eps of the optimum lies within sqrt(eps) of the projection
        assert np.sum((got - v) ** 2) <= prob.value + 1e-9 and np.abs(got - x.value).max() < 1e-5
        assert np.linalg.norm(got - mu0, p) <= 0.8 * (1 + 1e-12) and (got >= 0).all()


def test_nlmkl_gradient_is_the_derivative_and_the_fit_is_stationary():
    _, y, Ks = _problem(seed=3)
    lam, mu = 0.5, np.array([0.2, 0.5, 0.1, 0.3])
    F = lambda w: float(y @ np.linalg.solve(combine_kernels(Ks, w, "square") + lam * np.eye(len(y)), y))
    alpha = np.linalg.solve(combine_kernels(Ks, mu, "square") + lam * np.eye(len(y)), y)
    L = combine_kernels(Ks, mu)
    grad = -2 * np.array([alpha @ (K * L) @ alpha for K in Ks])
    fd = np.array([(F(mu + 1e-6 * e) - F(mu - 1e-6 * e)) / 2e-6 for e in np.eye(4)])
    assert np.abs(grad - fd).max() < 1e-5 * np.abs(fd).max()
    for p in (1, 2):
        r = nlmkl(Ks, y, lam=lam, p=p, tol=1e-7)
        assert r.status == "stationary point" and r.objective <= F(project_ball(np.full(4, 1.0), 0 * mu, 1.0, p))
        assert abs(r.objective - F(r.weights)) < 1e-9 * r.objective


def test_ikl_on_a_single_width_is_l1_mkl_on_the_same_kernels():
    X, y, _ = _problem(seed=4)
    start = [Polynomial(2), Gaussian(5.0)]
    r = ikl(X, y, families=("gaussian",), tau_range=(0.5, 0.5), kernels=start, master_tol=1e-7, tol=1e-6)
    Ks = KernelBank(start + [Gaussian(0.5)], normalize="trace").fit_transform(X) * len(y)
    ref = l1_mkl(Ks, y, tol=1e-7)
    assert r.status == "optimal"                  # a one-point range of tau: the sup over it is exact
    assert abs(r.objective - ref.objective) <= 1e-5 * abs(ref.objective)


def _two_layer_value(Ks, y, mu, C=1.0):
    "The slow reference: the SVM dual value on exp(sum mu_k K_k), one certified solve."
    return svm_dual(combine_kernels(Ks, mu, "exp"), y, C=C, tol=1e-11, psd="trusted", warn=False).objective


def test_two_layer_gradient_is_the_derivative_and_nothing_on_a_grid_is_lower():
    _, y, Ks = _problem(seed=5)
    mu = np.array([0.2, 0.5, 0.1, 0.3])
    K = combine_kernels(Ks, mu, "exp")
    assert np.linalg.eigvalsh(K).min() > -1e-9 * np.linalg.eigvalsh(K).max()        # a kernel (Schur)
    v = svm_dual(K, y, tol=1e-12, psd="trusted").coef
    grad = np.array([-0.5 * v @ (K * Kk) @ v for Kk in Ks])
    fd = np.array([(_two_layer_value(Ks, y, mu + 1e-5 * e) - _two_layer_value(Ks, y, mu - 1e-5 * e)) / 2e-5
                   for e in np.eye(4)])
    assert np.abs(grad - fd).max() < 1e-6 * np.abs(fd).max() and (grad <= 0).all()
    n, R = 30, 1.5
    grid = np.array([[i, j, n - i - j] for i in range(n + 1) for j in range(n + 1 - i)]) * R / n
    for p, K3 in ((1, Ks[:3]), (1, Ks[1:])):
        r = two_layer_mkl(K3, y, radius=R, p=p, tol=1e-6)
        vals = np.array([_two_layer_value(K3, y, g) for g in grid])
        assert r.status == "stationary point" and abs(r.weights.sum() - R) < 1e-9      # on the sphere
        assert r.objective <= vals.min() + 1e-9 * abs(vals.min())
        assert abs(r.objective - _two_layer_value(K3, y, r.weights)) <= 1e-7 * abs(r.objective)
    r2 = two_layer_mkl(Ks, y, p=2, tol=1e-6)
    assert r2.status == "stationary point" and abs(np.linalg.norm(r2.weights) - 1) < 1e-9


def test_two_layer_class_costs_are_per_sample_bounds():
    X, y, Ks = _problem(seed=6)
    Cs = np.where(y > 0, 1.0, 4.0)
    r = two_layer_mkl(Ks, y, C=Cs, tol=1e-6)
    assert r.status == "stationary point" and (r.alpha <= Cs + 1e-9).all() and (r.alpha[y < 0] > 1 + 1e-6).any()
    est = TwoLayerMKL([Gaussian(0.5), Polynomial(2)], class_weight={-1.0: 4.0, 1.0: 1.0}).fit(X, y)
    plain = TwoLayerMKL([Gaussian(0.5), Polynomial(2)]).fit(X, y)
    assert (est.predict(X) > 0).sum() <= (plain.predict(X) > 0).sum()      # false positives cost more: fewer positives


def test_two_layer_estimator_bounds_the_exponent_on_raw_features():
    "A polynomial kernel on raw pixels has entries in the tens at trace m; the estimator scales to unit diagonal."
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, (3, 8))
    X, y = X[keep][:150], y[keep][:150]
    est = TwoLayerMKL([Polynomial(2), Gaussian(0.01)], radius=2.0).fit(X, y)
    assert est.result_.status == "stationary point" and est.score(X, y) > 0.9


def test_bad_input_gets_a_clear_error_and_inputs_are_not_modified():
    _, y, Ks = _problem()
    K0 = Ks.copy()
    with pytest.raises(ValueError, match="psd='allow' is"):
        lp_mkl(Ks, y, psd="allow")
    with pytest.raises(ValueError, match=r"p must be a number in \[1, inf\)"):
        lp_mkl(Ks, y, p=0.5)
    with pytest.raises(ValueError, match="reg must be"):
        gmkl(Ks, y, reg="l3")
    with pytest.raises(ValueError, match="l1 regulariser only"):
        gmkl(Ks, y, reg="l2", method="silp")
    with pytest.raises(ValueError, match="p must be one of"):
        nlmkl(Ks, y, p=3)
    with pytest.raises(ValueError, match="positive"):
        nlmkl(Ks, y, lam=0)
    with pytest.raises(ValueError, match="combination must be"):
        combine_kernels(Ks, np.ones(4), "cube")
    with pytest.raises(ValueError, match="no usable precision"):
        two_layer_mkl(Ks, y, radius=1e4)
    with pytest.raises(ValueError, match="C"):
        two_layer_mkl(Ks, y, C=np.ones(3))
    with pytest.raises(ValueError, match="psd='allow' is not"):
        two_layer_mkl(Ks, y, psd="allow")
    with pytest.raises(ValueError, match="not a boolean"):
        two_layer_mkl(Ks, y, p=True)
    from mklbook.kernels import FeatureStack
    with pytest.raises(TypeError, match="not a FeatureStack"):
        two_layer_mkl(FeatureStack(np.eye(len(y))[:, :4]), y)
    r = two_layer_mkl(list(Ks), y)                        # a list of matrices is a stack too
    assert r.status == "stationary point"
    with pytest.raises(ValueError, match="binary"):
        TwoLayerMKL(KS).fit(np.random.default_rng(0).standard_normal((30, 2)), np.arange(30) % 3)
    with pytest.raises(ValueError, match="binary"):
        LpMKL(KS).fit(np.random.default_rng(0).standard_normal((30, 2)), np.arange(30) % 3)
    np.testing.assert_array_equal(Ks, K0)


def test_defaults_are_sensible_on_raw_unscaled_features():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import cross_val_score
    from sklearn.svm import SVC
    from mklbook.benchmark import RegressionClassifier
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[::2], y[::2]
    svc = cross_val_score(SVC(), X, y, cv=3).mean()
    for est in (LpMKL(), GMKL(), RegressionClassifier(NLMKL()), TwoLayerMKL()):
        assert cross_val_score(est, X, y, cv=3).mean() >= svc
