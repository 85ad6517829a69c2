"""PEP, FKL and IFKL (paper 001): scikit-learn compatibility, certificates, reference values and bad input."""
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.kernels import Gaussian, KernelBank, Sigmoid
from mklbook.pep import (FKLClassifier, FKLRegressor, IFKLClassifier, IFKLRegressor, corollary2_bound, empirical_pep,
                         fkl, gaussian_pep, ifkl, mehler_eigenvalues, pep_bank, theorem2_bound)

KS = [Gaussian(0.1), Gaussian(1.0)]
SMALL = dict(families=("gaussian",), tau_range=(0.25, 4.0), max_outer=3)


# scikit-learn's checks use tiny data sets (as few as ~10 points), so t = 2 (t must stay below the sample size) and, for
# speed, a two-kernel bank for FKL and one narrow Gaussian range for IFKL (at most 3 outer iterations: a ConvergenceWarning
# on some checks is expected); the defaults are exercised in the notebook and below.
# FKL and IFKL are binary methods (tag multi_class=False), so the classifier checks use binary problems.
@parametrize_with_checks([FKLClassifier(KS, t=2), FKLRegressor(KS, t=2), IFKLClassifier(t=2, **SMALL),
                          IFKLRegressor(t=2, **SMALL)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(m=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 3))
    y = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.standard_normal(m) > 0, 1, -1)
    return X, y


def _stack(X):
    return KernelBank([Gaussian(g) for g in (0.05, 0.5, 5.0)]).fit_transform(X)


def test_empirical_pep_matches_full_spectrum_and_is_scale_invariant():
    X, _ = _data()
    K = _stack(X)[1]
    w = np.linalg.eigvalsh(K)[::-1]
    assert empirical_pep(K, 3) == pytest.approx(w[:3].sum() / w.sum(), rel=1e-12)
    assert empirical_pep(5.0 * K, [1, 3]) == pytest.approx(empirical_pep(K, [1, 3]), rel=1e-12)
    assert empirical_pep(K, 3, method="eigsh") == pytest.approx(empirical_pep(K, 3), rel=1e-9)


def test_gaussian_pep_closed_form():
    a, b = 0.25, 2.0
    B = b / (a + b + np.sqrt(a * a + 2 * a * b))
    assert gaussian_pep(2.0, 3) == pytest.approx(1 - B ** 3, rel=1e-12)
    assert mehler_eigenvalues(2.0, dim=2, n=5000).sum() == pytest.approx(1.0, abs=1e-6)


def test_bounds_monotone():
    b = np.linspace(0, 1, 11)
    assert (np.diff(theorem2_bound(0.1, b, 500, 4)) < 0).all()
    assert (np.diff(theorem2_bound(0.1, 0.5, 500, np.arange(1, 10))) > 0).all()
    with pytest.raises(ValueError, match="probability vector"):
        corollary2_bound(0.1, [0.5, 0.5], 500, 4, [0.7, 0.7])
    with pytest.raises(ValueError, match="k must be > 1"):
        theorem2_bound(0.1, 0.5, 500, 4, k=1.0)


@pytest.mark.parametrize("method", ["reduced-gradient", "silp"])
def test_fkl_certified_and_methods_agree(method):
    X, y = _data()
    Ks = _stack(X) * 80
    r = fkl(Ks, y, lam=2.0, t=3, method=method, tol=1e-6)
    assert r.status == "optimal" and r.gap <= 1e-6
    assert r.weights.sum() == pytest.approx(1.0) and (r.weights >= 0).all()
    other = fkl(Ks, y, lam=2.0, t=3, method="silp" if method != "silp" else "reduced-gradient", tol=1e-6)
    assert r.objective == pytest.approx(other.objective, rel=1e-5)


