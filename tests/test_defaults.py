"""Every estimator with its defaults on the features a user has (raw or standardised, balanced or not), and the table of
bad inputs: each gets the error that names the problem and the fix, or the right answer, never a silent wrong one."""
import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC

from mklbook.alignment import (AlignMKL, AlignmentKRR, align_weights, alignf_weights, alignment, alignment_krr,
                               alignment_stats, linear_alignment_weights)
from mklbook.alignment_experiments import RankOneMKL
from mklbook.baselines import L1MKL, L2KRRMKL, UniformMKL, l1_mkl, l2_krr_mkl
from mklbook.benchmark import RegressionClassifier, default_suite, meets_default_rule
from mklbook.estimators import default_scores
from mklbook.kernels import Gaussian, KernelBank, Linear, Precomputed, Sigmoid, gaussian_bank
from mklbook.lowrank import LowRankAlignMKL
from mklbook.m3k import M3KClassifier, solve_m3k
from mklbook.m3k_experiments import UniformCSClassifier
from mklbook.pep import FKLClassifier, FKLRegressor, IFKLClassifier, IFKLRegressor, fkl
from mklbook.solvers import crammer_singer_dual, kernel_ridge, svm_dual, svr_dual
from mklbook.vcmkl import VCMKLClassifier, solve_vcmkl
from mklbook.vkr import VKRClassifier

# ----------------------------------------------------------------------------------------------------------------------
# 1. defaults: at least the trivial predictor, and no worse than scikit-learn's default machine minus 3 points
# ----------------------------------------------------------------------------------------------------------------------

ESTIMATORS, DATASETS = default_suite(data="sklearn", max_rows=150)
CLASSIFIERS = {k: v for k, v in ESTIMATORS.items() if is_classifier(v)}
REGRESSORS = {k: v for k, v in ESTIMATORS.items() if not is_classifier(v)}
MULTICLASS_SETS = {"wine", "iris", "digits", "digits (imbalanced)"}


@pytest.fixture(scope="module")
def default_rows():
    from joblib import Parallel, delayed

    def one(name, Xy):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                          # convergence notes of single fits: not the point
            return default_scores(ESTIMATORS, {name: Xy}, cv=3, random_state=0)
    return [r for rows in Parallel(n_jobs=2)(delayed(one)(k, v) for k, v in DATASETS.items()) for r in rows]


# The rows where a default is known to miss the rule, each with the measured reason (the estimators chapter and the
# note of issue 26 say so). They are still held to a looser bound, so that they cannot get worse unnoticed.
KNOWN_SHORT = {
    ("M3KClassifier", "digits"): (0.06, "raw 8x8 digits: SVC() on the raw pixels (gamma='scale') beats every "
                                        "standardised bank (SVC() itself loses 6 points standardised); M3K's default "
                                        "bank stops at gamma='scale' on standardised pixels (chapter 40) and reaches 0.887"),
    ("UniformCSClassifier", "digits"): (0.06, "as M3KClassifier: 0.893 against SVC() raw 0.933"),
    ("VCMKLClassifier", "synthetic 10% pos, rescaled"): (0.04, "0.900 against SVC() standardised 0.933 at 150 rows, one "
        "test point short: in one fold the rule-set search on its 100 training rows preferred one Gaussian rule (CV 0.96) "
        "to three linear ones (0.94), and it scored 0.90 on that fold's 50 test rows against 0.94 for the linear rules; "
        "over the registry the search gains (chapter 50; a one-standard-error preference for the linear rules cost "
        "5-9 points on sonar, liver and musk)"),
    ("TwoLayerMKL", "synthetic 10% pos, rescaled"): (0.05, "0.893 against SVC() standardised 0.933 at 150 rows. The "
        "method minimises the SVM dual over the weights, which rewards the kernel that separates the training sample: "
        "55-82 % of the weight goes to the narrowest Gaussian, training accuracy is 1.0, and the held-out positives' "
        "decision values (-0.96 .. -0.01) rank above the negatives' median (-0.86) but stay below the threshold 0, so "
        "every test point is called negative (C = 10 or p = 2 do not change it; radius 3 gains one fold)"),
}


