"""The shared estimator base classes pass scikit-learn's estimator checks through a minimal subclass."""
import numpy as np
from sklearn.kernel_ridge import KernelRidge
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.estimators import CombinedKernelModel, KernelRidgeCV
from mklbook.kernels import Gaussian


class EqualWeights(CombinedKernelModel):
    "Uniform weights: the smallest concrete CombinedKernelModel."

    def __init__(self, kernels=None, estimator=None, normalize="trace", center=True):
        self.kernels, self.estimator, self.normalize, self.center = kernels, estimator, normalize, center

    def _learn_weights(self, Ks, y):
        return np.ones(Ks.shape[0])


KS = [Gaussian(0.1), Gaussian(1.0)]


@parametrize_with_checks([EqualWeights(KS), EqualWeights(KS, estimator=KernelRidge(kernel="precomputed"))])
def test_combined_kernel_model_is_sklearn_compatible(estimator, check):
    check(estimator)


def test_only_weighted_kernels_are_used_at_prediction():
    class FirstOnly(EqualWeights):
        def _learn_weights(self, Ks, y):
            return np.r_[1.0, np.zeros(Ks.shape[0] - 1)]
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 3)), rng.integers(0, 2, 40)
    est = FirstOnly([Gaussian(0.5), Gaussian(2.0)]).fit(X, y)
    ref = EqualWeights([Gaussian(0.5)]).fit(X, y)
    np.testing.assert_allclose(est.decision_function(X[:7]), ref.decision_function(X[:7]), atol=1e-10)


@parametrize_with_checks([KernelRidgeCV()])
def test_kernel_ridge_cv_is_sklearn_compatible(estimator, check):
    check(estimator)


def test_kernel_ridge_cv_as_align_mkl_second_stage():
    from sklearn.datasets import make_friedman1
    from mklbook.alignment import AlignMKL
    X, y = make_friedman1(300, 6, noise=0.5, random_state=0)
    cv = AlignMKL(estimator=KernelRidgeCV()).fit(X[:200], y[:200])
    assert cv.estimator_.alpha_ in KernelRidgeCV().alphas
    # the LOO choice is no worse on held-out data than the worst fixed alpha, and close to the best
    from sklearn.kernel_ridge import KernelRidge
    fixed = [AlignMKL(estimator=KernelRidge(kernel="precomputed", alpha=a)).fit(X[:200], y[:200]).score(X[200:], y[200:])
             for a in KernelRidgeCV().alphas]
    assert cv.score(X[200:], y[200:]) >= max(fixed) - 0.05
