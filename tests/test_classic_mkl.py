import warnings
"""GMKL, NLMKL, Lp-norm MKL, IKL and two-layer MKL: fast paths against slow references, certificates, bad input, scikit-learn."""
import cvxpy as cp
import numpy as np
from sklearn.exceptions import ConvergenceWarning
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.baselines import l1_mkl
from sklearn.utils._param_validation import InvalidParameterError

from mklbook.classic_mkl import (GMKL, IKL, NLMKL, LpMKL, TwoLayerMKL, _combine_into, _project_polyhedron,
                                 _SVMOracle, _svm_hessian, combine_kernels, gmkl, ikl, lp_mkl, lp_mkl_square, nlmkl,
                                 project_ball, two_layer_mkl)
from mklbook.kernels import Gaussian, KernelBank, Polynomial, stack_quad
from mklbook.solvers import ASSUMED, svm_dual

KS = [Gaussian(0.1), Gaussian(1.0)]


# scikit-learn's checks; the classifiers are binary (tag multi_class=False), IKL searches one narrow Gaussian range
@parametrize_with_checks([LpMKL(KS), LpMKL(KS, q=1), LpMKL(KS, memory_budget=1.0), GMKL(KS), GMKL(KS, memory_budget=1.0), GMKL(KS, reg="l2"), NLMKL(KS),
                          IKL(families=("gaussian",), gamma_range=(0.5, 2.0), max_outer=2), TwoLayerMKL(KS),
                          TwoLayerMKL(KS, q=2, class_weight="balanced")])
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
    r = lp_mkl(Ks, y, q=p, C=1.0, tol=1e-6)
    ref = _cvx_dual(Ks, y, 1.0, lambda t: 0.5 * cp.norm(t, p / (p - 1)))
    assert r.status == "optimal" and r.lower <= r.objective
    assert abs(r.objective - ref) <= 1e-5 * abs(ref)
    assert abs(np.sum(r.weights ** p) - 1) < 1e-9


def test_lp_mkl_p1_agrees_with_l1_mkl_within_the_certificates():
    _, y, Ks = _problem(seed=1)
    a, b = lp_mkl(Ks, y, q=1, tol=1e-5), l1_mkl(Ks, y, tol=1e-5)
    assert a.status == b.status == "optimal"
    assert abs(a.objective - b.objective) <= (a.gap + b.gap) * max(1.0, abs(b.objective))
    plain = lp_mkl(Ks, y, q=1, tol=1e-5, accelerate=False, max_iter=20000)
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
        lv = gmkl(Ks, y, sigma=sigma, reg="l1", tol=1e-6)                       # "auto": the level method
        assert lv.solver == "gmkl(l1, level)" and lv.status == "optimal" and abs(lv.objective - ref) <= 2e-5 * abs(ref)
        assert lv.lower <= ref * (1 + 1e-7) and lv.objective >= ref * (1 - 1e-7)   # the bounds bracket cvxpy's value
        assert lv.n_solves < cp_.n_solves and lv.machine_gap <= 1e-9


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
        r = nlmkl(Ks, y, lam=lam, q=p, tol=1e-7)
        assert r.status == "stationary point" and r.objective <= F(project_ball(np.full(4, 1.0), 0 * mu, 1.0, p))
        assert abs(r.objective - F(r.weights)) < 1e-9 * r.objective


def test_ikl_on_a_single_width_is_l1_mkl_on_the_same_kernels():
    X, y, _ = _problem(seed=4)
    start = [Polynomial(2), Gaussian(5.0)]
    r = ikl(X, y, families=("gaussian",), gamma_range=(0.5, 0.5), kernels=start, master_tol=1e-7, tol=1e-6)
    Ks = KernelBank(start + [Gaussian(0.5)], normalize="trace").fit_transform(X) * len(y)
    ref = l1_mkl(Ks, y, tol=1e-7)
    assert r.status == "optimal"                  # a one-point range of gamma: the sup over it is exact
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
        r = two_layer_mkl(K3, y, radius=R, q=p, tol=1e-6)
        vals = np.array([_two_layer_value(K3, y, g) for g in grid])
        assert r.status == "stationary point" and abs(r.weights.sum() - R) < 1e-9      # on the sphere
        assert r.objective <= vals.min() + 1e-9 * abs(vals.min())
        assert abs(r.objective - _two_layer_value(K3, y, r.weights)) <= 1e-7 * abs(r.objective)
    r2 = two_layer_mkl(Ks, y, q=2, tol=1e-6)
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
    with pytest.raises(ValueError, match=r"q must be a number in \[1, inf\)"):
        lp_mkl(Ks, y, q=0.5)
    with pytest.raises(ValueError, match="reg must be"):
        gmkl(Ks, y, reg="l3")
    with pytest.raises(ValueError, match="l1 regulariser only"):
        gmkl(Ks, y, reg="l2", method="silp")
    with pytest.raises(ValueError, match="q must be one of"):
        nlmkl(Ks, y, q=3)
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
        two_layer_mkl(Ks, y, q=True)
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


