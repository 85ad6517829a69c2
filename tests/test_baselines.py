"""Baselines: scikit-learn compatibility and certificates."""
import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.baselines import L1MKL, L2KRRMKL, UniformMKL, l1_mkl, l2_krr_mkl
from mklbook.kernels import FeatureStack, Gaussian

KS = [Gaussian(0.1), Gaussian(1.0)]


# all of scikit-learn's checks apply; L1MKL declares itself binary-only (tag multi_class=False), so the checks use
# binary problems for it
@parametrize_with_checks([UniformMKL(KS), L1MKL(KS), L2KRRMKL(KS)])
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
