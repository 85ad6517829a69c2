"""M3K (Cortes et al. 2013): margin LP, SILP vs QCLP, the two extremes of zeta0, bad input, scikit-learn compatibility."""
import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.kernels import Gaussian, KernelBank, gaussian_bank
from mklbook.m3k import (PAPER_SETTINGS, M3KClassifier, eta_coefficients, max_kernel_margin, max_over_margin_set, solve_m3k,
                         theorem1_bound)
from mklbook.m3k_experiments import UniformCSClassifier
from mklbook.solvers import crammer_singer_dual


def _problem(m=36, seed=0, c=3):
    rng = np.random.default_rng(seed)
    y = np.arange(m) % c
    X = rng.standard_normal((c, 4))[y] + rng.standard_normal((m, 4))
    Ks = KernelBank(gaussian_bank([0.05, 0.2, 1.0, 4.0]), normalize="diagonal", center=True).fit_transform(X)
    return Ks, y


# All of scikit-learn's checks apply (binary and multi-class); no exception is needed.
@parametrize_with_checks([M3KClassifier([Gaussian(0.1), Gaussian(1.0)]), UniformCSClassifier([Gaussian(0.1), Gaussian(1.0)])])
def test_sklearn_compatible(estimator, check):
    check(estimator)





def test_eta_shape_and_zero_own_column_inputs_untouched():
    Ks, y = _problem()
    K0, y0 = Ks.copy(), y.copy()
    E = eta_coefficients(Ks, y)
    assert E.shape == (4, 36, 3)
    assert np.all(E[:, np.arange(36), y] == 0)
    solve_m3k(Ks, y)
    np.testing.assert_array_equal(Ks, K0)
    np.testing.assert_array_equal(y, y0)



def test_bad_input():
    Ks, y = _problem()
    with pytest.raises(ValueError, match="single class"):
        solve_m3k(Ks, np.zeros(36))
    with pytest.raises(ValueError, match="C must be"):
        solve_m3k(Ks, y, C=0.0)
    with pytest.raises(ValueError, match="zeta0 must be"):
        solve_m3k(Ks, y, zeta0="min")
    with pytest.raises(ValueError, match="q must be"):
        max_kernel_margin(Ks, y, q=3)
    bad = Ks.copy()
    bad[1, 2, 3] = np.inf
    with pytest.raises(ValueError, match="NaN or inf"):
        solve_m3k(bad, y)
    with pytest.raises(ValueError, match="labels"):
        solve_m3k(Ks, y[:-1])
    with pytest.raises(ValueError, match="not symmetric"):
        solve_m3k(Ks + np.triu(np.ones(36), 1)[None], y)
    with pytest.raises(ValueError, match="relative=True"):
        M3KClassifier(zeta0=2.0, relative=True).fit(np.random.default_rng(0).standard_normal((20, 2)), np.arange(20) % 2)
    Xr, yr = np.random.default_rng(0).standard_normal((30, 2)), np.arange(30) % 3
    for rel in (False, True):
        with pytest.raises(ValueError, match="The 'zeta0' parameter of M3KClassifier must be .* Got True instead"):
            M3KClassifier(zeta0=True, relative=rel).fit(Xr, yr)       # a boolean is not a number (NumberInterval)
    for mi in ("a", 0.5, 0, True):
        with pytest.raises(ValueError, match="max_iter must be"):
            solve_m3k(Ks, y, max_iter=mi)
    for kw, msg in ((dict(theta=0.0), "theta"), (dict(delta=3.0), "delta"), (dict(c=1.5), "c is"), (dict(m=0), "m is")):
        args = dict(margin_loss=0.1, rademacher=0.2, c=3, theta=1.0, m=45) | kw
        with pytest.raises(ValueError, match=msg):
            theorem1_bound(**args)
    with pytest.raises(ValueError, match="zeta0 must be a finite"):
        max_over_margin_set(Ks, y, np.ones(4), None)
    with pytest.raises(ValueError, match="one entry per kernel"):
        max_over_margin_set(Ks, y, np.ones(3), 0.0)


def test_silp_lower_bound_is_below_the_qclp_optimum():
    "The Lagrangian lower bound (from the master LP's multipliers) never exceeds the optimum found by the QCLP."
    Ks, y = _problem()
    gmax = max_kernel_margin(Ks, y).objective
    for g0 in (None, 0.5 * gmax, 0.9 * gmax):
        q = solve_m3k(Ks, y, zeta0=g0, solver="qclp", tol=1e-8)
        for mi in (1, 2, 3, 50):
            r = solve_m3k(Ks, y, zeta0=g0, tol=1e-8, max_iter=mi, warn=False)
            assert r.lower <= q.objective + 1e-6 * abs(q.objective) <= r.upper + 2e-6 * abs(q.objective)
        assert r.status == "optimal"


