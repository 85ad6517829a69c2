"""Voted Kernel Regularization: certificates against independent references, bounds, estimator contract, bad input."""
import pickle
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.kernels import Gaussian, KernelBank, Polynomial, polynomial_bank
from mklbook.vkr import (VKRClassifier, gaussian_bound, l1_svm, local_bound, pseudo_dimension, sigmoid_bound,
                         solve_vkr, theorem1_bound, theorem2_bound, trace_bound, vkr_dual_value, vkr_margins,
                         vkr_objective, vkr_path)
from mklbook.protocol import corrected_ttest


def _problem(m=40, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 4))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.where(X[:, 0] + X[:, 1] ** 2 - 0.1 > 0, 1.0, -1.0)
    Ks = KernelBank(polynomial_bank(range(1, p + 1))).fit_transform(X)
    return Ks, y


# All of scikit-learn's checks apply. VKR is binary (tag multi_class=False, so the checks use binary problems).
# Small banks keep the suite fast.
@parametrize_with_checks([VKRClassifier(polynomial_bank([1, 2])),
                          VKRClassifier([Gaussian(0.5), Gaussian(2.0)], penalty="gaussian", solver="cd")])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)



def _cvxpy_optimum(Ks, y, Lambda):
    "Eq. (1) in cvxpy, divided by min Lambda so CLARABEL's tolerances are relative to the (possibly tiny) optimum."
    p, m = Ks.shape[:2]
    a = cp.Variable((p, m))
    marg = sum(cp.multiply(y, Ks[k] @ cp.multiply(y, a[k])) for k in range(p))
    sc = 1.0 / Lambda.min()
    obj = sc * cp.sum(cp.pos(1 - marg)) / m + sum(sc * Lambda[k] * cp.norm1(a[k]) for k in range(p))
    return cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12,
                                              tol_feas=1e-12, max_iter=500) / sc


@pytest.mark.parametrize("lam,beta", [(1e-3, 1e-3), (1e-1, 1e-4), (0.0, 1e-2), (1e-8, 1e-8), (0.0, 1e-8)])
def test_cd_and_lp_reach_the_independent_optimum(lam, beta):
    Ks, y = _problem(m=60, p=4, seed=3)
    r = trace_bound(Ks)
    lp = solve_vkr(Ks, y, r, lam, beta)
    cd = solve_vkr(Ks, y, r, lam, beta, solver="cd")
    ref = _cvxpy_optimum(Ks, y, lp.Lambda)
    for res in (lp, cd):
        assert res.status == "optimal" and res.gap <= 1e-7
        assert res.gap == pytest.approx((res.objective - res.dual_objective) / res.objective, abs=1e-15)
        assert res.dual_objective <= ref * (1 + 1e-7)                 # a genuine lower bound
        assert res.objective == pytest.approx(ref, rel=1e-6)          # relative, although ref may be ~1e-6
        assert vkr_objective(Ks, y, res.coef, res.Lambda) == pytest.approx(res.objective)


def test_relative_gap_is_honest_on_tiny_optimum():
    # the reviewer's case: breast-cancer-like tiny prices, F* ~ 1e-6; an absolute gap called 20% off "optimal"
    Ks, y = _problem(m=80, p=6, seed=1)
    r = trace_bound(Ks)
    res = solve_vkr(Ks, y, r, 1e-8, 1e-8)
    assert res.objective < 1e-3
    D = vkr_dual_value(Ks, res.y, np.full(80, 1 / 80), res.Lambda)      # any u gives a lower bound
    assert D <= res.objective
    assert res.status == "optimal" and (res.objective - res.dual_objective) / res.objective <= 1e-7


