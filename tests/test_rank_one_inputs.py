"""Bad inputs to RankOneMKL and RegressionClassifier: each is refused with a message that names the estimator and the fix
(the cases of benchmarks/bad_inputs.py); inputs RankOneMKL should take (entries of any magnitude, sparse CSR) give the
predictions of the plain array."""
import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import Ridge
from sklearn.utils._param_validation import InvalidParameterError

from mklbook.alignment_experiments import RankOneMKL
from mklbook.benchmark import RegressionClassifier

XR, YR = make_regression(60, 5, n_informative=3, noise=5.0, random_state=0)
XC, YC = make_classification(60, 5, n_informative=3, n_redundant=1, random_state=0)


def _with(A, idx, v):
    A = A.copy()
    A[idx] = v
    return A


def _strings_in(X):
    X = X.astype(object)
    X[:, 1] = np.where(X[:, 1].astype(float) > 0, "high", "low")
    return X


def _fit(est, X, y):
    return lambda: est.fit(X, y)


def _predict_before_fit(est, X):
    return lambda: est.predict(X)


def _predict_narrow(est, X, y):
    est.fit(X, y)
    return lambda: est.predict(X[:, :4])


R1, RC = "RankOneMKL", "RegressionClassifier"
# id: (estimator factory, call factory, exception type, regexes the message must match: the estimator, the fix)
CASES = {
    # hyper-parameters: scikit-learn's declaration, naming the estimator and the parameter
    "r1-C-string": (lambda: RankOneMKL(C="x"), lambda e: _fit(e, XR, YR), InvalidParameterError,
                    [r"'C' parameter of RankOneMKL", r"must be a float in the range \(0\.0, inf\)"]),
    "r1-C-negative": (lambda: RankOneMKL(C=-1.0), lambda e: _fit(e, XR, YR), InvalidParameterError,
                      [r"'C' parameter of RankOneMKL", r"must be a float"]),
    "r1-Lambda-negative": (lambda: RankOneMKL(Lambda=-1), lambda e: _fit(e, XR, YR), InvalidParameterError,
                           [r"'Lambda' parameter of RankOneMKL", r"must be a float"]),
    "r1-alpha-negative": (lambda: RankOneMKL(alpha=-1), lambda e: _fit(e, XR, YR), InvalidParameterError,
                          [r"'alpha' parameter of RankOneMKL", r"must be a float"]),   # not KernelRidge's alpha
    "r1-method": (lambda: RankOneMKL(method="x"), lambda e: _fit(e, XR, YR), InvalidParameterError,
                  [r"'method' parameter of RankOneMKL", r"must be a str among .*alignf"]),
    "r1-task": (lambda: RankOneMKL(task="x"), lambda e: _fit(e, XR, YR), InvalidParameterError,
                [r"'task' parameter of RankOneMKL", r"must be a str among .*classification"]),
    "rc-regressor-string": (lambda: RegressionClassifier(regressor="svr"), lambda e: _fit(e, XC, YC),
                            InvalidParameterError,
                            [r"'regressor' parameter of RegressionClassifier", r"must be None or an object implementing"]),
    "rc-regressor-int": (lambda: RegressionClassifier(regressor=5), lambda e: _fit(e, XC, YC), InvalidParameterError,
                         [r"'regressor' parameter of RegressionClassifier", r"'fit' and 'predict'"]),
    # data
    "r1-nan-X": (RankOneMKL, lambda e: _fit(e, _with(XR, (3, 2), np.nan), YR), ValueError,
                 [r"RankOneMKL does not accept missing values", r"imputer"]),
    "r1-inf-X": (RankOneMKL, lambda e: _fit(e, _with(XR, (3, 2), np.inf), YR), ValueError,
                 [r"RankOneMKL", r"contains infinity"]),
    "r1-X-1d": (RankOneMKL, lambda e: _fit(e, XR[:, 0], YR), ValueError, [r"RankOneMKL", r"Reshape your data"]),
    "r1-X-3d": (RankOneMKL, lambda e: _fit(e, XR.reshape(60, 5, 1), YR), ValueError,
                [r"RankOneMKL", r"dim <= 2 is required"]),
    "r1-len-mismatch": (RankOneMKL, lambda e: _fit(e, XR, YR[:-3]), ValueError,
                        [r"RankOneMKL", r"inconsistent numbers of samples: \[60, 57\]"]),
    "r1-empty": (RankOneMKL, lambda e: _fit(e, XR[:0], YR[:0]), ValueError,
                 [r"RankOneMKL", r"minimum of 2 is required"]),
    "r1-single-sample": (RankOneMKL, lambda e: _fit(e, XR[:1], YR[:1]), ValueError,
                         [r"RankOneMKL", r"1 sample.*minimum of 2 is required"]),
    "r1-constant": (RankOneMKL, lambda e: _fit(e, np.ones((10, 3)), np.arange(10.0)), ValueError,
                    [r"RankOneMKL: every feature is constant on the training rows; nothing to learn"]),
    "r1-strings-X": (RankOneMKL, lambda e: _fit(e, _strings_in(XR), YR), ValueError,
                     [r"RankOneMKL: X holds non-numeric values", r"Encode categorical columns"]),
    "r1-nan-y": (RankOneMKL, lambda e: _fit(e, XR, _with(YR, 4, np.nan)), ValueError,
                 [r"RankOneMKL: Input y contains NaN", r"Drop the rows whose target is missing"]),
    "r1-string-y": (RankOneMKL, lambda e: _fit(e, XR, np.where(YR > 0, "a", "b")), ValueError,
                    [r"RankOneMKL with task='regression' is a regressor", r"set task='classification'"]),
    "r1-continuous-y-classification": (lambda: RankOneMKL(task="classification"), lambda e: _fit(e, XR, YR),
                                       ValueError, [r"RankOneMKL with task='classification'",
                                                    r"for regression set task='regression'"]),
    "r1-l1svm-three-classes": (lambda: RankOneMKL("l1svm", "classification"),
                               lambda e: _fit(e, XC, np.arange(60) % 3), ValueError,
                               [r"RankOneMKL is a binary classifier", r"use a multi-class method"]),
    "r1-predict-before-fit": (RankOneMKL, lambda e: _predict_before_fit(e, XR), NotFittedError,
                              [r"This RankOneMKL instance is not fitted yet", r"Call 'fit'"]),
    "r1-predict-wrong-width": (RankOneMKL, lambda e: _predict_narrow(e, XR, YR), ValueError,
                               [r"X has 4 features, but RankOneMKL is expecting 5 features"]),
    "rc-strings-X": (RegressionClassifier, lambda e: _fit(e, _strings_in(XC), YC), ValueError,
                     [r"RegressionClassifier: X holds non-numeric values", r"OneHotEncoder"]),
    "rc-one-class": (RegressionClassifier, lambda e: _fit(e, XC, np.zeros(60, dtype=int)), ValueError,
                     [r"RegressionClassifier: y has one class", r"needs two"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_refused_clearly(case):
    make, call, exc, patterns = CASES[case]
    est = make()
    run = call(est)
    with pytest.raises(exc) as info:
        run()
    msg = str(info.value)
    assert (R1 if case.startswith("r1") else RC) in msg, msg
    for p in patterns:
        assert re.search(p, msg), (p, msg)


@pytest.mark.parametrize("method, task", [("align", "regression"), ("l2krr", "regression"),
                                          ("alignf", "classification"), ("l1svm", "classification")])
@pytest.mark.parametrize("factor", [1e200, 1e-200])
def test_rank_one_predictions_do_not_depend_on_the_magnitude(method, task, factor):
    "Column statistics are taken in units of each column's largest magnitude: nothing overflows or underflows."
    X, y = (XR, YR) if task == "regression" else (XC, YC)
    ref = RankOneMKL(method, task).fit(X, y)
    est = RankOneMKL(method, task).fit(X * factor, y)
    np.testing.assert_allclose(est.weights_, ref.weights_, rtol=1e-9, atol=1e-12)
    if task == "regression":
        np.testing.assert_allclose(est.predict(X * factor), ref.predict(X), rtol=1e-9, atol=1e-9 * np.std(y))
    else:
        np.testing.assert_array_equal(est.predict(X * factor), ref.predict(X))


@pytest.mark.parametrize("method, task", [("align", "regression"), ("unif", "regression"),
                                          ("align", "classification"), ("l1svm", "classification")])
def test_rank_one_sparse_csr_gives_the_dense_predictions(method, task):
    "Sparse CSR input (e.g. bigram counts) is accepted, in fit and predict, and gives the dense answer."
    rng = np.random.default_rng(0)
    X = rng.poisson(0.5, size=(80, 12)).astype(float)
    y = X[:, 0] - X[:, 3] + 0.3 * rng.standard_normal(80)
    if task == "classification":
        y = np.where(y > np.median(y), "pos", "neg")
    dense = RankOneMKL(method, task).fit(X[:60], y[:60])
    sparse = RankOneMKL(method, task).fit(sp.csr_matrix(X[:60]), y[:60])
    assert sparse.n_features_in_ == 12
    for Xt in (sp.csr_matrix(X[60:]), sp.csc_matrix(X[60:]), X[60:]):
        if task == "regression":
            np.testing.assert_allclose(sparse.predict(Xt), dense.predict(X[60:]), rtol=1e-10, atol=1e-10)
        else:
            np.testing.assert_array_equal(sparse.predict(Xt), dense.predict(X[60:]))
    np.testing.assert_allclose(sparse.held_out_alignment(sp.csr_matrix(X[60:]), y[60:]),
                               dense.held_out_alignment(X[60:], y[60:]), rtol=1e-10)


def test_a_constant_column_is_dropped_exactly():
    "A constant column (whose mean may round) is no feature: the fit equals the fit without it."
    X = np.c_[XR, np.full(60, 0.1)]
    a = RankOneMKL().fit(XR, YR)
    b = RankOneMKL().fit(X, YR)
    assert b.keep_.tolist() == [True] * 5 + [False]
    np.testing.assert_allclose(b.predict(X), a.predict(XR), rtol=1e-12, atol=1e-12)


def test_regression_classifier_still_takes_a_regressor():
    "The declaration takes any object with fit and predict (and None, the default)."
    clf = RegressionClassifier(Ridge()).fit(XC, YC)
    assert set(clf.predict(XC)) <= set(YC)
    assert RegressionClassifier().get_params()["regressor"] is None
