"""Bad-input harness: what every public estimator (and a handful of layer-1 functions) does with inputs it should
refuse, and with unusual inputs it should take.

Each case is a short Python snippet run in its own process (`python -c`, cwd /tmp, 60 s timeout, one BLAS thread,
`PYTHONPATH` set to this checkout). The snippet builds small synthetic data (`make_classification` /
`make_regression`, 60 rows, 5 features), runs one estimator of `mklbook.benchmark.default_estimators()` with its
defaults (or one layer-1 function), and prints one JSON record: the exception (type, message, file of the raising
frame) or the predictions' health, the warnings emitted, and whether the caller's X / y were modified in place
(copies taken before, compared after).

Cases, per estimator:
  refuse  nan_X, inf_X, empty_X (0 rows), single_sample, len_mismatch (len(X) != len(y)), X_1d, X_3d,
          object_strings_X (dtype object holding strings), y_nan (regressors), single_class_y and
          continuous_y (classifiers), string_y (regressors), predict_before_fit, predict_wrong_n_features,
          and bad hyper-parameters: one or two values per parameter of `get_params()`, drawn so that they violate
          every entry of the estimator's `_parameter_constraints` (a string where a number is expected, a number below
          an interval's lower bound, an unknown option string, ...); estimators without `_parameter_constraints` get
          hand-written bad values; kernels_not_kernels (kernels=[1, 2]: passes the declared `list`, must still be
          refused clearly).
  work    list_of_lists, dataframe (fit and predict on a pandas DataFrame), constant_column, duplicated_rows,
          string_labels (classifiers: labels "neg"/"pos").
  either  sparse_csr (a correct fit, or a clear error saying to densify), huge_1e200 and tiny_1e-200 (entries of that
          magnitude: the default kernels standardise, so a correct answer, or a clear error).
Layer-1 functions (alignment_stats, align_weights, alignf_weights, KernelBank, Gaussian, Precomputed, combine,
svm_dual, kernel_ridge): non-symmetric stacks, wrong shapes, NaN in a kernel, negative-definite kernels with the
default PSD check, mismatched label lengths, bad scalar arguments, plus one valid call each as a control.

Outcome rules (applied in this order; written to be simple, and to say "unclear" when unsure so a human looks):
  1. hang          the process did not finish within the timeout.
  2. unclear       the process died without printing its record (crash), or the setup of a predict-stage case (the
                   fit on valid data) failed.
  3. silent wrong  the caller's X or y was modified in place (any case, whatever else happened).
  4. If an exception was raised:
     a. expect == "work" (valid input)             -> unclear (a valid input was refused; a human looks).
     b. type is IndexError, KeyError, AttributeError, ZeroDivisionError, LinAlgError, FloatingPointError,
        UnboundLocalError, NameError, AssertionError, RecursionError, OverflowError, MemoryError, or
        the raising frame is inside numpy/scipy, or the message is one of numpy's own (NUMPY_MESSAGES below:
        'could not convert string to float', 'operands could not be broadcast', 'singular matrix', ...)
                                                                           -> unclear.
     c. hyper-parameter case: the message names both the parameter and the estimator -> clear error (the reason
        notes when the type is not InvalidParameterError); otherwise   -> unclear (e.g. an InvalidParameterError of
        an inner scikit-learn estimator, or an unrelated error).
     c'. the message speaks of NaN/inf/infinity (interval bounds like "inf)" aside) while the case put none in
                                                                           -> unclear.
     d. type is InvalidParameterError or NotFittedError                  -> clear error.
     e. the message contains (case-insensitive) the estimator / function name, or one of: 'must', 'expected',
        'expecting', 'use ', 'got', 'fix', 'encode', 'densify', 'toarray', 'should', 'requires', 'required',
        'only ', 'needs', 'not supported', 'inconsistent numbers of samples', 'contains nan', 'contains infinity',
        'unknown label type', 'not symmetric', 'not positive semi', 'indefinite', 'refuse', 'give ', 'provide ',
        'pass ', 'fitted on'
                                                                           -> clear error.
     f. otherwise                                                          -> unclear.
  Simple keyword rules cannot tell whether a clear-looking message is about the right problem (an error naming an
  internal variable, or a different problem): the clear errors are worth a skim too (the summary lists each distinct
  message once with `--messages`, which reads DIR/results.json and runs nothing).
  5. If it ran without exception:
     a. expect == "refuse": -> warning if a warning other than RuntimeWarning / DeprecationWarning /
        PendingDeprecationWarning / FutureWarning was emitted (the user was told something), else silent wrong.
     b. expect in ("work", "either"): predictions (or, for layer-1 calls, every float array of the result) that have
        the wrong length, hold NaN/inf, or (classifiers) lie outside the training classes -> silent wrong; so are
        predictions that differ from those of the same estimator fitted on the plain float array (cases sparse_csr,
        list_of_lists, dataframe, huge_1e200, tiny_1e-200, constant_column, string_labels) on more than 10 % of the
        labels (classifiers) or by an RMS above 0.1 x the std of the reference predictions (regressors);
        otherwise -> warning if any warning other than DeprecationWarning / PendingDeprecationWarning /
        FutureWarning was emitted, else correct.

The dataframe cases need pandas, which mklbook does not depend on: without it they are left out (the run says so).
Run from the repository root:
    MKLBOOK_DATA=/work/shared/datasets python benchmarks/bad_inputs.py [--only NAME ...] [--out DIR]
`--only` keeps the cases whose id, estimator/function name or input kind equals one of the NAMEs, or whose id starts
with it; their records replace the same ids in an existing DIR/results.json (the default DIR is
benchmarks/results/bad_inputs). Prints a line every 25 cases, then a Markdown table of counts by outcome and the
"unclear", "silent wrong" and "hang" cases with their messages.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # test the checkout this script lives in
TIMEOUT = 60
SENTINEL = "@@BADINPUT@@"

# ---------------------------------------------------------------------------------------------------------------
# What runs in each child process: a prelude of helpers, then the case's code.
PRELUDE = r'''
import copy, json, sys, traceback, warnings
import numpy as np
import scipy.sparse as sp
REC = {"phase": "setup", "modified": False}
def _copy(a):
    if sp.issparse(a): return a.copy()
    if hasattr(a, "copy") and not isinstance(a, (list, tuple)): return a.copy(deep=True) if hasattr(a, "iloc") else a.copy()
    return copy.deepcopy(a)
def _same(a, b):
    try:
        if sp.issparse(a):
            return sp.issparse(b) and a.shape == b.shape and np.array_equal(a.toarray(), b.toarray(), equal_nan=True)
        if hasattr(a, "iloc"):
            return a.equals(b)
        A, B = np.asarray(a), np.asarray(b)
        if A.shape != B.shape or A.dtype != B.dtype: return False
        if A.dtype.kind in "fc": return np.array_equal(A, B, equal_nan=True)
        return bool(np.all(A == B))
    except Exception:
        return True      # cannot compare: do not claim a modification
def _floats(o, depth=0):
    if depth > 3: return []
    if isinstance(o, np.ndarray): return [o] if o.dtype.kind in "fc" else []
    if isinstance(o, (float, np.floating)): return [np.asarray(o)]
    if isinstance(o, (list, tuple)): return [a for v in o for a in _floats(v, depth + 1)]
    if isinstance(o, dict): return [a for v in o.values() for a in _floats(v, depth + 1)]
    if hasattr(o, "__dict__") and not isinstance(o, type): return [a for v in vars(o).values() for a in _floats(v, depth + 1)]
    return []
def _check_output(out, n=None, classes=None):
    """Health of an output: predictions (1-D of length n, finite, in classes), or every float array an object holds."""
    bad = []
    if n is not None:
        p = np.asarray(out)
        if p.dtype.kind in "fc" and not np.isfinite(p).all():
            bad.append("predictions hold NaN/inf")
        if p.ndim != 1 or p.shape[0] != n:
            bad.append(f"prediction shape {p.shape}, expected ({n},)")
        if classes is not None and p.ndim == 1:
            extra = set(np.unique(p).tolist()) - set(np.unique(np.asarray(classes)).tolist())
            if extra:
                bad.append(f"predictions outside the training classes: {sorted(map(str, extra))[:5]}")
    elif any(not np.isfinite(a).all() for a in _floats(out)):
        bad.append("output holds NaN/inf")
    REC["output_problems"] = bad
def _disagreement(p, ref, classifier):
    """Fraction of differing labels (classifiers), or RMS difference / std of the reference (regressors)."""
    p, ref = np.asarray(p), np.asarray(ref)
    if p.shape != ref.shape: return 1.0
    if classifier: return float(np.mean(p != ref))
    return float(np.sqrt(np.mean((p.astype(float) - ref) ** 2)) / max(np.std(ref), 1e-300))
def fit_predict(est, X, y, Xp=None, classifier=False, n_pred=None, ref=None):
    Xc, yc = _copy(X), _copy(y)
    Xpc = _copy(Xp) if Xp is not None else None
    try:
        REC["phase"] = "fit"
        est.fit(X, y)
        REC["phase"] = "predict"
        Z = X if Xp is None else Xp
        p = est.predict(Z)
        REC["phase"] = "done"
        n = n_pred if n_pred is not None else (Z.shape[0] if hasattr(Z, "shape") else len(Z))
        _check_output(p, n, y if classifier else None)
        if ref is not None:                 # the same data in another form: the same predictions, up to 10 %
            d = _disagreement(p, ref, classifier)
            REC["disagreement"] = d
            if d > 0.1:
                REC["output_problems"].append(f"predictions differ from those on the plain array ({d:.2f} "
                                              + ("of the labels)" if classifier else "x std, RMS)"))
    finally:
        REC["modified"] = REC["modified"] or not _same(X, Xc) or not _same(y, yc) or \
            (Xp is not None and not _same(Xp, Xpc))
def call(fn, *args, **kw):
    copies = [_copy(a) for a in args]
    try:
        REC["phase"] = "call"
        out = fn(*args, **kw)
        REC["phase"] = "done"
        _check_output(out)
        return out
    finally:
        REC["modified"] = REC["modified"] or any(not _same(a, c) for a, c in zip(args, copies) if not callable(a))
from sklearn.datasets import make_classification, make_regression
XC, YC = make_classification(60, 5, n_informative=3, n_redundant=1, random_state=0)
XR, YR = make_regression(60, 5, n_informative=3, noise=5.0, random_state=0)
'''

RUNNER = r'''
_code = sys.argv[1]
with warnings.catch_warnings(record=True) as _W:
    warnings.simplefilter("always")
    try:
        exec(_code, globals())
        REC["status"] = "ok"
    except BaseException as e:
        tb = traceback.extract_tb(e.__traceback__)
        REC.update(status="exception", exc_type=type(e).__name__,
                   exc_mro=[c.__name__ for c in type(e).__mro__], msg=str(e)[:2000],
                   raise_file=tb[-1].filename if tb else "", raise_line=tb[-1].lineno if tb else 0,
                   traceback=traceback.format_exc()[-3000:])
REC["warnings"] = [[w.category.__name__, str(w.message)[:300], w.filename] for w in _W]
print("''' + SENTINEL + r'''" + json.dumps(REC, default=str))
'''

# ---------------------------------------------------------------------------------------------------------------
# Cases
REGRESSORS_BY_TASK = {"RankOneMKL"}   # neither classifier nor regressor by sklearn's tags; default task="regression"


def _estimator_kinds():
    from sklearn.base import is_classifier
    from mklbook.benchmark import default_estimators
    return {name: ("classifier" if is_classifier(est) else "regressor") for name, est in default_estimators().items()}


def _est(name, params=None):
    s = f"from mklbook.benchmark import default_estimators\nest = default_estimators()[{name!r}]\n"
    if params:
        s += f"est.set_params(**{params!r})\n"
    return s


def _input_cases(name, kind):
    clf = kind == "classifier"
    X, y = ("XC", "YC") if clf else ("XR", "YR")
    c = f"classifier={clf}"
    fp = lambda Xe, ye, extra="": f"fit_predict(est, {Xe}, {ye}{extra}, {c})\n"
    ref = (f"from sklearn.base import clone\nREF = clone(est).fit({X}, {y}).predict({X})\n")
    fpr = lambda Xe, ye: ref + f"fit_predict(est, {Xe}, {ye}, {c}, ref=REF)\n"
    cases = [
        ("nan_X", "refuse", f"X = {X}.copy(); X[3, 2] = np.nan\n" + fp("X", y)),
        ("inf_X", "refuse", f"X = {X}.copy(); X[3, 2] = np.inf\n" + fp("X", y)),
        ("empty_X", "refuse", fp(f"{X}[:0]", f"{y}[:0]", f", Xp={X}[:5]")),
        ("single_sample", "refuse", fp(f"{X}[:1]", f"{y}[:1]")),
        ("len_mismatch", "refuse", fp(X, f"{y}[:-3]")),
        ("X_1d", "refuse", fp(f"{X}[:, 0]", y)),
        ("X_3d", "refuse", fp(f"{X}.reshape(60, 5, 1)", y)),
        ("object_strings_X", "refuse",
         f"X = {X}.astype(object); X[:, 1] = np.where({X}[:, 1] > 0, 'high', 'low')\n" + fp("X", y)),
        ("sparse_csr", "either", fpr(f"sp.csr_matrix({X})", y)),
        ("list_of_lists", "work", fpr(f"{X}.tolist()", f"{y}.tolist()")),
        ("dataframe", "work", "import pandas as pd\n"
         f"df = pd.DataFrame({X}, columns=[f'f{{j}}' for j in range(5)])\n" + fpr("df", f"pd.Series({y})")),
        ("huge_1e200", "either", fpr(f"{X} * 1e200", y)),
        ("tiny_1e-200", "either", fpr(f"{X} * 1e-200", y)),
        ("constant_column", "work", f"X = np.column_stack([{X}, np.full(60, 3.0)])\n" + fpr("X", y)),
        ("duplicated_rows", "work", f"X = np.vstack([{X}, {X}[:20]]); yy = np.concatenate([{y}, {y}[:20]])\n"
         + fp("X", "yy")),
        ("predict_before_fit", "refuse", "REC['phase'] = 'predict'\nest.predict(" + X + ")\n"),
        ("predict_wrong_n_features", "refuse",
         f"est.fit({X}, {y})\nREC['phase'] = 'predict'\nest.predict({X}[:, :4])\n"),
    ]
    if clf:
        cases += [
            ("single_class_y", "refuse", fp(X, "np.zeros(60, dtype=int)")),
            ("continuous_y", "refuse", fp(X, "YR")),
            ("string_labels", "work", "from sklearn.base import clone\n"
             "REF = np.where(clone(est).fit(XC, YC).predict(XC) == 1, 'pos', 'neg')\n"
             f"fit_predict(est, XC, np.where(YC == 1, 'pos', 'neg'), {c}, ref=REF)\n"),
        ]
    else:
        cases += [
            ("string_y", "refuse", fp(X, "np.where(YR > 0, 'a', 'b')")),
            ("y_nan", "refuse", f"y = {y}.copy(); y[4] = np.nan\n" + fp(X, "y")),
        ]
    return [dict(id=f"{name}/{kind_}", target=name, kind=kind_, expect=expect, code=_est(name) + body)
            for kind_, expect, body in cases]


def _violating_values(constraints):
    """One or two values that satisfy none of `constraints` (sklearn's `_parameter_constraints` entry)."""
    from numbers import Integral
    from sklearn.utils._param_validation import Interval, Options, StrOptions, make_constraint
    cons = [make_constraint(c) for c in constraints]
    ok = lambda v: any(c.is_satisfied_by(v) for c in cons)
    cands = ["not_an_option"]
    for c in cons:                            # values tailored to the numeric / option constraints
        if isinstance(c, Interval):
            integral = isinstance(c.type, type) and issubclass(c.type, Integral)
            if c.left is not None:
                cands.append(c.left - 1)      # below the lower bound (e.g. -1 where a positive number is expected)
            elif c.right is not None:
                cands.append(c.right + 1)
            if integral:
                cands.append(2.5)             # a float where an integer is expected
        elif isinstance(c, Options) and not isinstance(c, StrOptions):
            nums = [o for o in c.options if isinstance(o, (int, float))]
            cands.append(max(nums) + 17 if nums else 17)
    cands += [-1, -1.5, 5]
    # two values where a number or an option is expected; one for booleans, types, estimators, seeds
    n_values = 2 if any(isinstance(c, (Interval, Options)) for c in cons) else 1
    out = []
    for v in cands:
        if len(out) == n_values:
            break
        try:
            if not ok(v) and repr(v) not in map(repr, out):
                out.append(v)
        except Exception:
            continue
    return out


MANUAL_PARAMS = {   # estimators without _parameter_constraints, and parameters the declaration does not cover
    "RegressionClassifier": {"regressor": ["svr", 5]},
    "RankOneMKL": {"method": ["not_an_option"], "task": ["not_an_option"], "alpha": ["not_a_number", -1.0],
                   "C": ["not_a_number", -1.0], "Lambda": [-1.0]},
}


def _param_cases(name, kind):
    from mklbook.benchmark import default_estimators
    est = default_estimators()[name]
    cons = getattr(type(est), "_parameter_constraints", None) or {}
    X, y = ("XC", "YC") if kind == "classifier" else ("XR", "YR")
    out = []
    params = est.get_params(deep=False)
    for p in sorted(params):
        vals = MANUAL_PARAMS.get(name, {}).get(p)
        if vals is None:
            vals = _violating_values(cons[p]) if p in cons else ["not_an_option"]
        for i, v in enumerate(vals):
            code = _est(name, {p: v}) + f"fit_predict(est, {X}, {y}, classifier={kind == 'classifier'})\n"
            out.append(dict(id=f"{name}/param:{p}={v!r}", target=name, kind=f"param:{p}", param=p,
                            expect="refuse", code=code, constrained=p in cons))
    # a list that is not a list of kernels passes the declaration (list); it must still be refused clearly
    if "kernels" in params:
        code = _est(name, {"kernels": [1, 2]}) + f"fit_predict(est, {X}, {y}, classifier={kind == 'classifier'})\n"
        out.append(dict(id=f"{name}/kernels_not_kernels", target=name, kind="kernels_not_kernels",
                        expect="refuse", code=code))
    return out


L1_PRELUDE = r'''
from mklbook.kernels import KernelBank, Gaussian, Precomputed, combine, default_bank
from mklbook.alignment import alignment_stats, align_weights, alignf_weights
from mklbook.solvers import svm_dual, kernel_ridge
_X = XC[:30]; _y = YC[:30]; _yr = YR[:30]
KS = KernelBank([Gaussian(0.1), Gaussian(1.0)], normalize="trace", center=True).fit_transform(_X)
K = KS[0] * 30
NSD = -K                                  # negative semi-definite, symmetric
ASYM = KS.copy(); ASYM[0, 0, 1] += 0.5    # non-symmetric stack
'''


def _layer1_cases():
    R, W, E = "refuse", "work", "either"
    spec = [
        # alignment_stats(Ks, y)
        ("alignment_stats", "valid", W, "call(alignment_stats, KS, _y)"),
        ("alignment_stats", "non_symmetric_stack", R, "call(alignment_stats, ASYM, _y)"),
        ("alignment_stats", "wrong_shape_stack", R, "call(alignment_stats, KS[:, :, :-1], _y)"),
        ("alignment_stats", "nan_in_kernel", R, "S = KS.copy(); S[1, 2, 2] = np.nan\ncall(alignment_stats, S, _y)"),
        ("alignment_stats", "label_len_mismatch", R, "call(alignment_stats, KS, _y[:-2])"),
        ("alignment_stats", "stack_4d", R, "call(alignment_stats, KS[None], _y)"),
        # align_weights(Ks, y, q, psd)
        ("align_weights", "valid", W, "call(align_weights, KS, _y)"),
        ("align_weights", "non_symmetric_stack", R, "call(align_weights, ASYM, _y)"),
        ("align_weights", "negative_definite", R, "call(align_weights, np.stack([KS[0], -KS[1]]), _y)"),
        ("align_weights", "nan_in_kernel", R, "S = KS.copy(); S[0, 1, 1] = np.nan\ncall(align_weights, S, _y)"),
        ("align_weights", "label_len_mismatch", R, "call(align_weights, KS, _y[:-2])"),
        ("align_weights", "bad_q", R, "call(align_weights, KS, _y, q=0.5)"),
        ("align_weights", "bad_psd_option", R, "call(align_weights, KS, _y, psd='bogus')"),
        # alignf_weights(Ks, y, tol, psd)
        ("alignf_weights", "valid", W, "call(alignf_weights, KS, _y)"),
        ("alignf_weights", "non_symmetric_stack", R, "call(alignf_weights, ASYM, _y)"),
        ("alignf_weights", "negative_definite", R, "call(alignf_weights, np.stack([KS[0], -KS[1]]), _y)"),
        ("alignf_weights", "nan_in_kernel", R, "S = KS.copy(); S[0, 1, 1] = np.nan\ncall(alignf_weights, S, _y)"),
        ("alignf_weights", "label_len_mismatch", R, "call(alignf_weights, KS, _y[:-2])"),
        ("alignf_weights", "wrong_shape_stack", R, "call(alignf_weights, KS[:, :-1, :], _y)"),
        ("alignf_weights", "bad_tol", R, "call(alignf_weights, KS, _y, tol=-1.0)"),
        # KernelBank
        ("KernelBank", "valid", W, "call(KernelBank([Gaussian(1.0)], normalize='trace').fit_transform, _X)"),
        ("KernelBank", "nan_X", R, "X = _X.copy(); X[0, 0] = np.nan\ncall(KernelBank().fit_transform, X)"),
        ("KernelBank", "inf_X", R, "X = _X.copy(); X[0, 0] = np.inf\ncall(KernelBank().fit_transform, X)"),
        ("KernelBank", "X_1d", R, "call(KernelBank().fit_transform, _X[:, 0])"),
        ("KernelBank", "transform_wrong_n_features", R,
         "b = KernelBank().fit(_X)\ncall(b.transform, _X[:, :3])"),
        ("KernelBank", "bad_normalize", R, "call(KernelBank(normalize='bogus').fit_transform, _X)"),
        ("KernelBank", "kernels_not_kernels", R, "call(KernelBank(kernels=[1, 2]).fit_transform, _X)"),
        ("KernelBank", "transform_before_fit", R, "call(KernelBank().transform, _X)"),
        # Gaussian
        ("Gaussian", "valid", W, "call(Gaussian(0.5), _X)"),
        ("Gaussian", "negative_gamma", R, "call(lambda X: Gaussian(-1.0)(X), _X)"),
        ("Gaussian", "string_gamma", R, "call(lambda X: Gaussian('wide')(X), _X)"),
        ("Gaussian", "mismatched_n_features", R, "call(Gaussian(0.5), _X, _X[:, :3])"),
        ("Gaussian", "nan_X", R, "X = _X.copy(); X[0, 0] = np.nan\ncall(Gaussian(0.5), X)"),
        ("Gaussian", "X_1d", R, "call(Gaussian(0.5), _X[:, 0])"),
        # Precomputed
        ("Precomputed", "valid", W, "k = Precomputed(K)\ncall(k, np.arange(30)[:, None])"),
        ("Precomputed", "non_symmetric", R, "A = K.copy(); A[0, 1] += 1.0\ncall(Precomputed, A)"),
        ("Precomputed", "non_square", R, "call(Precomputed, K[:, :-1])"),
        ("Precomputed", "nan", R, "A = K.copy(); A[2, 2] = np.nan\ncall(Precomputed, A)"),
        ("Precomputed", "index_out_of_range", R, "k = Precomputed(K)\ncall(k, np.arange(25, 35)[:, None])"),
        ("Precomputed", "non_integer_index", R, "k = Precomputed(K)\ncall(k, np.linspace(0, 3, 7)[:, None])"),
        ("Precomputed", "negative_definite_in_estimator", R,
         "from mklbook.alignment import AlignMKL\n"
         "Xi = np.arange(30)[:, None]\nfit_predict(AlignMKL(kernels=[Precomputed(NSD)]), Xi, _y, classifier=True)"),
        # combine
        ("combine", "valid", W, "call(combine, KS, [0.5, 0.5])"),
        ("combine", "weights_wrong_length", R, "call(combine, KS, [0.2, 0.3, 0.5])"),
        ("combine", "nan_weights", R, "call(combine, KS, [np.nan, 1.0])"),
        ("combine", "nan_in_kernel", R, "S = KS.copy(); S[0, 1, 1] = np.nan\ncall(combine, S, [0.5, 0.5])"),
        # svm_dual(K, y, C, tol, loss, max_iter, psd)
        ("svm_dual", "valid", W, "call(svm_dual, K, _y)"),
        ("svm_dual", "non_symmetric", R, "A = K.copy(); A[0, 1] += 1.0\ncall(svm_dual, A, _y)"),
        ("svm_dual", "negative_definite", R, "call(svm_dual, NSD, _y)"),
        ("svm_dual", "nan_in_kernel", R, "A = K.copy(); A[2, 2] = np.nan\ncall(svm_dual, A, _y)"),
        ("svm_dual", "wrong_shape", R, "call(svm_dual, K[:, :-1], _y)"),
        ("svm_dual", "label_len_mismatch", R, "call(svm_dual, K, _y[:-2])"),
        ("svm_dual", "three_classes", R, "yy = np.arange(30) % 3\ncall(svm_dual, K, yy)"),
        ("svm_dual", "single_class", R, "call(svm_dual, K, np.ones(30))"),
        ("svm_dual", "negative_C", R, "call(svm_dual, K, _y, C=-1.0)"),
        ("svm_dual", "bad_loss", R, "call(svm_dual, K, _y, loss='log')"),
        ("svm_dual", "bad_psd_option", R, "call(svm_dual, K, _y, psd='bogus')"),
        # kernel_ridge(K, y, lam, fit_intercept, tol, psd)
        ("kernel_ridge", "valid", W, "call(kernel_ridge, K, _yr, 1.0)"),
        ("kernel_ridge", "negative_lam", R, "call(kernel_ridge, K, _yr, -1.0)"),
        ("kernel_ridge", "string_lam", R, "call(kernel_ridge, K, _yr, 'auto')"),
        ("kernel_ridge", "non_symmetric", R, "A = K.copy(); A[0, 1] += 1.0\ncall(kernel_ridge, A, _yr, 1.0)"),
        ("kernel_ridge", "negative_definite", R, "call(kernel_ridge, NSD, _yr, 1.0)"),
        ("kernel_ridge", "nan_in_kernel", R, "A = K.copy(); A[2, 2] = np.nan\ncall(kernel_ridge, A, _yr, 1.0)"),
        ("kernel_ridge", "nan_in_y", R, "yy = _yr.copy(); yy[3] = np.nan\ncall(kernel_ridge, K, yy, 1.0)"),
        ("kernel_ridge", "label_len_mismatch", R, "call(kernel_ridge, K, _yr[:-2], 1.0)"),
        ("kernel_ridge", "wrong_shape", R, "call(kernel_ridge, K[:-1], _yr, 1.0)"),
        ("kernel_ridge", "string_targets", R, "call(kernel_ridge, K, np.where(_yr > 0, 'a', 'b'), 1.0)"),
    ]
    return [dict(id=f"{fn}/{kind}", target=fn, kind=kind, expect=expect, code=L1_PRELUDE + code + "\n")
            for fn, kind, expect, code in spec]


def build_cases():
    kinds = _estimator_kinds()
    cases = []
    import importlib.util
    pandas = importlib.util.find_spec("pandas") is not None
    for name, kind in kinds.items():
        cases += [c for c in _input_cases(name, kind) if pandas or c["kind"] != "dataframe"]
    if not pandas:
        print("pandas is not installed: the dataframe cases are left out.", flush=True)
    for name, kind in kinds.items():
        cases += _param_cases(name, kind)
    cases += _layer1_cases()
    for c in cases:
        c.setdefault("estimator_kind", kinds.get(c["target"], "function"))
    return cases


# ---------------------------------------------------------------------------------------------------------------
# Running and classifying
UNCLEAR_TYPES = {"IndexError", "KeyError", "AttributeError", "ZeroDivisionError", "LinAlgError", "FloatingPointError",
                 "UnboundLocalError", "NameError", "AssertionError", "RecursionError", "OverflowError", "MemoryError"}
CLEAR_TYPES = {"InvalidParameterError", "NotFittedError"}
CLEAR_WORDS = ("must", "expected", "expecting", "use ", "got", "fix", "encode", "densify", "toarray", "should",
               "requires", "required", "only ", "needs", "not supported", "inconsistent numbers of samples",
               "contains nan", "contains infinity", "unknown label type", "not symmetric", "not positive semi",
               "indefinite", "refuse", "give ", "provide ", "pass ", "fitted on")
NUMPY_MESSAGES = ("could not convert string to float", "operands could not be broadcast", "mismatch in its core dimension",
                  "is out of bounds for axis", "cannot reshape array", "zero-size array to reduction",
                  "too many indices for array", "tuple index out of range", "singular matrix",
                  "matrix is not positive definite", "setting an array element with a sequence",
                  "boolean index did not match", "invalid literal for")
NAN_KINDS = {"nan_X", "inf_X", "y_nan", "nan_in_kernel", "nan_weights", "nan_in_y", "nan"}
IGNORED_WARNINGS = {"DeprecationWarning", "PendingDeprecationWarning", "FutureWarning"}


def run_case(case, env):
    t0 = time.time()
    try:
        proc = subprocess.run([sys.executable, "-c", PRELUDE + RUNNER, case["code"]], cwd="/tmp", env=env,
                              capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return dict(status="timeout"), time.time() - t0
    for line in proc.stdout.splitlines()[::-1]:
        if line.startswith(SENTINEL):
            return json.loads(line[len(SENTINEL):]), time.time() - t0
    return dict(status="crash", returncode=proc.returncode, msg=(proc.stderr or proc.stdout)[-1500:]), time.time() - t0


def _in_numpy_scipy(path: str) -> bool:
    p = path.replace("\\", "/")
    return "/site-packages/numpy/" in p or "/site-packages/scipy/" in p


def classify(case, rec):
    """(outcome, reason) by the rules of the module docstring."""
    st = rec.get("status")
    if st == "timeout":
        return "hang", f"no result within {TIMEOUT} s"
    if st == "crash":
        return "unclear", f"process died (return code {rec.get('returncode')})"
    if rec.get("modified"):
        return "silent wrong", "the caller's X or y was modified in place"
    warns = [w for w in rec.get("warnings", []) if w[0] not in IGNORED_WARNINGS]
    if st == "exception":
        if rec.get("phase") == "setup" or (case["kind"] == "predict_wrong_n_features" and rec.get("phase") == "fit"):
            return "unclear", f"the setup (valid data) failed: {rec.get('exc_type')}"
        et, msg = rec.get("exc_type", ""), rec.get("msg", "")
        low = msg.lower()
        if case["expect"] == "work":
            return "unclear", "a valid input was refused"
        if et in UNCLEAR_TYPES:
            return "unclear", f"{et} is not a validation error"
        if _in_numpy_scipy(rec.get("raise_file", "")):
            return "unclear", "raised from inside numpy/scipy"
        if any(w in low for w in NUMPY_MESSAGES):
            return "unclear", "numpy's own message"
        param, target = case.get("param"), case["target"].lower()
        if param:                                 # a bad hyper-parameter: name the estimator and the parameter
            if param.lower() in low and target in low:
                return "clear error", et + ("" if et == "InvalidParameterError" else " (not InvalidParameterError)")
            return "unclear", "the message does not name both the estimator and the parameter"
        no_intervals = low.replace("(-inf", "").replace("inf)", "").replace("inf]", "")
        if re.search(r"\bnan\b|\binf\b|infinity|infinite", no_intervals) and case["kind"] not in NAN_KINDS:
            return "unclear", "the message blames NaN/inf the caller did not pass"
        if et in CLEAR_TYPES or any(n in CLEAR_TYPES for n in rec.get("exc_mro", [])):
            return "clear error", et
        hit = [w for w in (target,) if w in low] + [w for w in CLEAR_WORDS if w in low]
        if hit:
            return "clear error", f"message has {hit[0]!r}"
        return "unclear", "message does not say what to do"
    # ran without exception
    problems = rec.get("output_problems", [])
    if case["expect"] == "refuse":
        told = [w for w in warns if w[0] != "RuntimeWarning"]
        if told:
            return "warning", f"accepted with {told[0][0]}: {told[0][1][:120]}"
        return "silent wrong", "accepted an input that should be refused" + (f" ({problems[0]})" if problems else "")
    if problems:
        return "silent wrong", "; ".join(problems)
    if warns:
        return "warning", f"{warns[0][0]}: {warns[0][1][:160]}"
    return "correct", "ran; outputs healthy"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME",
                    help="case ids (or id prefixes), estimator/function names or input kinds to run")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "bad_inputs"),
                    help="directory of results.json")
    ap.add_argument("--list", action="store_true", help="list the case ids and exit")
    ap.add_argument("--messages", action="store_true",
                    help="print each distinct 'clear error' message of DIR/results.json once (no run) and exit")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.messages:
        from collections import defaultdict
        seen = defaultdict(list)
        for r in json.loads((out / "results.json").read_text()):
            if r["outcome"] == "clear error":
                key = re.sub(r"\b(" + "|".join(map(re.escape, {x["target"] for x in [r]})) + r")\b", "<EST>",
                             (r["message"] or "").replace("\n", " ")[:160])
                seen[(r["input_kind"].split("=")[0], r["exception_type"], key)].append(r["id"])
        for (kind, et, msg), ids in sorted(seen.items()):
            print(f"- {kind} [{len(ids)}] {et}: {msg}   (e.g. {ids[0]})")
        return

    cases = build_cases()
    if args.only:
        sel = set(args.only)
        cases = [c for c in cases if c["id"] in sel or c["target"] in sel or c["kind"] in sel
                 or any(c["id"].startswith(s) for s in sel)]
    if args.list:
        for c in cases:
            print(c["id"])
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONWARNINGS": "default", "MKLBOOK_DATA": os.environ.get("MKLBOOK_DATA", "/work/shared/datasets")}
    print(f"{len(cases)} cases; results in {out / 'results.json'}", flush=True)
    records, t_start = [], time.time()
    for i, case in enumerate(cases, 1):
        rec, secs = run_case(case, env)
        outcome, why = classify(case, rec)
        records.append(dict(id=case["id"], target=case["target"], estimator_kind=case["estimator_kind"],
                            input_kind=case["kind"], expect=case["expect"], outcome=outcome, why=why,
                            exception_type=rec.get("exc_type"), message=(rec.get("msg") or "")[:300],
                            phase=rec.get("phase"), raise_site=f"{rec.get('raise_file', '')}:{rec.get('raise_line', '')}"
                            if rec.get("raise_file") else None,
                            warnings=[w[:2] for w in rec.get("warnings", [])][:3], seconds=round(secs, 2),
                            disagreement=rec.get("disagreement")))
        if i % 25 == 0 or i == len(cases):
            print(f"[{i}/{len(cases)}] {time.time() - t_start:.0f} s", flush=True)

    path = out / "results.json"
    if args.only and path.exists():            # merge: the re-run ids replace their old records
        new = {r["id"]: r for r in records}
        old = json.loads(path.read_text())
        merged = [new.pop(r["id"], r) for r in old] + list(new.values())
    else:
        merged = records
    path.write_text(json.dumps(merged, indent=1))
    report(records, "this run")
    if args.only and len(merged) != len(records):
        report(merged, "all records in results.json", details=False)


ORDER = ["correct", "clear error", "warning", "unclear", "silent wrong", "hang"]


def report(records, title, details=True):
    from collections import Counter
    cnt = Counter(r["outcome"] for r in records)
    print(f"\n### Outcomes ({title}: {len(records)} cases)\n")
    print("| outcome | count |\n| --- | ---: |")
    for o in ORDER:
        print(f"| {o} | {cnt.get(o, 0)} |")
    if not details:
        return
    for o in ("unclear", "silent wrong", "hang"):
        rows = [r for r in records if r["outcome"] == o]
        if rows:
            print(f"\n#### {o} ({len(rows)})\n")
            for r in rows:
                msg = (r["message"] or "").replace("\n", " ")[:200]
                exc = f"{r['exception_type']}: {msg}" if r["exception_type"] else "no exception"
                print(f"- `{r['id']}` ({r['why']}) — {exc}")


if __name__ == "__main__":
    main()
