"""Estimator contract and numerical properties of mklbook.alignment."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.datasets import make_regression
from sklearn.kernel_ridge import KernelRidge
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.alignment import (AlignMKL, AlignmentKRR, alignf_weights, kkt_residual, nonneg_quadratic)
from mklbook.kernels import Gaussian

# scikit-learn's generic checks, all of which apply. Estimators are kept small (3 kernels) so the suite stays fast.
SMALL = [Gaussian(0.1), Gaussian(1.0), Gaussian(10.0)]


@parametrize_with_checks([
    AlignMKL(kernels=SMALL),
    AlignMKL(kernels=SMALL, method="align"),
    AlignMKL(kernels=SMALL, estimator=KernelRidge(kernel="precomputed")),
    AlignmentKRR(kernels=SMALL),
    AlignmentKRR(kernels=SMALL, memory_budget=1.0),
])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), p=st.integers(1, 6))
def test_nonneg_quadratic_is_a_kkt_point(seed, p):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((p, max(1, p - 1)))      # possibly singular M
    M = A @ A.T
    a = M @ rng.uniform(-1, 1, p)                    # a in the range of M, as for PSD kernels
    v, res, _ = nonneg_quadratic(M, a)
    assert (v >= 0).all()
    assert res <= 1e-8
    assert kkt_residual(v, M, a) == pytest.approx(res)



def test_constant_kernel_is_reported_not_silently_used():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 2))
    Ks = np.stack([np.ones((30, 30)), Gaussian(1.0)(X)])
    with pytest.warns(RuntimeWarning, match="zero centered norm"):
        res = alignf_weights(Ks, np.sign(X[:, 0]))
    assert res.weights[0] == 0


def test_reproduce_alignment_quick_from_the_command_line(tmp_path, capsys):
    "`mklbook reproduce alignment --quick` (the CI-sized reproduction) writes Tables 2 and 4 with every method."
    from mklbook.cli import main
    assert main(["reproduce", "alignment", "--quick", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "alignment" / "table2.md").read_text()
    for method in ("unif", "1-stage", "align", "alignf"):
        assert f"| breast_cancer | {method} |" in text and f"| diabetes | {method} |" in text
    assert "# Table 4" in text and (tmp_path / "alignment" / "table2.json").stat().st_size > 0


def test_assumed_psd_is_said_in_the_status():
    from mklbook.alignment import alignf_weights
    from mklbook.kernels import Gaussian, Sigmoid
    X = np.random.default_rng(0).standard_normal((200, 3))
    y = np.sign(X[:, 0])
    Ks = np.stack([Gaussian(0.5)(X), Gaussian(2.0)(X)])
    assert alignf_weights(Ks, y).status == "optimal"
    r = alignf_weights(Ks, y, psd="assume")
    assert r.status == "optimal (PSD assumed)"
    with pytest.raises(ValueError, match="not positive semi-definite"):
        alignf_weights(np.stack([Ks[0], Sigmoid(1.0, -3.0)(X)]), y)


def test_memory_budget_switches_to_a_low_rank_bank_with_the_same_interface():
    from sklearn.datasets import make_classification
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.svm import SVC
    from mklbook.alignment import AlignMKL
    X, y = make_classification(300, 6, n_informative=4, random_state=0)
    exact = AlignMKL().fit(X[:200], y[:200])
    low = AlignMKL(memory_budget=1e5).fit(X[:200], y[:200])          # 8 * 200^2 * 8 bytes > 1e5: low rank
    assert exact.low_rank_ is None and low.low_rank_ is not None
    assert np.isclose(low.weights_.sum(), 1.0) and (low.weights_ >= 0).all()
    assert abs(low.score(X[200:], y[200:]) - exact.score(X[200:], y[200:])) < 0.08
    assert low.decision_function(X[200:205]).shape == (5,)
    assert type(AlignMKL(memory_budget=1e5, estimator=SVC(kernel="precomputed", C=3.0)).fit(X, y).estimator_).__name__ \
        == "LinearSVC"
    r = AlignMKL(memory_budget=1e5, estimator=KernelRidge(kernel="precomputed", alpha=0.5)).fit(X, X[:, 0])
    assert type(r.estimator_).__name__ == "Ridge" and r.estimator_.alpha == 0.5
    with pytest.raises(ValueError, match="method='linear'"):
        AlignMKL(method="linear", memory_budget=1e5).fit(X, y)
    with pytest.raises(ValueError, match="memory_budget"):
        AlignMKL(memory_budget=-1).fit(X, y)


def test_past_the_stack_budget_a_combined_kernel_that_fits_is_streamed_exactly():
    """Between the stack's budget and one combined kernel's, AlignMKL takes the streamed exact path: the same weights
    and decision values as on the stack; a second stage that copies the kernel (KernelRidge: 5 matrices), a
    'diagonal' normalisation (not streamed) or a smaller budget go low rank."""
    from sklearn.datasets import make_classification
    from sklearn.kernel_ridge import KernelRidge
    from mklbook.alignment import AlignMKL
    X, y = make_classification(300, 6, n_informative=4, random_state=0)
    one = 8 * 200**2                                     # one 200 x 200 matrix; the stack of 7 (+1) is 8 of them
    for budget in (None, 2 * one):                       # 'linear' learns an indefinite combination here: both refuse
        with pytest.raises(ValueError, match="not positive semi-definite"):
            AlignMKL(method="linear", memory_budget=budget).fit(X[:200], y[:200])
    for method in ("alignf", "align"):
        exact = AlignMKL(method=method).fit(X[:200], y[:200])
        s = AlignMKL(method=method, memory_budget=2 * one).fit(X[:200], y[:200])
        assert exact.streamed_ is None and s.low_rank_ is None and s.streamed_ is not None
        np.testing.assert_allclose(s.weights_, exact.weights_, atol=1e-10)
        np.testing.assert_allclose(s.decision_function(X[200:]), exact.decision_function(X[200:]), atol=1e-8)
        assert (s.predict(X[200:]) == exact.predict(X[200:])).all()
    reg = AlignMKL(memory_budget=2 * one, estimator=KernelRidge(kernel="precomputed")).fit(X[:200], X[:200, 0])
    assert reg.streamed_ is None and reg.low_rank_ is not None
    reg = AlignMKL(memory_budget=6 * one, estimator=KernelRidge(kernel="precomputed")).fit(X[:200], X[:200, 0])
    assert reg.streamed_ is not None and abs(reg.score(X[200:], X[200:, 0]) - AlignMKL(
        estimator=KernelRidge(kernel="precomputed")).fit(X[:200], X[:200, 0]).score(X[200:], X[200:, 0])) < 1e-10
    assert AlignMKL(memory_budget=2 * one, normalize="diagonal").fit(X[:200], y[:200]).low_rank_ is not None
    assert AlignMKL(memory_budget=one).fit(X[:200], y[:200]).low_rank_ is not None


def test_a_kernel_that_memorises_the_sample_is_reported():
    from sklearn.datasets import load_breast_cancer
    from mklbook.alignment import AlignMKL
    from mklbook.kernels import Gaussian
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.warns(RuntimeWarning, match="multiple of the identity"):
        AlignMKL([Gaussian(1.0)]).fit(X[:200], y[:200])        # raw features in the thousands: K = I numerically
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        AlignMKL().fit(X[:200], y[:200])                         # the default bank standardises: no warning


def test_alignment_krr_past_the_memory_budget_solves_problem_9_in_feature_space():
    from sklearn.datasets import make_friedman1
    X, y = make_friedman1(400, 10, noise=1.0, random_state=0)
    X0 = X.copy()
    exact, low = AlignmentKRR().fit(X[:150], y[:150]), AlignmentKRR(memory_budget=1.0).fit(X[:150], y[:150])
    assert exact.low_rank_ is None and low.low_rank_ is not None and np.array_equal(X, X0)
    assert low.result_.status == "optimal"
    np.testing.assert_allclose(low.weights_, exact.weights_, atol=1e-8)       # 150 rows < 200 directions: exact features
    np.testing.assert_allclose(low.predict(X[150:]), exact.predict(X[150:]), atol=1e-8)
    assert abs(low.result_.objective - exact.result_.objective) <= 1e-8 * abs(exact.result_.objective)
    big = AlignmentKRR(memory_budget=1.0).fit(X[:300], y[:300])                 # 300 rows: approximate features
    assert big.score(X[300:], y[300:]) >= AlignmentKRR().fit(X[:300], y[:300]).score(X[300:], y[300:]) - 0.05
    const = AlignmentKRR(memory_budget=1.0).fit(X[:40], np.full(40, 3.0))
    np.testing.assert_allclose(const.predict(X[:5]), 3.0)


@pytest.mark.parametrize("eta, eta1, eta2", [(2.0, 1e-2, 0.5), (0.3, 1.0, 0.0), (5.0, 1e-3, 1.0)])
def test_alignment_krr_minimises_problem_9_against_cvxpy(eta, eta1, eta2):
    """alignment_krr's objective equals the optimum of (9) written directly in cvxpy (matrix_frac), for weights of the
    alignment term other than 1 (the line search's step must not be confused with the weight eta)."""
    import cvxpy as cp
    from mklbook.alignment import alignment_krr
    from mklbook.kernels import Gaussian, KernelBank
    X, y = make_regression(n_samples=40, n_features=4, noise=5.0, random_state=3)
    y = (y - y.mean()) / y.std()
    Ks = KernelBank([Gaussian(g) for g in (0.05, 0.3, 2.0)], center=True, normalize="trace").fit_transform(X)
    r = alignment_krr(Ks, y, eta=eta, eta1=eta1, eta2=eta2, tol=1e-9)
    Kc = [K for K in Ks]
    a = np.array([y @ K @ y for K in Kc])
    M = np.array([[np.sum(K * L) for L in Kc] for K in Kc])
    mu = cp.Variable(len(Kc), nonneg=True)
    F = cp.matrix_frac(y, sum(mu[k] * Kc[k] for k in range(len(Kc))) + np.eye(len(y))) - eta * a @ mu \
        + cp.quad_form(mu, eta2 * M + eta1 * np.eye(len(Kc)), assume_PSD=True)
    ref = cp.Problem(cp.Minimize(F)).solve(solver="CLARABEL")
    assert r.objective == pytest.approx(ref, rel=1e-5, abs=1e-6)
