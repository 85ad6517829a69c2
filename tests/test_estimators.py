"""The shared estimator base classes pass scikit-learn's estimator checks through a minimal subclass."""
import numpy as np
import pytest
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


def _sampled_cases():
    from mklbook.classic_mkl import IKL, NLMKL, TwoLayerMKL
    from mklbook.m3k import M3KClassifier
    from mklbook.pep import FKLClassifier, FKLRegressor, IFKLClassifier, IFKLRegressor
    return [TwoLayerMKL, NLMKL, IKL, FKLClassifier, FKLRegressor, IFKLClassifier, IFKLRegressor, M3KClassifier]


@pytest.mark.parametrize("how", ["memory_budget", "weight_rows"])
@pytest.mark.parametrize("Est", _sampled_cases(), ids=lambda c: c.__name__)
def test_past_the_memory_budget_the_weights_come_from_a_row_sample_and_the_machine_from_every_row(Est, how, monkeypatch):
    """The methods without a low-rank path: past `memory_budget` (or on more rows than `weight_rows`, where the estimator
    has it) the exact method learns the weights on a sample of rows, and the kernel machine is certified on every row.
    Its held-out score stays within 0.03 of the exact fit's, and the fit never holds the stack of all rows."""
    import tracemalloc
    from sklearn.base import is_regressor
    from sklearn.datasets import make_classification, make_friedman1
    m, n = 500, 150
    X, y = make_friedman1(m + 300, 6, random_state=0) if is_regressor(Est()) else \
        make_classification(m + 300, 6, n_informative=4, random_state=0)
    probe = Est()
    if how not in probe.get_params():
        pytest.skip(f"{Est.__name__} has no {how}")
    budget = 8.0 * n * n * probe._budget_matrices(X[:m])                 # room for the stack of n rows
    every = {k: None for k in ("memory_budget", "weight_rows") if k in probe.get_params()}
    exact = Est(**every).fit(X[:m], y[:m])
    sampled = dict(every, **({"memory_budget": budget} if how == "memory_budget" else {"weight_rows": n}))
    monkeypatch.setattr("mklbook.kernels.BLOCK_BYTES", 8 * 20 * m * 20)   # blocks of 20 rows of 20 kernels
    tracemalloc.start()
    est = Est(**sampled).fit(X[:m], y[:m])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert est.weights_rows_ == n and not hasattr(exact, "weights_rows_")
    assert peak < 8.0 * n * n * probe._budget_matrices(X) + 12 * 8 * m * m, peak   # the sample's stack, a few m x m
    coef = est.tau_ if hasattr(est, "tau_") else est.coef_ if hasattr(est, "coef_") else est.result_.coef
    assert coef.shape[0] == m                                              # the machine has every row
    from mklbook.solvers import CrammerSingerResult
    machine = getattr(est, "machine_", None)
    gap = machine.gap if machine is not None else est.result_.machine_gap
    if isinstance(machine, CrammerSingerResult):   # M3K: certified to the estimator's own tol (the solver stops there)
        assert machine.status == "optimal" and machine.tol == est.tol and gap <= est.tol
    else:                                          # the SVM/SVR machines: libsvm + polish, exact to round-off
        assert gap <= 1e-6
    assert est.score(X[m:], y[m:]) >= exact.score(X[m:], y[m:]) - 0.03
    with pytest.raises(ValueError, match="memory_budget"):
        Est(memory_budget=1e4).fit(X[:m], y[:m])
    if how == "weight_rows":                                               # at most weight_rows rows: the exact method
        assert not hasattr(Est(weight_rows=m).fit(X[:m], y[:m]), "weights_rows_")
        with pytest.raises(ValueError, match="weight_rows"):
            Est(weight_rows=50).fit(X[:m], y[:m])


def test_an_estimator_without_weight_rows_samples_weight_rows_rows_past_the_budget(monkeypatch):
    """M3K has no `weight_rows`: within its budget it runs on every row; past it, its weights come from `WEIGHT_ROWS`
    rows even when the budget would hold more (it once took as many as the budget held: 3800 of 4000 rows, 768 MiB)."""
    from sklearn.datasets import make_classification
    from mklbook.m3k import M3KClassifier
    monkeypatch.setattr("mklbook.estimators.WEIGHT_ROWS", 120)
    X, y = make_classification(500, 6, n_informative=4, random_state=0)
    probe = M3KClassifier()
    room = 8.0 * 300 * 300 * probe._budget_matrices(X)                  # the stack of 300 rows fits, of 500 does not
    assert M3KClassifier(memory_budget=room).fit(X, y).weights_rows_ == 120
    assert not hasattr(M3KClassifier(memory_budget=None).fit(X, y), "weights_rows_")


def test_the_row_sample_falls_back_to_an_unstratified_sample_when_a_class_has_one_row():
    "A class with a single row cannot be split by class: the sample is then drawn without stratification."
    from mklbook.m3k import M3KClassifier
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = (X[:, 0] > 0).astype(int)
    y[0] = 2                                                               # one row of class 2
    est = M3KClassifier(memory_budget=8.0 * 150 * 150 * 5).fit(X, y)       # room for 150 rows of 4 kernels + K_mu
    assert est.weights_rows_ == 150 and est.tau_.shape == (400, 3)
    assert est.score(X, y) > 0.9