@pytest.mark.parametrize("name", list(CLASSIFIERS) + list(REGRESSORS))
def test_defaults_meet_the_rule_on_raw_and_standardised_features(default_rows, name):
    """score >= max(majority rate - 0.01, SVC()/SVR() - 0.03), on raw and on standardised features, on scikit-learn's
    data and on imbalanced variants (5, 10, 20 % positives; digits with geometrically decaying class sizes)."""
    rows = [r for r in default_rows if r["estimator"] == name and r["raw"] is not None]
    assert rows, f"{name} was measured on no data set"
    for r in rows:
        slack = KNOWN_SHORT.get((name, r["dataset"]), (0.03, ""))[0]
        for scaling in ("raw", "std"):
            score, ref = r[scaling], r[f"ref_{scaling}"]
            where = f"{name} on {r['dataset']} ({scaling}): {score:.3f}"
            assert score >= r["trivial"] - 0.01 - 1e-9, f"{where} is below the majority rule's {r['trivial']:.3f} - 0.01"
            assert score >= ref - slack, f"{where} is more than {slack:.2f} below scikit-learn's default machine ({ref:.3f})"
        if (name, r["dataset"]) not in KNOWN_SHORT:
            assert meets_default_rule(r)


def test_the_known_exceptions_are_still_measured(default_rows):
    "Every documented exception names a row that exists (an exception that no longer applies is removed)."
    measured = {(r["estimator"], r["dataset"]) for r in default_rows if r["raw"] is not None}
    assert set(KNOWN_SHORT) <= measured
    short = {(r["estimator"], r["dataset"]) for r in default_rows if r["raw"] is not None and not meets_default_rule(r)}
    assert short <= set(KNOWN_SHORT), f"rows below the rule that are not documented: {sorted(short - set(KNOWN_SHORT))}"


def test_every_binary_estimator_is_measured_on_the_binary_sets(default_rows):
    skipped = {(r["estimator"], r["dataset"]) for r in default_rows if r["raw"] is None}
    assert all(d in MULTICLASS_SETS for _, d in skipped), f"only multi-class sets may be skipped: {sorted(skipped)}"
    binary_only = {k for k, v in CLASSIFIERS.items() if not v.__sklearn_tags__().classifier_tags.multi_class}
    assert {e for e, _ in skipped} == binary_only


# ----------------------------------------------------------------------------------------------------------------------
# 2. fitted attributes mean one thing, kernels survive clone, defaults are deterministic
# ----------------------------------------------------------------------------------------------------------------------

MKL = {**{k: v for k, v in CLASSIFIERS.items() if k != "RegressionClassifier"}, "AlignmentKRR": AlignmentKRR(),
       "L2KRRMKL": L2KRRMKL(), "FKLRegressor": FKLRegressor(), "IFKLRegressor": IFKLRegressor()}


@pytest.mark.parametrize("name", list(MKL))
def test_weights_are_a_distribution_over_the_bank(name):
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[::4], (y[::4] if name not in ("AlignmentKRR", "L2KRRMKL", "FKLRegressor", "IFKLRegressor")
                    else X[::4, 0] * 1.0)
    X = X[:, 1:] if y.dtype.kind == "f" else X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = clone(MKL[name]).fit(X, y), clone(MKL[name]).fit(X, y)
    w = a.weights_
    assert (w >= 0).all() and np.isclose(w.sum(), 1.0), f"{name}.weights_ = {w}"
    n = len(a.bank_.kernels_)
    assert w.shape == (n,), f"{name}: {w.shape} weights for {n} kernels"
    np.testing.assert_array_equal(a.weights_, b.weights_)          # deterministic by default
    assert "kernels" in a.get_params(), f"{name} takes no kernels="


def test_banks_with_columns_and_precomputed_kernels_survive_clone_grid_search_and_pickle():
    import pickle
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:120], y[:120]
    for est in (AlignMKL([Gaussian(0.1, columns=[0, 1]), Linear(columns=np.arange(2, 8), standardize=True)]),
                AlignMKL([Precomputed(Gaussian(1e-5)(X)), Precomputed(Linear(standardize=True)(X))])):
        Z = np.arange(len(y))[:, None] if isinstance(est.kernels[0], Precomputed) else X
        gs = GridSearchCV(est, {"estimator": [SVC(kernel="precomputed", C=c) for c in (0.1, 10.0)]}, cv=3).fit(Z, y)
        assert gs.best_score_ > 0.8
        back = pickle.loads(pickle.dumps(gs.best_estimator_))
        np.testing.assert_array_equal(back.predict(Z[:10]), gs.best_estimator_.predict(Z[:10]))


