"""Voted Kernel Regularization: certificates against independent references, bounds, estimator contract, bad input."""
import pickle
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.kernels import Gaussian, KernelBank, Polynomial, Sigmoid, polynomial_bank
from mklbook.vkr import (VKRClassifier, l1_svm, local_bound, pseudo_dimension, rademacher_mc, solve_vkr,
                         theorem1_bound, trace_bound, vkr_objective)


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


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lp_matches_cvxpy(seed):
    Ks, y = _problem(seed=seed)
    r = trace_bound(Ks)
    res = solve_vkr(Ks, y, r, lam=1e-2, beta=1e-3, tol=1e-9)
    p, m = Ks.shape[:2]
    a = cp.Variable((p, m))
    marg = sum(cp.multiply(y, Ks[k] @ cp.multiply(y, a[k])) for k in range(p))
    obj = cp.sum(cp.pos(1 - marg)) / m + sum(res.Lambda[k] * cp.norm1(a[k]) for k in range(p))
    ref = cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL")
    assert res.status == "optimal" and res.gap <= 1e-9
    assert res.objective == pytest.approx(ref, rel=1e-6)
    assert res.objective - res.dual_objective <= 1e-7 * res.objective


@pytest.mark.parametrize("lam,beta", [(1e-3, 1e-3), (1e-1, 1e-4), (0.0, 1e-2)])
def test_cd_reaches_lp_optimum(lam, beta):
    Ks, y = _problem(m=60, p=4, seed=3)
    r = trace_bound(Ks)
    lp = solve_vkr(Ks, y, r, lam, beta, tol=1e-9)
    cd = solve_vkr(Ks, y, r, lam, beta, solver="cd", tol=1e-9)
    assert cd.status == "optimal"
    assert cd.objective == pytest.approx(lp.objective, rel=1e-4)
    assert vkr_objective(Ks, y, cd.coef, cd.Lambda) == pytest.approx(cd.objective)


def test_non_pds_and_asymmetric_kernels_accepted():
    Ks, y = _problem()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    Kn = np.stack([Sigmoid(2.0, -1.0)(X), np.tril(Ks[1]) + 0.3 * np.triu(Ks[1], 1)])
    res = solve_vkr(Kn, y, rademacher_mc(Kn, 50).mean, 1e-2, 1e-3)
    assert res.status == "optimal"


def test_l1_svm_special_case_and_hinge_only():
    Ks, y = _problem()
    a = l1_svm(Ks, y, beta=1e-2)
    b = solve_vkr(Ks, y, np.array([1.0, 5.0, 9.0]), lam=0.0, beta=1e-2)
    assert a.objective == pytest.approx(b.objective, rel=1e-9)
    sep = solve_vkr(np.outer([1.0, 2, -1, -2], [1.0, 2, -1, -2])[None], [1, 1, -1, -1], 0.0, lam=0.0, beta=0.0)
    assert sep.status == "optimal" and sep.objective <= 1e-9


def test_bounds_monotone_and_above_estimate():
    Ks, y = _problem(m=80, p=6)
    est = rademacher_mc(Ks, 200)
    tb = trace_bound(Ks)
    assert (est.mean <= tb).all() and (np.diff(tb) > 0).all()
    assert (np.diff(pseudo_dimension(np.arange(1, 8), 4)) > 0).all()
    lb = local_bound(Ks[:1], np.logspace(-4, 1, 6))[0]
    assert (np.diff(lb) >= 0).all()


def test_theorem1_decreases_with_margin_loss_and_complexity():
    g = np.linspace(-1, 1, 100)
    b0 = theorem1_bound(g, [0.5, 0.5], [0.1, 0.2], rho=0.5)
    assert theorem1_bound(g + 1, [0.5, 0.5], [0.1, 0.2], rho=0.5) < b0
    assert theorem1_bound(g, [0.5, 0.5], [0.05, 0.1], rho=0.5) < b0


def test_estimator_predicts_from_support_only_and_pickles():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    est = VKRClassifier(polynomial_bank([1, 2, 3]), lam=1e-3, beta=1e-3).fit(X, y)
    Kt = est.bank_.transform(X / est.input_scale_)
    np.testing.assert_allclose(est.decision_function(X), est.result_.decision_function(Kt), atol=1e-9)
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
    solve_vkr(Ks, y, r, solver="cd")
    assert np.array_equal(Kc, Ks) and np.array_equal(yc, y)
