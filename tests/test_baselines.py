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