def test_vkr_works_with_precomputed_kernels_and_its_defaults():
    X, y = load_breast_cancer(return_X_y=True)
    X, y, idx = X[:150], y[:150], np.arange(150)[:, None]
    K = Gaussian(1.0, standardize=True)(X)
    est = VKRClassifier(kernels=[Precomputed(K)]).fit(idx[:100], y[:100])
    ref = VKRClassifier(kernels=[Gaussian(1.0, standardize=True)], scale_inputs=False).fit(X[:100], y[:100])
    assert est.input_scale_ == 1.0
    assert est.score(idx[100:], y[100:]) > 0.85
    # standardised on the first 100 rows (the bank) and on all 150 rows (K): close, not equal
    assert np.mean(est.predict(idx[100:]) == ref.predict(X[100:])) > 0.9


# ----------------------------------------------------------------------------------------------------------------------
# 3. bad input: the error names the problem and the fix
# ----------------------------------------------------------------------------------------------------------------------

_rng = np.random.default_rng(0)
_X = _rng.standard_normal((40, 3))
_y = np.where(_X[:, 0] + 0.3 * _rng.standard_normal(40) > 0, 1, -1)
_K = np.stack([Gaussian(g)(_X) for g in (0.2, 1.0)])                       # a PSD stack
_ASYM = _K.copy()
_ASYM[:, 0, 1] += 0.05                                                     # not symmetric
_SIG = Sigmoid(1.0, -3.0)(_X)
_INDEF = np.stack([_K[0], _SIG])                                           # one indefinite kernel
_SYM_FIX = r"\(K \+ K\.T\) / 2"
_PSD_FIX = r"not positive semi-definite.*(psd='allow'|drop non-PSD)"


def _vc_result():
    return solve_vcmkl(_K, _y, nu=0.05, solver="am", warn=False)


def _linear_indefinite():
    "A bank whose maximum-alignment linear combination (Prop. 8) is indefinite: large weights of both signs."
    X, y = load_breast_cancer(return_X_y=True)
    return lambda: AlignMKL(gaussian_bank([0.01, 0.011, 0.012, 1.0]), method="linear").fit(X[:200], y[:200])