# ---- the fast paths against their obvious references ----------------------------------------------------------------

def test_in_place_combination_and_quadratic_forms_match_the_obvious_formulas():
    _, y, Ks = _problem(m=40, seed=7)
    rng = np.random.default_rng(0)
    for w in (rng.random(4), np.array([0.0, 0.7, 0.0, 0.0]), np.array([0.3, 0.0, 0.2, 0.0]), np.zeros(4)):
        ref = np.tensordot(w, Ks, axes=1)
        np.testing.assert_allclose(_combine_into(np.empty((40, 40)), Ks, w), ref, rtol=1e-13, atol=1e-13)
        Kt = Ks[:, :15]                                       # a non-contiguous (p, n, m) slice: the loop path
        np.testing.assert_allclose(_combine_into(np.empty((15, 40)), Kt, w), ref[:15], rtol=1e-13, atol=1e-13)
    orc = _SVMOracle(Ks, y, 1.0, "exp")
    w, c = np.array([0.2, 0.5, 0.1, 0.3]), rng.standard_normal(40)
    K = np.exp(np.tensordot(w, Ks, axes=1))
    np.testing.assert_allclose(orc.kernel(w), K, rtol=1e-13)
    np.testing.assert_allclose(orc.quad(c), np.maximum([c @ Kk @ c for Kk in Ks], 0), rtol=1e-12)
    np.testing.assert_allclose(orc.hadamard_quad(c), [c @ (K * Kk) @ c for Kk in Ks], rtol=1e-11)


def test_svm_hessian_is_the_derivative_of_the_gradient():
    "GMKL's Newton steps use H = d^2 J / dd^2 on the SVM's free set: against central differences of -q(alpha*)/2."
    _, y, Ks = _problem(seed=14)
    orc = _SVMOracle(Ks, y, 1.0)
    d, h = np.array([0.4, 0.3, 0.2, 0.1]), 1e-6
    grad = lambda w: -0.5 * orc.quad(orc.solve(w, 1e-13).coef)
    fd = np.array([(grad(d + h * e) - grad(d - h * e)) / (2 * h) for e in np.eye(4)]).T
    H = _svm_hessian(orc, orc.solve(d, 1e-13))
    assert np.abs(H - fd).max() <= 1e-4 * np.abs(fd).max() and np.linalg.eigvalsh(H).min() >= -1e-9 * np.abs(H).max()


def test_project_polyhedron_matches_cvxpy_and_says_when_it_is_empty():
    rng = np.random.default_rng(3)
    for _ in range(5):
        G, h, c = rng.standard_normal((9, 5)), rng.random(9), 3 * rng.standard_normal(5)
        x = cp.Variable(5)
        cp.Problem(cp.Minimize(cp.sum_squares(x - c)), [G @ x <= h]).solve(solver="CLARABEL", tol_gap_abs=1e-10,
                                                                            tol_gap_rel=1e-10, tol_feas=1e-10)
        got = _project_polyhedron(c, G, h)
        assert got is not None and np.abs(got - x.value).max() < 1e-5 and (G @ got - h).max() < 1e-8
    assert _project_polyhedron(np.zeros(2), np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([-1.0, -1.0])) is None