@pytest.mark.parametrize("price", [1e-5, 1e-6, 1e-8])
def test_gaussian_bank_at_tiny_prices_is_certified(price):
    """Regression: the nine-width Gaussian bank near interpolation (F* ~ 1e-4..1e-7) used to stop "inaccurate" with
    gaps 1e-7..1e-4, HiGHS' absolute primal tolerance leaving margins at 1 - 1e-9. The active-set polish solves the
    support's equations exactly; the LP, CD and the warm path must all be certified and agree with cvxpy."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler
    X, y = load_breast_cancer(return_X_y=True)
    X, y = StandardScaler().fit_transform(X[::5]), y[::5]
    gammas = 10.0 ** (np.arange(-4, 5) / 2)
    Ks = KernelBank([Gaussian(g) for g in gammas]).fit_transform(X)
    ref = None
    for res in (solve_vkr(Ks, y, gammas, price, price), solve_vkr(Ks, y, gammas, price, price, solver="cd"),
                vkr_path(Ks, y, gammas, [price], [price])[price, price]):
        assert res.status == "optimal" and res.gap <= 1e-7, (res.solver, res.gap, res.message)
        assert res.dual_objective <= res.objective
        ref = _cvxpy_optimum(Ks, res.y, res.Lambda) if ref is None else ref
        assert res.objective == pytest.approx(ref, rel=1e-6)



def test_l1_svm_special_case_and_hinge_only():
    Ks, y = _problem()
    a = l1_svm(Ks, y, beta=1e-2)
    b = solve_vkr(Ks, y, np.array([1.0, 5.0, 9.0]), lam=0.0, beta=1e-2)
    assert a.objective == pytest.approx(b.objective, rel=1e-9)



def test_local_bound_covers_localised_atoms():
    Ks, y = _problem(m=80, p=6)
    kappa2 = np.einsum("kii->ki", Ks).max(axis=1)
    # homogeneity: H_k(s) = kappa_k * (unit ball at s / kappa_k^2)
    k = 5
    np.testing.assert_allclose(local_bound(Ks[[k]], 0.3)[0],
                               np.sqrt(kappa2[k]) * local_bound(Ks[[k]], 0.3 / kappa2[k], kappa=1.0)[0], rtol=1e-12)


def test_theorem1_decreases_with_margin_loss_and_complexity():
    g = np.linspace(-1, 1, 100)
    b0 = theorem1_bound(g, [0.5, 0.5], [0.1, 0.2], theta=0.5)
    assert theorem1_bound(np.clip(g + 1, -1, 1), [0.5, 0.5], [0.1, 0.2], theta=0.5) < b0
    assert theorem1_bound(g, [0.5, 0.5], [0.05, 0.1], theta=0.5) < b0


def test_estimator_predicts_from_support_only_and_pickles():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    est = VKRClassifier(polynomial_bank([1, 2, 3]), lam=1e-3, beta=1e-3).fit(X, y)
    assert est.n_support_ == np.count_nonzero(est.result_.coef) < 3 * 80
    est2 = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(est2.predict(X), est.predict(X))
    clone(est)


def test_bad_input():
    Ks, y = _problem()
    r = trace_bound(Ks)
    Kc, yc = Ks.copy(), y.copy()
    with pytest.raises(ValueError, match="NaN"):
        bad = Ks.copy(); bad[0, 0, 0] = np.nan
        solve_vkr(bad, y, r)
    with pytest.raises(ValueError, match="labels"):
        solve_vkr(Ks, y[:5], r)
    with pytest.raises(ValueError, match="single class"):
        solve_vkr(Ks, np.ones(40), r)
    with pytest.raises(ValueError, match="non-negative"):
        solve_vkr(Ks, y, r, beta=-1.0)
    with pytest.raises(ValueError, match="one per kernel"):
        solve_vkr(Ks, y, r[:1])
    with pytest.raises(ValueError, match="square"):
        solve_vkr(Ks[:, :, :10], y, r)
    with pytest.raises(ValueError, match="binary"):
        VKRClassifier(polynomial_bank([1])).fit(np.random.default_rng(0).standard_normal((30, 2)), np.arange(30) % 3)
    with pytest.raises(ValueError, match="polynomial"):
        VKRClassifier([Gaussian(1.0)], penalty="degree").fit(np.eye(4), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="solver"):
        solve_vkr(Ks, y, r, solver="simplex")
    with pytest.raises(ValueError, match="Gaussian"):
        VKRClassifier(penalty="gaussian").fit(np.random.default_rng(0).standard_normal((30, 2)), np.arange(30) % 2)
    for kw, msg in [({"max_rounds": 0}, "max_rounds"), ({"cd_rounds": -5}, "cd_rounds"),
                    ({"cd_rounds": 2.7}, "cd_rounds"), ({"max_rounds": True}, "max_rounds")]:
        with pytest.raises(ValueError, match=msg):
            solve_vkr(Ks, y, r, solver="cd", **kw)
    with pytest.raises(ValueError, match="sample size"):
        gaussian_bound([1.0], 0.1, 0)
    with pytest.raises(ValueError, match="sample size"):
        sigmoid_bound(1.0, 0.0, 0.1, 0)
    with pytest.raises(ValueError, match="lin_complexity"):
        sigmoid_bound(1.0, 0.0, -1.0, 10)
    with pytest.raises(ValueError, match="empty"):
        theorem1_bound([], [0.5, 0.5], [0.1, 0.1], 0.5)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        theorem1_bound([np.nan, 0.5], [0.5, 0.5], [0.1, 0.1], 0.5)
    with pytest.raises(ValueError, match="theta"):
        theorem2_bound([0.5], [0.5, 0.5], [0.1, 0.1], float("nan"))
    with pytest.raises(ValueError, match="complexities"):
        theorem1_bound([0.5], [0.5, 0.5], [-0.1, 0.1], 0.5)
    with pytest.raises(ValueError, match="radius"):
        local_bound(Ks, np.nan)
    with pytest.raises(ValueError, match="kappa"):
        trace_bound(Ks, kappa=-1.0)
    with pytest.raises(ValueError, match="kappa"):
        local_bound(Ks, 0.1, kappa=[1.0, np.inf, 1.0])
    with pytest.raises(ValueError, match="integers"):
        pseudo_dimension(2.5, 3)
    with pytest.raises(ValueError, match="warm_start needs solver='cg', 'cd' or 'auto'"):
        solve_vkr(Ks, y, r, solver="lp", warm_start=np.zeros((3, 40)))
    with pytest.raises(ValueError, match="warm_start must be"):
        solve_vkr(Ks, y, r, solver="cd", warm_start=np.zeros((2, 40)))
    with pytest.raises(ValueError, match="finite and >= 0"):
        vkr_path(Ks, y, r, [np.nan], [1e-3])
    with pytest.raises(ValueError, match="one per kernel"):
        vkr_path(Ks, y, r[:2], [1e-3], [1e-3])
    with pytest.raises(ValueError, match="form"):
        theorem2_bound([0.5], [0.5, 0.5], [0.1, 0.1], 0.5, form="paper")
    with pytest.raises(ValueError, match="same length"):
        corrected_ttest([1.0, 2.0, 3.0], [1.0, 2.0], 1 / 3)
    with pytest.raises(ValueError, match="kappa2"):
        vkr_margins(solve_vkr(Ks, y, r, 1e-2, 1e-3), Ks[:, :10, :])
    solve_vkr(Ks, y, r, solver="cd")
    vkr_path(Ks, y, r, [1e-2, 1e-4], [1e-3, 1e-5])
    assert np.array_equal(Kc, Ks) and np.array_equal(yc, y)



def test_zero_solution_needs_no_lp():
    Ks, y = _problem()
    res = solve_vkr(Ks, y, trace_bound(Ks), lam=0.0, beta=1e3, solver="cd")
    assert res.n_support == 0 and res.objective == 1.0 and res.status == "optimal" and "no LP" in res.message


def test_theorem2_derived_is_weaker_than_printed_and_keeps_the_rate():
    g, w, r = np.full(10**5, 0.9), np.full(10, 0.1), np.full(10, 0.001)   # large m: the printed choice of n is near-optimal
    for theta in (0.1, 0.3, 0.5):
        for K in (1.5, 2.0, 4.0):
            assert theorem2_bound(g, w, r, theta, K) > theorem2_bound(g, w, r, theta, K, form="printed")
    # the empirical term is at 3 theta / 2: a margin of 0.4 counts at theta = 0.3 (derived) but not as printed
    g2 = np.full(1000, 0.4)
    d = theorem2_bound(g2, w, np.zeros(10), 0.3) - theorem2_bound(np.ones(1000), w, np.zeros(10), 0.3)
    assert d == pytest.approx(2.0)                        # K/(K-1) * 1 with K = 2
    tails = [theorem2_bound(np.ones(m), w, np.zeros(10), 0.5) for m in (10**4, 10**6)]
    assert tails[1] / tails[0] < 0.05                     # O(log m / m); a 1/sqrt(m) rate would give >= 0.1



# ----------------------------------------------------------------------------------------------------------------------
# the fast paths against the exact LP, the implicit stack against the stack, units, parameters
# ----------------------------------------------------------------------------------------------------------------------

def _banks(m=70, seed=2):
    "Small problems on three kinds of kernels: polynomials, Gaussians, and non-PDS ones (sigmoid, an asymmetric matrix)."
    from mklbook.kernels import Sigmoid
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 4))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] + 0.1 * rng.standard_normal(m) > 0, 1.0, -1.0)
    poly = KernelBank(polynomial_bank(range(1, 6))).fit_transform(X)
    gauss = KernelBank([Gaussian(g) for g in (0.5, 2.0, 8.0)]).fit_transform(X)
    sig = KernelBank([Sigmoid(2.0, -0.5)]).fit_transform(X)
    asym = np.tril(poly[2]) + 0.5 * np.triu(poly[2], 1)
    return {"polynomial": (poly, y), "gaussian": (gauss, y), "non-PDS": (np.concatenate([sig, asym[None]]), y)}


@pytest.mark.parametrize("bank", ["polynomial", "gaussian", "non-PDS"])
@pytest.mark.parametrize("lam,beta", [(1e-3, 1e-3), (1e-1, 1e-4), (0.0, 1e-2), (1e-7, 1e-7)])
def test_generation_and_cd_reach_the_exact_lp(bank, lam, beta):
    Ks, y = _banks()[bank]
    r = np.full(Ks.shape[0], 1.0) if bank == "non-PDS" else trace_bound(Ks)
    exact = solve_vkr(Ks, y, r, lam, beta, solver="lp")
    assert exact.status == "optimal"
    for solver in ("cg", "cd", "auto"):
        res = solve_vkr(Ks, y, r, lam, beta, solver=solver)
        assert res.status == "optimal" and res.gap <= 1e-7, (solver, res.message)
        # both are certified: each objective lies within the other's gap of the optimum, which is in [D, F] for both
        assert res.dual_objective <= exact.objective * (1 + 1e-9) and exact.dual_objective <= res.objective * (1 + 1e-9)
        assert abs(res.objective - exact.objective) <= (res.gap + exact.gap + 1e-9) * exact.objective
        assert vkr_objective(Ks, y, res.coef, res.Lambda) == pytest.approx(res.objective, rel=1e-12)
        assert vkr_dual_value(Ks, y, np.full(len(y), 1 / len(y)), res.Lambda) <= res.objective


def test_auto_takes_the_lp_on_tiny_problems_and_generation_beyond():
    Ks, y = _problem(m=30, p=3)
    assert solve_vkr(Ks, y, trace_bound(Ks)).solver == "highs"                     # 90 atoms
    Ks, y = _problem(m=80, p=4)
    assert solve_vkr(Ks, y, trace_bound(Ks)).solver == "generation"                # 320 atoms


def test_generation_warm_start_and_path_without_basis():
    Ks, y = _problem(m=80, p=4, seed=4)
    r = trace_bound(Ks)
    a = solve_vkr(Ks, y, r, 1e-3, 1e-3, solver="cg")
    b = solve_vkr(Ks, y, r, 1e-3, 3e-4, solver="cg", warm_start=a)
    c = solve_vkr(Ks, y, r, 1e-3, 3e-4, solver="lp")
    assert b.status == "optimal" and b.objective == pytest.approx(c.objective, rel=1e-6)
    assert "warm start" in b.message


def test_implicit_stack_is_the_stack():
    from mklbook.kernels import Precomputed, Sigmoid, default_bank
    from mklbook.vkr import ImplicitStack, _StackAtoms, vkr_penalties
    rng = np.random.default_rng(1)
    X = rng.standard_normal((90, 5))
    y = np.where(X[:, 0] - X[:, 1] ** 2 + 0.5 > 0, 1, -1)
    kernels = default_bank(X, "both") + [Sigmoid(0.3, 0.1), Polynomial(3, 0.5, 0.2), Gaussian(0.3, columns=[0, 2])]
    Ks = KernelBank(kernels).fit_transform(X)
    I = ImplicitStack(kernels, X, block_mib=0.2)
    assert I.block < 90 and I.shape == Ks.shape
    np.testing.assert_allclose(I.dense(), Ks, rtol=1e-12, atol=1e-12 * np.abs(Ks).max())
    A = _StackAtoms(Ks)
    np.testing.assert_allclose(I.scale, A.scale, rtol=1e-12)                      # the sigmoid's scale by a pass
    W = rng.standard_normal((4, 90))
    np.testing.assert_allclose(I.price(W[0]), A.price(W[0]), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(I.price(W), A.price(W), rtol=1e-10, atol=1e-12)
    ks, js = rng.integers(0, len(kernels), 9), rng.integers(0, 90, 9)
    np.testing.assert_allclose(I.columns(ks, js), A.columns(ks, js), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(I.rows([3, 50]), A.rows([3, 50]), rtol=1e-12, atol=1e-14)
    for pen in ("trace", "rademacher"):
        np.testing.assert_allclose(vkr_penalties(I, pen, n_draws=20), vkr_penalties(Ks, pen, n_draws=20), rtol=1e-9)
    with pytest.raises(ValueError, match="stack in memory"):
        vkr_penalties(I, "local")
    r = vkr_penalties(Ks, "rademacher", n_draws=20)
    d, i = solve_vkr(Ks, y, r, 1e-2, 1e-3, solver="lp"), solve_vkr(I, y, r, 1e-2, 1e-3)
    assert d.status == i.status == "optimal" and i.objective == pytest.approx(d.objective, rel=1e-7)
    with pytest.raises(ValueError, match="ImplicitStack"):
        solve_vkr(I, y, r, solver="lp")
    K = rng.standard_normal((40, 40))                                            # precomputed kernels: sample indices
    P = ImplicitStack([Precomputed(K @ K.T, psd=True)], np.arange(40)[:, None])
    np.testing.assert_allclose(P.dense()[0], K @ K.T)


def test_estimator_without_the_stack_predicts_as_with_it():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((120, 4))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    dense = VKRClassifier().fit(X, y)
    implicit = VKRClassifier(max_stack_mib=0).fit(X, y)
    assert implicit.result_.solver == "generation" and implicit.result_.status == "optimal"
    assert implicit.result_.objective == pytest.approx(dense.result_.objective, rel=1e-7)
    np.testing.assert_allclose(implicit.decision_function(X), dense.decision_function(X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("s", [1e200, 1e-200, 1e100])
def test_units_of_the_kernels_do_not_matter(s):
    """Regression: a stack with entries of 1e200 overflowed inside the solver ('infeasible', numpy warnings). The answer is
    invariant when kernels and prices scale together (the penalties computed from the stack do); the solvers read each
    kernel divided by its largest entry."""
    Ks, y = _problem(m=60, p=4, seed=5)
    for solver in ("lp", "cg"):
        ref = solve_vkr(Ks, y, trace_bound(Ks), 1e-3, 1e-3, solver=solver)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)                       # no overflow on the way
            big = solve_vkr(Ks * s, y, trace_bound(Ks * s), 1e-3, 1e-3 * s, solver=solver)
        assert big.status == "optimal" and big.objective == pytest.approx(ref.objective, rel=1e-9)
        np.testing.assert_allclose(big.coef * s, ref.coef, rtol=1e-6, atol=1e-9 * np.abs(ref.coef).max())
        assert vkr_objective(Ks * s, y, big.coef, big.Lambda) == pytest.approx(big.objective, rel=1e-9)


def test_prices_below_round_off_are_refused_with_the_fix():
    Ks, y = _problem(m=40, p=3)
    with pytest.raises(ValueError, match="below 1e-14 / m of the size of kernel"):
        solve_vkr(Ks * 1e200, y, trace_bound(Ks), 1e-3, 1e-3)                   # prices in units of 1, kernels of 1e200
    with pytest.raises(ValueError, match="scaled together"):
        vkr_path(Ks * 1e200, y, trace_bound(Ks), [1e-3], [1e-3])
    h = solve_vkr(Ks * 1e200, y, 0.0, 0.0, 0.0)                                 # no price at all is exact
    assert h.converged or h.status == "inaccurate"
    tiny = solve_vkr(Ks * 1e-200, y, trace_bound(Ks), 1e-3, 1e-3)              # huge prices: alpha = 0 is the answer
    assert tiny.status == "optimal" and tiny.n_support == 0


@pytest.mark.parametrize("s", [1e200, 1e-200])
def test_estimator_on_features_of_extreme_magnitude(s):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((80, 3))
    y = (X[:, 0] > 0.2).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        a, b = VKRClassifier().fit(X, y), VKRClassifier().fit(X * s, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X * s))
    with pytest.raises(ValueError, match="scale the features"):
        VKRClassifier([Polynomial(3)], scale_inputs=False).fit(X * 1e200, y)


@pytest.mark.parametrize("kw,msg", [
    ({"lam": -1}, "The 'lam' parameter of VKRClassifier must be a float in the range [0.0, inf). Got -1 instead."),
    ({"beta": np.nan}, "The 'beta' parameter of VKRClassifier must be a float in the range [0.0, inf). Got nan instead."),
    ({"tol": 0}, "The 'tol' parameter of VKRClassifier must be a float in the range (0.0, inf). Got 0 instead."),
    ({"scale_inputs": "False"}, "The 'scale_inputs' parameter of VKRClassifier must be an instance of 'bool'"),
    ({"solver": "simplex"}, "The 'solver' parameter of VKRClassifier must be a str among"),
    ({"penalty": "l2"}, "The 'penalty' parameter of VKRClassifier must be a str among"),
    ({"n_draws": 1}, "The 'n_draws' parameter of VKRClassifier must be an int in the range [2, inf). Got 1 instead."),
    ({"kernels": "rbf"}, "The 'kernels' parameter of VKRClassifier must be None, an instance of 'mklbook.kernels.Kernel'"),
    ({"max_stack_mib": -1}, "The 'max_stack_mib' parameter of VKRClassifier must be a float in the range [0.0, inf)."),
    ({"random_state": "seed"}, "The 'random_state' parameter of VKRClassifier must be an int in the range"),
])
def test_parameters_are_validated_by_declaration(kw, msg):
    from sklearn.utils._param_validation import InvalidParameterError
    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(InvalidParameterError) as e:
        VKRClassifier(**kw).fit(X, np.arange(20) % 2)
    assert str(e.value).startswith(msg)


def test_generation_after_a_warm_path_in_the_same_process():
    """Regression: the generation's HiGHS model set the option threads=1 while the warm path's model had started HiGHS'
    global scheduler with its default; HiGHS then refused to run (status 'error', alpha = 0, silently in a pipeline)."""
    Ks, y = _problem(m=80, p=4, seed=6)
    r = trace_bound(Ks)
    vkr_path(Ks, y, r, [1e-3], [1e-3, 1e-4])
    res = solve_vkr(Ks, y, r, 1e-3, 1e-4, solver="cg")
    assert res.status == "optimal" and res.n_support > 0


def test_a_real_valued_target_points_to_regression():
    "A continuous y is a regression problem: the message says so instead of suggesting a one-vs-rest wrapper."
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match="VKRClassifier is a classifier.*for regression use"):
        VKRClassifier().fit(X, X[:, 0])