def test_fkl_regression_and_warm_start():
    X, _ = _data()
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1]
    Ks = _stack(X) * 80
    r = fkl(Ks, y, lam=1.0, t=2, task="regression", method="silp")
    r2 = fkl(Ks, y, lam=1.0, t=2, task="regression", d0=r.weights)
    assert r.status == r2.status == "optimal"
    assert r2.n_iter <= 3


def test_ifkl_stops_by_its_rule():
    X, y = _data()
    r = ifkl(X, y, lam=1.0, t=2)
    # the gap is measured against grid + local ascent, not the continuum: "converged", never "optimal"
    assert r.status == "converged" and r.n_outer < 10 and r.gap <= 1e-3
    assert r.surrogate_violation <= 1e-10
    assert len(r.kernels) == len(r.weights) == len(r.params)
    assert all(f == "gaussian" and 2 ** -10 <= v <= 2 ** 10 or f == "polynomial" and isinstance(v, int)
               for f, v in r.params)


def test_estimators_pickle_and_do_not_modify_inputs():
    X, y = _data()
    Xc, yc = X.copy(), y.copy()
    for est in (FKLClassifier(), IFKLClassifier()):
        m = pickle.loads(pickle.dumps(clone(est).fit(X, y)))
        assert m.score(X, y) > 0.7
    assert np.array_equal(X, Xc) and np.array_equal(y, yc)
    assert len(pep_bank(X)) == 41


def test_bad_input():
    X, y = _data()
    Ks = _stack(X)
    with pytest.raises(ValueError, match="t must be an integer"):
        empirical_pep(Ks, 80)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        empirical_pep(np.diag([1.0, 1.0, -1.5]), 2)
    with pytest.raises(ValueError, match="lam must be"):
        fkl(Ks, y, lam=np.nan)
    with pytest.raises(ValueError, match="method must be"):
        fkl(Ks, y, method="newton")
    with pytest.raises(ValueError, match="binary"):
        FKLClassifier(KS).fit(X, np.arange(80) % 3)
    with pytest.raises(ValueError, match="families"):
        ifkl(X, y, families=("laplace",))
    with pytest.raises(ValueError, match="smaller t"):
        IFKLClassifier(t=100).fit(X, y)


def test_non_psd_input_refused():
    X, y = _data()
    # a Sigmoid kernel in the FKL bank: refused like KernelStackEstimator._fit_bank does
    for est in (FKLClassifier(kernels=[Sigmoid(0.5, 0.5), Gaussian(1.0)]), FKLRegressor(kernels=[Sigmoid(0.5, 0.5)])):
        with pytest.raises(ValueError, match="not PSD"):
            est.fit(X, y)
    # indefinite, yet its 1-PEP (0.4) lies in [0, 1]: caught by the smallest-eigenvalue check
    with pytest.raises(ValueError, match="smallest eigenvalue"):
        empirical_pep(np.diag([1.0, 1.0, 1.0, -0.5]), 1)
    K = _stack(X)[0]
    assert 0 < empirical_pep(K, 2) <= 1                          # PSD with round-off: accepted


def test_ifkl_ranges_without_grid_points():
    X, y = _data(50)
    r = ifkl(X, y, t=2, families=("gaussian",), tau_range=(0.3, 0.4), warn=False)
    assert all(0.3 * (1 - 1e-12) <= v <= 0.4 * (1 + 1e-12) for _, v in r.params)
    r = ifkl(X, y, t=2, families=("polynomial",), degree_range=(2.2, 3.5), warn=False)
    assert [v for _, v in r.params] == [3]
    with pytest.raises(ValueError, match="no integer degree"):
        ifkl(X, y, t=2, families=("polynomial",), degree_range=(2.2, 2.8))


def test_t_validation():
    X, _ = _data()
    K = _stack(X)[1]
    with pytest.raises(ValueError, match="t must be an integer"):
        empirical_pep(K, [])
    for t in (2.7, 0, True):
        with pytest.raises(ValueError, match="t must be an integer >= 1"):
            gaussian_pep(0.5, t)