def test_uniform_cs_is_crammer_singer_on_the_mean_kernel():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    bank = gaussian_bank([0.05, 0.5, 2.0])
    est = UniformCSClassifier(bank, C=2.0, tol=1e-9, **PAPER_SETTINGS).fit(X, y)
    K = KernelBank(bank, normalize="diagonal", center=True).fit_transform(X).mean(axis=0)
    np.testing.assert_allclose(est.decision_function(X), K @ crammer_singer_dual(K, y, C=2.0, tol=1e-9).tau, atol=1e-6)
    # the default: uncentered unit-diagonal kernels plus the constant kernel s 11' of the class offsets (s = 1 here)
    est = UniformCSClassifier(bank, C=2.0, tol=1e-9).fit(X, y)
    K = KernelBank(bank, normalize="diagonal").fit_transform(X).mean(axis=0)
    tau = crammer_singer_dual(K + 1.0, y, C=2.0, tol=1e-9).tau
    np.testing.assert_allclose(est.decision_function(X), (K + 1.0) @ tau, atol=1e-6)
    np.testing.assert_allclose(est.intercept_, tau.sum(axis=0), atol=1e-9)
    # a duality gap bounds the objective, not the decision values (the dual is not strongly concave: at gap 5e-9 they
    # differed by 3e-5 on this set): compare two certified machines at a tight tolerance
    for kw in ({}, PAPER_SETTINGS):
        one = UniformCSClassifier(bank[:1], C=2.0, tol=1e-10, **kw).fit(X, y)
        mc = M3KClassifier(bank[:1], C=2.0, zeta0=None, tol=1e-10, **kw).fit(X, y)
        np.testing.assert_allclose(one.decision_function(X), mc.decision_function(X), atol=1e-6)


def test_estimator_multiclass_and_binary():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    est = M3KClassifier(C=1.0).fit(X, y)
    assert est.decision_function(X).shape == (150, 3) and est.score(X, y) > 0.9
    assert est.weights_.sum() == pytest.approx(1.0)
    mc = M3KClassifier(zeta0=None).fit(X, y)
    assert mc.result_.zeta0 == -np.inf and mc.result_.status == "optimal"
    yb = (y == 2).astype(int)
    b = M3KClassifier().fit(X, yb)
    assert b.decision_function(X).shape == (150,) and b.score(X, yb) > 0.9


def test_relative_zeta0_is_a_fraction_of_zeta_max_and_solves_lp5_once(monkeypatch):
    import mklbook.m3k as m3k
    Ks, y = _problem()
    gmax = max_kernel_margin(Ks, y).objective
    direct = solve_m3k(Ks, y, C=1.0, zeta0=0.5 * gmax, tol=1e-7)
    calls = []
    real = m3k._max_margin
    monkeypatch.setattr(m3k, "_max_margin", lambda *a, **k: calls.append(1) or real(*a, **k))
    rel = solve_m3k(Ks, y, C=1.0, zeta0=0.5, relative=True, tol=1e-7)
    assert len(calls) == 1                                    # one LP (5) for the scaling and the feasibility check
    assert rel.zeta0 == pytest.approx(0.5 * gmax, rel=1e-12)
    assert rel.objective == pytest.approx(direct.objective, rel=1e-6)
    np.testing.assert_allclose(rel.weights, direct.weights, atol=1e-4)
    with pytest.raises(ValueError, match="fraction f <= 1"):
        solve_m3k(Ks, y, zeta0=1.5, relative=True)
    assert solve_m3k(Ks, y, zeta0=None, relative=True).zeta0 == -np.inf   # MCMKL is unaffected by relative


@pytest.mark.parametrize("cls", [M3KClassifier, UniformCSClassifier])
@pytest.mark.parametrize("param, value, expected", [
    ("C", -1, "The 'C' parameter of {} must be a float in the range (0.0, inf). Got -1 instead."),
    ("C", "1", "The 'C' parameter of {} must be a float in the range (0.0, inf)."),
    ("tol", 0.0, "The 'tol' parameter of {} must be a float in the range (0.0, inf). Got 0.0 instead."),
    ("intercept_scaling", -0.5, "The 'intercept_scaling' parameter of {} must be a float in the range [0.0, inf). "
                                "Got -0.5 instead."),
    ("intercept_scaling", "1", "The 'intercept_scaling' parameter of {} must be a float in the range [0.0, inf)."),
    ("center", "False", "The 'center' parameter of {} must be an instance of 'bool'"),
    ("normalize", "unit", "The 'normalize' parameter of {} must be None or a str among"),
])
def test_parameter_constraints_shared(cls, param, value, expected):
    "Hyper-parameters are validated by declaration, with scikit-learn's message naming the estimator and the parameter."
    X, y = np.random.default_rng(0).standard_normal((30, 2)), np.arange(30) % 3
    with pytest.raises(ValueError) as e:
        cls(**{param: value}).fit(X, y)
    assert expected.format(cls.__name__) in str(e.value)