@pytest.mark.parametrize("sigma", [1e-3, 1.0, 10.0])
def test_gmkl_level_method_certifies_in_every_regime_and_agrees_with_the_other_solvers(sigma):
    "The regime where plain cutting planes stall (small sigma: a huge box) is where the level method must not."
    _, y, Ks = _problem(seed=8)
    lv = gmkl(Ks, y, sigma=sigma, tol=1e-5)
    pg = gmkl(Ks, y, sigma=sigma, method="projected-gradient", tol=1e-5, max_iter=3000)
    assert lv.status == pg.status == "optimal" and lv.n_solves <= 30
    assert abs(lv.objective - pg.objective) <= (lv.gap + pg.gap) * max(1.0, abs(pg.objective))
    silp = gmkl(Ks, y, sigma=sigma, method="silp", tol=1e-5, max_iter=200, warn=False)
    if silp.status == "optimal":
        assert abs(lv.objective - silp.objective) <= (lv.gap + silp.gap) * max(1.0, abs(silp.objective))
    else:
        assert sigma < 1 and silp.status == "max_iter"      # the measured regime: plain cutting planes stall


def test_inexact_inner_solves_keep_the_certificate_and_the_machine_is_certified():
    "Early SVM solves stop at libsvm's accuracy; the bounds stay valid and the machine returned meets svm_tol."
    _, y, Ks = _problem(seed=9)
    ref = _cvx_dual(Ks, y, 1.0, lambda t: 0.5 * cp.norm(t, 2))
    r = lp_mkl(Ks, y, q=2, tol=1e-6)
    assert r.lower <= ref * (1 + 1e-7) and r.objective >= ref * (1 - 1e-7) and r.machine_gap <= 1e-9
    exact = svm_dual(combine_kernels(Ks, r.weights), y, tol=1e-12, psd="trusted")
    assert abs(exact.objective - r.objective) <= 1e-6 * abs(ref)
    np.testing.assert_allclose(r.coef, exact.coef, atol=1e-6)


def test_two_layer_quasi_newton_and_projected_gradient_reach_the_same_stationary_point():
    _, y, Ks = _problem(seed=5)
    qn = two_layer_mkl(Ks, y, radius=1.5, tol=1e-7)
    pg = two_layer_mkl(Ks, y, radius=1.5, tol=1e-7, method="projected-gradient", max_iter=2000)
    assert qn.status == pg.status == "stationary point" and "quasi-newton" in qn.solver
    assert abs(qn.objective - pg.objective) <= 1e-6 * abs(pg.objective) and np.abs(qn.weights - pg.weights).max() < 1e-3
    assert qn.n_solves < pg.n_solves