BAD = {  # case -> (call, exception type, what the message must say)
    # the kernel contract at layer 1: symmetry
    "alignment, not symmetric": (lambda: alignment(_ASYM[0], _K[1]), ValueError, _SYM_FIX),
    "alignment_stats, not symmetric": (lambda: alignment_stats(_ASYM, _y), ValueError, _SYM_FIX),
    "align_weights, not symmetric": (lambda: align_weights(_ASYM, _y), ValueError, _SYM_FIX),
    "alignf_weights, not symmetric": (lambda: alignf_weights(_ASYM, _y), ValueError, _SYM_FIX),
    "linear_alignment_weights, not symmetric": (lambda: linear_alignment_weights(_ASYM, _y), ValueError, _SYM_FIX),
    "alignment_krr, not symmetric": (lambda: alignment_krr(_ASYM, _y * 1.0), ValueError, _SYM_FIX),
    "l1_mkl, not symmetric": (lambda: l1_mkl(_ASYM, _y), ValueError, _SYM_FIX),
    "l2_krr_mkl, not symmetric": (lambda: l2_krr_mkl(_ASYM, _y * 1.0), ValueError, _SYM_FIX),
    "svm_dual, not symmetric": (lambda: svm_dual(_ASYM[0], _y), ValueError, _SYM_FIX),
    "svr_dual, not symmetric": (lambda: svr_dual(_ASYM[0], _y * 1.0), ValueError, _SYM_FIX),
    "kernel_ridge, not symmetric": (lambda: kernel_ridge(_ASYM[0], _y * 1.0, 1.0), ValueError, _SYM_FIX),
    "crammer_singer_dual, not symmetric": (lambda: crammer_singer_dual(_ASYM[0], _y), ValueError, _SYM_FIX),
    "solve_m3k, not symmetric": (lambda: solve_m3k(_ASYM, _y), ValueError, _SYM_FIX),
    "fkl, not symmetric": (lambda: fkl(_ASYM, _y), ValueError, _SYM_FIX),
    "solve_vcmkl, not symmetric": (lambda: solve_vcmkl(_ASYM, _y, nu=0.05), ValueError, _SYM_FIX),
    # ... and positive semi-definiteness for the methods that need it
    "align_weights, indefinite": (lambda: align_weights(_INDEF, _y), ValueError, _PSD_FIX),
    "alignf_weights, indefinite": (lambda: alignf_weights(_INDEF, _y), ValueError, _PSD_FIX),
    "alignment_krr, indefinite": (lambda: alignment_krr(_INDEF, _y * 1.0), ValueError, _PSD_FIX),
    "alignment_krr, psd='allow'": (lambda: alignment_krr(_INDEF, _y * 1.0, psd="allow"), ValueError,
                                   r"K_mu \+ I positive definite.*psd='check'"),
    "l1_mkl, indefinite": (lambda: l1_mkl(_INDEF, _y), ValueError, _PSD_FIX),
    "l2_krr_mkl, indefinite": (lambda: l2_krr_mkl(_INDEF, _y * 1.0), ValueError, _PSD_FIX),
    "svm_dual, indefinite": (lambda: svm_dual(_SIG, _y), ValueError, _PSD_FIX),
    "svr_dual, indefinite": (lambda: svr_dual(_SIG, _y * 1.0), ValueError, _PSD_FIX),
    "kernel_ridge, indefinite": (lambda: kernel_ridge(_SIG, _y * 1.0, 1.0), ValueError, _PSD_FIX),
    "crammer_singer_dual, indefinite": (lambda: crammer_singer_dual(_SIG, _y), ValueError, _PSD_FIX),
    "solve_m3k, indefinite": (lambda: solve_m3k(_INDEF, _y), ValueError, _PSD_FIX),
    "fkl, indefinite": (lambda: fkl(_INDEF, _y), ValueError, _PSD_FIX),
    "solve_vcmkl, indefinite": (lambda: solve_vcmkl(_INDEF, _y, nu=0.05), ValueError, _PSD_FIX),
    # estimators
    "AlignMKL(method='linear'), indefinite combination": (_linear_indefinite(), ValueError,
                                                         r"not positive semi-definite.*method='alignf'.*psd='allow'"),
    "AlignMKL(estimator=SVC())": (lambda: AlignMKL(estimator=SVC()).fit(_X, _y), ValueError, r"kernel='precomputed'"),
    "AlignMKL, identical training rows": (lambda: AlignMKL().fit(np.ones((20, 3)), np.r_[[0] * 10, [1] * 10]),
                                          ValueError, r"constant on the training set.*identical"),
    "AlignMKL(explicit kernel), identical rows": (lambda: AlignMKL([Gaussian(1.0)]).fit(
        np.ones((20, 3)) * 7.0, np.r_[[0] * 10, [1] * 10]), ValueError, r"constant on the training set.*identical"),
    "AlignmentKRR, y of shape (40, 2)": (lambda: AlignmentKRR().fit(_X, np.c_[_y, _y] * 1.0), ValueError,
                                         r"shape \(40, 2\)"),
    "alignment_krr, y of shape (40, 2)": (lambda: alignment_krr(_K, np.c_[_y, _y] * 1.0), ValueError,
                                          r"1-D.*shape \(40, 2\)"),
    "L2KRRMKL(tol=0)": (lambda: L2KRRMKL(tol=0).fit(_X, _y * 1.0), ValueError,
                        r"The 'tol' parameter of L2KRRMKL must be a float in the range \(0\.0, inf\)"),
    "AlignmentKRR(tol=0)": (lambda: AlignmentKRR(tol=0).fit(_X, _y * 1.0), ValueError,
                            r"The 'tol' parameter of AlignmentKRR must be a float in the range \(0\.0, inf\)"),
    "M3KClassifier(intercept_scaling=-1)": (lambda: M3KClassifier(intercept_scaling=-1).fit(_X, _y), ValueError,
                                            r"The 'intercept_scaling' parameter of M3KClassifier must be a float in the "
                                            r"range \[0\.0, inf\)"),
    "VCMKLClassifier(nu_grid=(0, 2))": (lambda: VCMKLClassifier(nu_grid=(0, 2)).fit(_X, _y), ValueError,
                                        r"nu_grid must hold fractions in \(0, 1\]"),
    "VCMKL decision_function, NaN": (lambda: _vc_result().decision_function(np.full((2, 5, 40), np.nan)), ValueError,
                                     r"NaN or inf.*remove or impute"),
    "VCMKL decision_function, wrong stack": (lambda: _vc_result().decision_function(_K[:1, :5]), ValueError,
                                             r"\(p, n, m\) = \(2, n, 40\)"),
    "IFKL, non-PSD start": (lambda: IFKLClassifier(kernels=[Sigmoid(1.0, -3.0)], max_outer=1).fit(_X, _y), ValueError,
                            r"must be PSD"),
    "Precomputed, not square": (lambda: Precomputed(np.ones((3, 4))), ValueError, r"square \(N, N\)"),
    "Gaussian(columns=[0, 0])": (lambda: Gaussian(1.0, columns=[0, 0]), ValueError, r"lists a column twice"),
    # found by benchmarks/bad_inputs.py
    "AlignMKL, text in X": (lambda: AlignMKL().fit(np.c_[_X[:, :2], np.where(_y > 0, "high", "low")].astype(object), _y),
                            ValueError, r"AlignMKL: X holds non-numeric values.*OneHotEncoder"),
    "VCMKLClassifier, text in X": (lambda: VCMKLClassifier().fit(np.c_[_X[:, :2], np.where(_y > 0, "a", "b")], _y),
                                   ValueError, r"VCMKLClassifier: X holds non-numeric values.*Encode"),
    "AlignmentKRR, class labels": (lambda: AlignmentKRR().fit(_X, np.where(_y > 0, "a", "b")), ValueError,
                                   r"AlignmentKRR is a regressor.*RegressionClassifier\(AlignmentKRR\(\)\)"),
    "FKLRegressor, class labels": (lambda: FKLRegressor().fit(_X, np.where(_y > 0, "a", "b")), ValueError,
                                   r"FKLRegressor is a regressor.*RegressionClassifier"),
    "AlignMKL, negative-definite Precomputed": (lambda: AlignMKL([Precomputed(-_K[0])]).fit(np.arange(40)[:, None], _y),
                                                ValueError, r"needs positive semi-definite kernels.*not PSD"),
    "VCMKLClassifier(kernels=[1, 2])": (lambda: VCMKLClassifier(kernels=[1, 2]).fit(_X, _y), TypeError,
                                        r"1 is not a mklbook kernel.*Precomputed"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_gets_an_error_that_names_the_fix(case):
    call, exc, fix = BAD[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc) as info:
            call()
    assert re.search(fix, str(info.value), flags=re.S), f"{case}: unclear message: {info.value}"


# the opt-in to indefinite kernels reports a stationary point, never "optimal"
@pytest.mark.parametrize("call", [lambda: alignf_weights(_INDEF, _y, psd="allow"),
                                  lambda: l1_mkl(_INDEF, _y, psd="allow")])
def test_indefinite_kernels_accepted_by_opt_in_are_stationary_points(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = call()
    assert res.status != "optimal"
    assert res.status in ("stationary point", "max_iter", "inaccurate")


def test_indefinite_linear_combination_is_fitted_on_request_with_a_warning():
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.warns(UserWarning, match="stationary point"):
        AlignMKL(gaussian_bank([0.01, 0.011, 0.012, 1.0]), method="linear", psd="allow").fit(X[:200], y[:200])


# entries of magnitude 1e+-200: the default banks standardise, so they give the answer of unit-scale data; an explicit
# absolute kernel either overflows (an error naming the fix) or is constant on the sample (an error saying so)
EXTREME = {"AlignMKL": AlignMKL, "UniformMKL": UniformMKL, "L1MKL": L1MKL, "M3KClassifier": M3KClassifier,
           "FKLClassifier": FKLClassifier, "VKRClassifier": VKRClassifier, "VCMKLClassifier": VCMKLClassifier,
           "RegressionClassifier": RegressionClassifier}


@pytest.mark.parametrize("scale", [1e200, 1e-200])
@pytest.mark.parametrize("name", list(EXTREME))
def test_extreme_magnitudes_with_the_default_bank_give_the_unit_scale_answer(name, scale):
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[::6, :6] / X[::6, :6].std(0), y[::6]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = EXTREME[name]().fit(X, y).predict(X)
        got = EXTREME[name]().fit(X * scale, y).predict(X * scale)
    assert np.mean(got == ref) >= 0.98, f"{name} on X * {scale:g} disagrees with X on {np.mean(got != ref):.0%}"


@pytest.mark.parametrize("scale,fix", [(1e200, r"NaN or inf.*scale the features"),
                                       (1e-200, r"constant on the training set")])
@pytest.mark.parametrize("name", list(EXTREME))
def test_extreme_magnitudes_with_an_absolute_kernel_get_a_clear_error(name, scale, fix):
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[::6, :6] / X[::6, :6].std(0) * scale, y[::6]
    est = EXTREME[name]()
    key = "regressor" if name == "RegressionClassifier" else "kernels"
    if key == "regressor":
        est.set_params(regressor=AlignmentKRR([Gaussian(1.0)]))
    else:
        est.set_params(kernels=[Gaussian(1.0)] * (3 if name == "VCMKLClassifier" else 1))
    if name == "VKRClassifier":
        est.set_params(scale_inputs=False)     # its default divides X by the largest row norm: gamma is then relative
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError) as info:
            est.fit(X, y)
    assert re.search(fix, str(info.value), flags=re.S), f"{name} at {scale:g}: {info.value}"


@pytest.mark.parametrize("name", [k for k, v in ESTIMATORS.items() if "tol" in v.get_params()])
@pytest.mark.parametrize("bad", [0, -1e-3, True, "1e-3"])
def test_a_tolerance_must_be_a_positive_number(name, bad):
    X, y = _X, _y if is_classifier(ESTIMATORS[name]) else _X[:, 0]
    # scikit-learn's declaration refuses 0, -1e-3 and "1e-3"; it reads True as the number 1, which the solvers refuse
    msg = (rf"The 'tol' parameter of {type(ESTIMATORS[name]).__name__} must be a float in the range \(0\.0, inf\)"
           r"|tol must be a positive finite number; got True")
    with pytest.raises(ValueError, match=msg):
        clone(ESTIMATORS[name]).set_params(tol=bad).fit(X, y)


def test_label_messages_name_the_estimator_and_the_fix():
    "Mixed label types, real-valued targets and one class: each message names the estimator and what to do."
    from mklbook.estimators import check_classification_target
    with pytest.raises(ValueError, match=r"y mixes number, str\. AlignMKL needs labels of one type, e\.g\. y\.astype\(str\)"):
        check_classification_target(np.array([1, "a"] * 5, dtype=object), "AlignMKL")
    with pytest.raises(ValueError, match=r"L1MKL is a classifier, but y holds real values: for regression use"):
        check_classification_target(np.linspace(0, 1, 10), "L1MKL")
    with pytest.raises(ValueError, match="single class"):
        check_classification_target(np.zeros(10, dtype=int), "L1MKL")
    with pytest.raises(ValueError, match=r"L1MKL is a binary classifier and y has 3 classes: use a multi-class method"):
        check_classification_target(np.arange(9) % 3, "L1MKL", binary=True)


def test_a_constant_column_does_not_change_vcmkl_defaults():
    "The Gaussian rule's gamma = 1/d counts the features that vary: a constant column (zero once standardised) is no feature."
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:120, :6], y[:120]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = VCMKLClassifier().fit(X, y)
        b = VCMKLClassifier().fit(np.c_[X, np.full(len(y), 3.0)], y)
    np.testing.assert_allclose(b.decision_function(np.c_[X, np.full(len(y), 3.0)]), a.decision_function(X), atol=1e-8)