@pytest.mark.parametrize("param, value, expected", [
    ("zeta0", "min", "The 'zeta0' parameter of M3KClassifier must be a str among {'max'}, a float in the range "
                      "[-inf, inf) or None. Got 'min' instead."),
    ("zeta0", np.inf, "The 'zeta0' parameter of M3KClassifier must be"),
    ("zeta0", np.nan, "The 'zeta0' parameter of M3KClassifier must be"),
    ("relative", "False", "The 'relative' parameter of M3KClassifier must be an instance of 'bool'"),
    ("relative", 1, "The 'relative' parameter of M3KClassifier must be an instance of 'bool'"),
    ("max_iter", 0, "The 'max_iter' parameter of M3KClassifier must be an int in the range [1, inf). Got 0 instead."),
    ("max_iter", 2.5, "The 'max_iter' parameter of M3KClassifier must be an int in the range [1, inf)."),
])
def test_parameter_constraints_m3k(param, value, expected):
    X, y = np.random.default_rng(0).standard_normal((30, 2)), np.arange(30) % 3
    with pytest.raises(ValueError) as e:
        M3KClassifier(**{param: value}).fit(X, y)
    assert expected in str(e.value)


def test_parameter_constraints_accept_the_documented_values():
    "'max', a number (absolute, or a fraction with relative=True), None and -inf (MCMKL); intercept_scaling 0 (none)."
    X, y = np.random.default_rng(0).standard_normal((30, 2)), np.arange(30) % 3
    for kw in (dict(zeta0="max"), dict(zeta0=None), dict(zeta0=-np.inf), dict(zeta0=0.5, relative=True),
               dict(zeta0=np.float64(-1.0)), dict(intercept_scaling=0), dict(relative=np.True_, zeta0=1)):
        est = M3KClassifier(**kw).fit(X, y)
        assert est.result_.converged, kw
    UniformCSClassifier(intercept_scaling=0.0).fit(X, y)


def test_silp_building_blocks_match_their_naive_formulas():
    "The cut coefficients without the m x m matrix tau tau', and the in-place combination, against the formulas."
    from mklbook.m3k import _combine_sparse, _cs_cut
    Ks, y = _problem(m=40)
    rng = np.random.default_rng(1)
    tau = rng.standard_normal((40, 3))
    Y = np.eye(3)[y]
    for s in (0.0, 1.7):
        b, u = _cs_cut(Ks, tau, Y, s)
        assert b == pytest.approx((tau * Y).sum())
        np.testing.assert_allclose(u, [np.sum((K + s) * (tau @ tau.T)) for K in Ks], rtol=1e-12, atol=1e-10)
        mu = np.array([0.0, 0.3, 0.0, 0.7])
        K0 = Ks.copy()
        np.testing.assert_allclose(_combine_sparse(Ks, mu), np.tensordot(mu, Ks, axes=1), rtol=1e-14, atol=1e-14)
        np.testing.assert_array_equal(Ks, K0)                       # the stack is not touched


def test_default_bank_stops_at_gamma_scale_and_an_explicit_bank_is_used_as_given():
    from mklbook.kernels import default_bank
    from mklbook.m3k import m3k_default_bank
    X, y = np.random.default_rng(0).standard_normal((30, 4)), np.arange(30) % 3
    for cls in (M3KClassifier, UniformCSClassifier):
        est = cls().fit(X, y)
        assert [k.gamma * 4 for k in est.bank_.kernels_] == [0.125, 0.25, 0.5, 1.0]
        assert [k.standardize for k in est.bank_.kernels_] == [True] * 4
        assert est.weights_.shape == (4,)
        assert cls(kernels=default_bank(X)).fit(X, y).weights_.shape == (7,)
    assert [repr(k) for k in m3k_default_bank(X)] == [repr(k) for k in default_bank(X)[:4]]


def test_psd_assume_is_labelled_in_the_status():
    "Under psd='assume' the certificate rests on the caller's word, and the status says so."
    from mklbook.solvers import ASSUMED
    from sklearn.datasets import make_classification
    X, y = make_classification(60, 5, n_informative=3, n_classes=3, n_clusters_per_class=1, random_state=0)
    Ks = np.stack([Gaussian(g)(X) for g in (0.1, 1.0)])
    assert solve_m3k(Ks, y, psd="assume").status == ASSUMED
    assert solve_m3k(Ks, y).status == "optimal"