@pytest.mark.parametrize("name", ["digits", "wine"])
def test_two_layer_quasi_newton_keeps_its_iterates_in_the_ball(name):
    """The head-to-head's last split of digits and wine, one-vs-rest at C = 1: the least-distance program of the model
    step once left the L1 ball by 4e-4 (its tolerance is relative to the quasi-Newton metric), the projected gradient
    from that infeasible point was no descent direction, and the search stalled for 200 iterations (3000 SVMs)."""
    from mklbook.benchmark import benchmark_data, benchmark_methods
    from mklbook.protocol import RandomSplits
    X, y = benchmark_data(name, 400, 0)
    sp = list(RandomSplits(5, test_size=0.3, inner_cv=3, random_state=0).splits(X, y))[4]
    est = benchmark_methods(X.shape[1], len(np.unique(y)), ["2LMKL"])["2LMKL"][0].set_params(model__estimator__C=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(X[sp.train], y[sp.train])
    for machine in est[-1].estimators_:
        r = machine.result_
        assert r.status == "stationary point" and r.n_iter < 50
        assert r.weights.min() >= 0 and r.weights.sum() <= machine.radius * (1 + 1e-12)


# ---- the estimators' model is the certified machine ------------------------------------------------------------------

@pytest.mark.parametrize("est", [LpMKL(KS), GMKL(KS), TwoLayerMKL(KS)])
def test_binary_estimators_predict_with_the_certified_machine(est):
    X, y, _ = _problem(seed=10)
    est.fit(X[:45], y[:45])
    r = est.result_
    Kt = est.bank_.transform(X[45:])
    Kt = Kt * (est.weights_ * est.kernel_scale_ / np.where(r.weights > 0, r.weights, 1))[:, None, None]
    np.testing.assert_allclose(est.decision_function(X[45:]), r.decision_function(Kt), rtol=1e-12, atol=1e-12)
    assert r.machine_gap <= 1e-9 and not hasattr(est, "estimator_")
    np.testing.assert_array_equal(est.predict(X[45:]), np.where(est.decision_function(X[45:]) > 0, 1.0, -1.0))


# ---- bad input: a clear error that names the problem and the fix -----------------------------------------------------

@pytest.mark.parametrize("Est", [LpMKL, GMKL, NLMKL, TwoLayerMKL])
def test_a_string_boolean_and_bad_hyper_parameters_are_refused_by_declaration(Est):
    X, y, _ = _problem(m=30, seed=11)
    msg = f"The 'center' parameter of {Est.__name__} must be an instance of 'bool'"
    with pytest.raises(InvalidParameterError, match=msg):
        Est(KS, center="False").fit(X, y)
    bad = {LpMKL: [("q", 0.5), ("q", np.inf), ("C", -1)], GMKL: [("sigma", 0), ("reg", "l3"), ("method", "newton")],
           NLMKL: [("q", 3), ("lam", 0), ("Lambda", -1.0)],
           TwoLayerMKL: [("radius", 0), ("q", 3), ("class_weight", "even")]}[Est]
    for name, value in bad:
        with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of {Est.__name__} must be"):
            Est(KS, **{name: value}).fit(X, y)


def test_project_ball_refuses_what_has_no_projection():
    v, z = np.ones(3), np.zeros(3)
    for args, msg in [((v, z, -1.0, 1), "Lambda must be a positive"), ((v, z, 0.0, 2), "Lambda must be a positive"),
                      ((v, -np.ones(3), 1.0, 2), "mu0 has negative entries"), ((np.r_[1.0, np.nan, 0], z, 1.0, 2), "v"),
                      ((v, z, 1.0, 3), r"q must be one of \(1, 2\)"), ((v, z, 1.0, True), "not a boolean"),
                      ((v, np.zeros(2), 1.0, 2), "mu0 must be a vector of 3"), ((np.ones((2, 2)), z, 1.0, 2), "1-D")]:
        with pytest.raises(ValueError, match=msg):
            project_ball(*args)
    with pytest.raises(ValueError, match="rescale v and Lambda"):
        project_ball(np.full(3, 1e308), z, 1e-300, 2)
    np.testing.assert_allclose(project_ball(np.full(3, 1e6), z, 1e-3, 2), np.full(3, 1e-3 / np.sqrt(3)), rtol=1e-12)


def test_combine_kernels_refuses_an_exponential_without_precision_and_a_single_matrix():
    _, _, Ks = _problem(m=20)
    with pytest.raises(ValueError, match="overflow.*Scale the kernels down"):
        combine_kernels(Ks * 1e200, np.ones(4), "exp")
    with pytest.raises(ValueError, match="no usable precision"):
        combine_kernels(Ks, np.full(4, 100.0), "exp")
    with pytest.raises(ValueError, match=r"one 2-D matrix .* Ks\[None\]"):
        combine_kernels(Ks[0], np.ones(20))
    np.testing.assert_allclose(combine_kernels(Ks[:1], [2.0]), 2 * Ks[0])
    with pytest.raises(ValueError, match="NaN"):
        combine_kernels(np.where(np.eye(20) > 0, np.nan, Ks), np.ones(4))


def test_psd_modes_allow_refused_and_assume_labelled():
    _, y, Ks = _problem(seed=12)
    Kneg = Ks.copy()
    Kneg[0] -= 3 * np.eye(len(y)) * np.abs(Ks[0]).max()              # indefinite
    for f in (gmkl, lp_mkl, nlmkl, two_layer_mkl):
        with pytest.raises(ValueError, match="psd='allow' is not available.*'assume'"):
            f(Kneg, y, psd="allow")
    with pytest.raises(ValueError, match="not positive semi-definite"):
        gmkl(Kneg, y)
    for f in (gmkl, lp_mkl):
        r = f(Ks, y, psd="assume", tol=1e-5)
        assert r.status == ASSUMED and r.converged and "assume" in r.message
        assert f(Ks, y, psd="full", tol=1e-5).status == "optimal"


def test_a_kernel_that_memorises_is_warned_about():
    "Gaussian(1.0) on raw breast-cancer features is I on the sample: the machine memorises and predicts one class."
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[::4], y[::4]
    for Est in (LpMKL, GMKL, TwoLayerMKL, NLMKL):
        with pytest.warns(RuntimeWarning, match="memorise the training set.*standardise the features"):
            Est([Gaussian(1.0)]).fit(X, y)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for Est in (LpMKL, GMKL, TwoLayerMKL):
            Est().fit(X, y)                                    # the default bank adapts: no warning
    with pytest.warns(RuntimeWarning, match="predicts one class on its own training set.*sigma"):
        GMKL(KS, sigma=1e4).fit(X[:, :3], y)                  # a huge regulariser switches every kernel off


def test_targets_a_method_cannot_learn_are_refused_with_the_alternative():
    X, y, _ = _problem(m=30, seed=13)
    for Est in (LpMKL, GMKL, TwoLayerMKL):
        with pytest.raises(ValueError, match="binary classifier, but y is continuous.*NLMKL"):
            Est(KS).fit(X, X[:, 0])
        with pytest.raises(ValueError, match="OneVsRestClassifier"):
            Est(KS).fit(X, np.arange(30) % 3)
    with pytest.raises(ValueError, match=r"NLMKL is a regressor.*RegressionClassifier\(NLMKL\(\)\)"):
        NLMKL(KS).fit(X, np.where(y > 0, "yes", "no"))
    assert NLMKL(KS).fit(X, np.array([str(v) for v in X[:, 0]])).score(X, X[:, 0]) > 0   # numeric strings are numbers


def test_nlmkl_model_is_the_kernel_ridge_fit_at_the_learned_weights():
    "No second kernel ridge is trained: the solver's alpha at the learned weights is the one KRR would find."
    from sklearn.kernel_ridge import KernelRidge
    X, _, _ = _problem(seed=15)
    t = X[:, 0] * X[:, 1] + np.sin(X[:, 2])
    est = NLMKL(KS, lam=0.3).fit(X[:45], t[:45])
    mu = est.weights_ * est.kernel_scale_
    K, Kt = (combine_kernels(est.bank_.transform(Z), mu, "square") for Z in (X[:45], X[45:]))
    ref = KernelRidge(kernel="precomputed", alpha=0.3).fit(K, t[:45] - t[:45].mean())
    np.testing.assert_allclose(est.predict(X[45:]), ref.predict(Kt) + t[:45].mean(), rtol=1e-7, atol=1e-9)
    assert not hasattr(est, "estimator_") and est.result_.status == "stationary point"


def test_lp_mkl_and_gmkl_take_a_feature_stack_and_agree_with_its_explicit_stack():
    from mklbook.kernels import FeatureStack
    rng = np.random.default_rng(16)
    Phi = rng.standard_normal((50, 6))
    y = np.sign(Phi[:, 0] + 0.3 * rng.standard_normal(50))
    fs = FeatureStack(Phi, [np.arange(2), np.arange(2, 4), np.arange(4, 6)])
    for f in (lp_mkl, gmkl):
        a, b = f(fs, y, tol=1e-6), f(fs.toarray(), y, tol=1e-6)
        assert a.status == b.status == "optimal" and abs(a.objective - b.objective) <= 1e-6 * abs(b.objective)


def test_decision_function_names_a_wrong_test_stack():
    "A test stack with the wrong number of kernels or columns is named as such, not blamed on the weights."
    _, y, Ks = _problem(seed=3)
    r = lp_mkl(Ks, y)
    with pytest.raises(ValueError, match=f"Ks_test has {len(Ks) + 1} kernels but the model was trained on {len(Ks)}"):
        r.decision_function(np.ones((len(Ks) + 1, 5, len(y))))
    with pytest.raises(ValueError, match="columns but the training set has"):
        r.decision_function(np.ones((len(Ks), 5, len(y) + 2)))
    np.testing.assert_allclose(r.decision_function(list(Ks[:, :5])), r.decision_function(Ks[:, :5]))


def _feature_problem(m=70, seed=2):
    "Three rank-8 kernels given by features, and +-1 labels."
    from mklbook.kernels import FeatureStack
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 3))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0, 1.0, -1.0)
    Phi = np.hstack([np.cos(X @ rng.standard_normal((3, 8)) * s + rng.uniform(0, 6, 8)) for s in (0.3, 1.0, 3.0)])
    return FeatureStack(Phi, [np.arange(8 * k, 8 * k + 8) for k in range(3)]), y


