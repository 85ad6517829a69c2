"""PEP, FKL and IFKL (paper 001): scikit-learn compatibility, certificates, reference values and bad input."""
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.kernels import Gaussian, KernelBank, Sigmoid, stack_quad
from mklbook.pep import (FKLClassifier, FKLRegressor, IFKLClassifier, IFKLRegressor, _ascend, _Families, corollary2_bound,
                         empirical_pep, fkl, fkl_path, gaussian_pep, ifkl, pep_bank, theorem2_bound)

KS = [Gaussian(0.1), Gaussian(1.0)]
SMALL = dict(families=("gaussian",), tau_range=(0.5, 2.0), max_outer=2)


# scikit-learn's checks use tiny data sets (as few as ~10 points), so t = 2 (t must stay below the sample size) and, for
# speed, a two-kernel bank for FKL and one narrow Gaussian range for IFKL (at most 2 outer iterations: a ConvergenceWarning
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


@pytest.fixture(scope="module")
def ifkl_run():
    "One default IFKL run on 60 points, shared by the IFKL tests (its certificate, the dense grid, the polynomial enumeration)."
    X, y = _data(60)
    return X, y, ifkl(X, y, lam=1.0, t=2)




def test_bounds_monotone():
    with pytest.raises(ValueError, match="probability vector"):
        corollary2_bound(0.1, [0.5, 0.5], 500, 4, [0.7, 0.7])
    with pytest.raises(ValueError, match="k must be > 1"):
        theorem2_bound(0.1, 0.5, 500, 4, k=1.0)
    # a choice among N fixed candidates (union bound): delta / N adds (14 + 2M) log(N) k / n, nothing else
    n, N = 500, 44
    extra = theorem2_bound(0.1, 0.5, n, 4, delta=0.05 / N) - theorem2_bound(0.1, 0.5, n, 4, delta=0.05)
    assert extra == pytest.approx(16 * np.log(N) * np.log(n) / n, rel=1e-12)


def test_fkl_path_pool_is_reused_on_the_same_problem_only():
    X, y = _data(60)
    Ks = _stack(X) * 60
    path = fkl_path(Ks, y, [0.5, 2.0, 16.0], [2, 3], tol=1e-6)
    # the pool can be reused on the same problem only
    again = fkl_path(Ks, y, [2.0], [3], pool=path[2.0, 3].pool, tol=1e-6)
    assert again[2.0, 3].n_solves == 0
    with pytest.raises(ValueError, match="same kernel stack"):
        fkl_path(Ks[:2], y, [1.0], [2], pool=path[2.0, 3].pool)


def test_fkl_regression_and_warm_start():
    X, _ = _data()
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1]
    Ks = _stack(X) * 80
    r = fkl(Ks, y, lam=1.0, t=2, task="regression", method="silp")
    r2 = fkl(Ks, y, lam=1.0, t=2, task="regression", d0=r.weights)
    assert r.status == r2.status == "optimal"
    assert r2.n_iter <= 3


def test_ifkl_stops_by_its_rule(ifkl_run):
    _, _, r = ifkl_run
    assert len(r.kernels) == len(r.weights) == len(r.params)
    assert all(f == "gaussian" and 2 ** -10 <= v <= 2 ** 10 or f == "polynomial" and isinstance(v, int)
               for f, v in r.params)



def test_polynomial_ascent_redundant(ifkl_run):
    """The removed sub-problem for polynomials (ascent over real d from the best integer, then the better of floor/ceil)
    returns the enumerated best integer degree on real FKL/IFKL duals: removing it changed no result."""
    X, y, r = ifkl_run
    fams = _Families(X, ("polynomial",), (1.0, 1.0), (1, 20))
    Ks = np.stack([fams.kernel("polynomial", float(d)) for d in range(1, 21)])
    peps = empirical_pep(Ks, 2)
    coefs = [(1.0, r.coef)] + [(lam, fkl(Ks, y, lam=lam, t=2, pep=peps, method="silp").coef) for lam in (0.5, 8.0, 64.0)]
    for lam, coef in coefs:
        Qg = lam * peps + 0.5 * stack_quad(Ks, coef)
        best = int(np.argmax(Qg)) + 1                                  # what ifkl now adds
        th, _, _, _ = _ascend(fams, "polynomial", float(best), coef, lam, 2)
        old = max({c for c in (np.floor(th), np.ceil(th)) if 1 <= c <= 20}, key=lambda c: Qg[int(c) - 1])
        assert Qg[best - 1] >= Qg[int(old) - 1]                        # enumeration is never worse ...
        assert int(old) == best, (lam, th, old, best)                  # ... and here it is the same answer


def test_estimators_pickle_and_do_not_modify_inputs():
    X, y = _data(40)
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


def test_table1_marks_use_the_corrected_resampled_ttest():
    "A small consistent deficit over 10 half-splits: the plain paired test calls it worse, the corrected test does not."
    from mklbook.pep_experiments import table1_markdown
    rng = np.random.default_rng(0)
    best = 80 + rng.normal(0, 1, 10)
    res = {"toy": {"n_splits": 10, "splits": {"uniform": best.tolist(),
                                              "FKL": (best - 0.5 + 0.3 * np.tile([1.0, -1.0], 5)).tolist(),   # ≈†
                                              "IFKL": (best - 5 + rng.normal(0, 0.3, 10)).tolist(),    # worse
                                              "SimpleMKL": (best - 0.2 + np.tile([1.0, -1.0], 5)).tolist()}}}  # ≈
    row = next(l for l in table1_markdown(res, methods=("FKL", "IFKL", "SimpleMKL", "uniform")).splitlines()
               if l.startswith("| toy"))
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    assert cells[0].endswith("≈†") and not cells[1].endswith("≈") and cells[2].endswith(" ≈") and cells[3].startswith("**")