@pytest.mark.parametrize("p", [1.0, 1.5, 2.0, 4.0])
def test_lp_mkl_square_in_feature_space_is_the_explicit_stack_solution_and_cvxpy_is_inside_its_interval(p):
    FS, y = _feature_problem()
    Phi0 = FS.Phi.copy()
    fast, ref = lp_mkl_square(FS, y, q=p, tol=1e-9), lp_mkl_square(FS.toarray(), y, q=p, tol=1e-9)
    assert fast.status == ref.status == "optimal" and np.array_equal(FS.Phi, Phi0)
    assert abs(fast.objective - ref.objective) <= 1e-8 * ref.objective
    np.testing.assert_allclose(fast.weights, ref.weights, atol=1e-6)
    np.testing.assert_allclose(fast.decision_function(FS.toarray()), ref.decision_function(FS.toarray()), atol=1e-6)
    assert abs(np.sum(fast.weights ** p) - 1) < 1e-9
    m = len(y)
    c, t = cp.Variable(m), cp.Variable(3)
    pen = cp.max(t) if p == 1 else cp.norm(t, p / (p - 1))
    prob = cp.Problem(cp.Maximize(y @ c - cp.sum_squares(c) / 2 - pen / 2),      # c'K_k c = ||Phi_k' c||^2
                      [cp.sum(c) == 0] + [t[k] >= cp.sum_squares(FS.Phi[:, b].T @ c) for k, b in enumerate(FS.blocks)])
    prob.solve(solver="CLARABEL")
    assert fast.lower - 1e-6 <= prob.value <= fast.objective + 1e-6 * abs(prob.value)


def test_lp_mkl_square_refuses_what_it_cannot_solve():
    FS, y = _feature_problem()
    with pytest.raises(ValueError, match="psd='allow' is not available"):
        lp_mkl_square(FS.toarray(), y, psd="allow")
    with pytest.raises(ValueError, match="q must be a number in"):
        lp_mkl_square(FS, y, q=0.5)
    with pytest.raises(ValueError, match="targets"):
        lp_mkl_square(FS, y[:-1])
    with pytest.warns(Warning, match="stopped|max_iter|gap"):
        r = lp_mkl_square(FS, y, q=1, tol=1e-12, max_iter=2)
    assert r.status == "max_iter" and r.lower <= r.objective


@pytest.mark.parametrize("Est", ["LpMKL", "L1MKL"])
def test_past_the_memory_budget_the_estimator_switches_to_low_rank_and_stays_close_to_exact(Est):
    from sklearn.base import clone
    from sklearn.datasets import make_classification
    import pickle
    from mklbook.baselines import L1MKL
    E = {"LpMKL": LpMKL, "L1MKL": L1MKL}[Est]
    X, y = make_classification(600, 10, n_informative=5, random_state=0)
    X = X * np.r_[100.0, np.ones(9)]                       # raw, unscaled features
    Xtr, ytr, Xte, yte = X[:400], y[:400], X[400:], y[400:]
    exact, low = E().fit(Xtr, ytr), E(memory_budget=1e6).fit(Xtr, ytr)
    assert exact.low_rank_ is None and low.low_rank_ is not None
    assert low.result_.status == "optimal" and low.result_.lower <= low.result_.objective
    assert abs(low.weights_.sum() - 1) < 1e-12 and (low.weights_ >= 0).all()
    assert low.score(Xte, yte) >= exact.score(Xte, yte) - 0.05
    assert set(low.predict(Xte)) <= set(ytr) and low.decision_function(Xte).shape == (200,)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(low)).predict(Xte), low.predict(Xte))
    assert clone(low).get_params()["memory_budget"] == 1e6
    with pytest.raises(ValueError, match="features"):
        low.predict(Xte[:, :5])
    with pytest.raises(InvalidParameterError, match="memory_budget"):
        E(memory_budget=-1).fit(Xtr, ytr)


@pytest.mark.parametrize("reg", ["l1", "l2"])
def test_gmkl_past_the_memory_budget_is_the_square_loss_gmkl_and_its_bounds_hold_the_cvxpy_optimum(reg):
    "150 rows, fewer than the bank's 200 directions per kernel: the low-rank path solves the square-loss GMKL exactly."
    from sklearn.datasets import make_classification
    X, y = make_classification(150, 6, random_state=0)
    low = GMKL(reg=reg, memory_budget=1.0, tol=1e-6, max_iter=5000).fit(X, y)
    assert low.low_rank_ is not None and low.result_.status == "optimal"
    s = np.where(y == low.classes_[1], 1.0, -1.0)
    Ks = KernelBank(None, normalize="trace", center=True).fit_transform(X)
    Ks *= (150 / np.einsum("kii->k", Ks))[:, None, None]
    Ls = []
    for K in Ks:
        w, V = np.linalg.eigh(K)
        Ls.append(V * np.sqrt(np.clip(w, 0, None)))
    c = cp.Variable(150)
    quads = [cp.sum_squares(L.T @ c) for L in Ls]
    if reg == "l1":               # max y'c - |c|^2/2C  s.t.  c'K_k c <= 2 sigma, 1'c = 0  (C = sigma = 1)
        prob = cp.Problem(cp.Maximize(s @ c - cp.sum_squares(c) / 2), [cp.sum(c) == 0] + [q <= 2 for q in quads])
    else:                         # max y'c - |c|^2/2C - sum_k (c'K_k c)^2 / (8 sigma)
        t = cp.Variable(len(Ls))
        prob = cp.Problem(cp.Maximize(s @ c - cp.sum_squares(c) / 2 - cp.sum_squares(t) / 8),
                          [cp.sum(c) == 0] + [t[k] >= quads[k] for k in range(len(Ls))])
    prob.solve(solver="CLARABEL")
    r = low.result_
    assert r.lower - 1e-5 * abs(prob.value) <= prob.value <= r.objective + 1e-5 * abs(prob.value), (r.lower, prob.value, r.objective)
    Xt, yt = make_classification(2000, 20, n_informative=8, random_state=1)
    exact, fast = GMKL(reg=reg).fit(Xt[:1200], yt[:1200]), GMKL(reg=reg, memory_budget=1.0).fit(Xt[:1200], yt[:1200])
    assert fast.score(Xt[1200:], yt[1200:]) >= exact.score(Xt[1200:], yt[1200:]) - 0.03


def test_only_the_library_s_own_calls_skip_the_symmetry_check():
    "psd='trusted' (an estimator's own bank) skips the symmetry probes; 'check' and 'assume' still refuse an asymmetric stack."
    from mklbook.pep import fkl
    Ks = np.stack([np.eye(20), np.eye(20)])
    Ks[1, 0, 1] = 0.5
    y = np.r_[np.ones(10), -np.ones(10)]
    for solve in (gmkl, fkl):
        for psd in ("check", "assume"):
            with pytest.raises(ValueError, match="not symmetric"):
                solve(Ks, y, psd=psd)


def test_gmkl_oracle_reuses_its_last_stack_product_only_for_the_same_coefficients():
    "quad and the Newton Hessian share one pass over the stack per SVM; other coefficients are computed afresh."
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((3, 30, 30))
    Ks = Z @ Z.transpose(0, 2, 1)
    orc = _SVMOracle(Ks, np.r_[np.ones(15), -np.ones(15)], 1.0)
    c = rng.standard_normal(30)
    V = orc.kc(c)
    assert orc.kc(c.copy()) is V and not V.flags.writeable             # the same values: the kept product, read-only
    np.testing.assert_allclose(V, Ks @ c, rtol=1e-12)
    np.testing.assert_allclose(orc.quad(c), np.maximum(np.einsum("kij,i,j->k", Ks, c, c), 0), rtol=1e-10)
    c2 = c.copy()
    c2[0] += 1.0
    V2 = orc.kc(c2)
    assert V2 is not V
    np.testing.assert_allclose(V2, Ks @ c2, rtol=1e-12)
