"""Tests of the head-to-head chapter (`mklbook.benchmark`): the rank statistics against Demšar (2006)'s worked example
and scipy, the least-squares classifier adapter, bad inputs, and `mklbook reproduce benchmark --quick` through the CLI."""
import numpy as np
import pytest

from mklbook.benchmark import (BINARY_SETS, METHODS, MULTICLASS_METHODS, OVR_METHODS, BenchmarkResult,
                               RegressionClassifier, average_ranks, benchmark_data, benchmark_methods, cd_cliques,
                               friedman_test, nemenyi_cd, run_benchmark)

# Demšar (2006), Table 6: AUC of C4.5, C4.5+m, C4.5+cf, C4.5+m+cf on 14 data sets. The paper ranks 'voting' as
# (4, 1, 2, 3): its unrounded AUCs separate the last two methods that the printed 0.975 ties, hence 0.97501.
DEMSAR = np.array([
    [0.763, 0.768, 0.771, 0.798], [0.599, 0.591, 0.590, 0.569], [0.954, 0.971, 0.968, 0.967],
    [0.628, 0.661, 0.654, 0.657], [0.882, 0.888, 0.886, 0.898], [0.936, 0.931, 0.916, 0.931],
    [0.661, 0.668, 0.609, 0.685], [0.583, 0.583, 0.563, 0.625], [0.775, 0.838, 0.866, 0.875],
    [1.000, 1.000, 1.000, 1.000], [0.940, 0.962, 0.965, 0.962], [0.619, 0.666, 0.614, 0.669],
    [0.972, 0.981, 0.97501, 0.975], [0.957, 0.978, 0.946, 0.970]])


def test_average_ranks_demsar():
    R, r = average_ranks(DEMSAR)
    np.testing.assert_allclose(R[5], [1, 2.5, 4, 2.5])                           # iris: a tie shares the mean rank
    np.testing.assert_allclose(R.sum(axis=1), 10.0)                              # every row sums to k(k+1)/2
    _, r_low = average_ranks(1 - DEMSAR, higher_is_better=False)                 # losses rank the other way
    np.testing.assert_allclose(r_low, r)




def test_rank_functions_bad_input():
    S = DEMSAR.copy()
    with pytest.raises(ValueError, match="NaN"):
        average_ranks(np.where(np.eye(14, 4) > 0, np.nan, S))
    with pytest.raises(ValueError, match="2-D"):
        friedman_test(S[0])
    with pytest.raises(ValueError, match="n_methods"):
        nemenyi_cd(1, 14)
    with pytest.raises(ValueError, match="alpha"):
        nemenyi_cd(4, 14, alpha=1.5)
    with pytest.raises(ValueError, match="cd"):
        cd_cliques([1.0, 2.0], -1.0)
    before = S.copy()
    average_ranks(S), friedman_test(S)
    np.testing.assert_array_equal(S, before)                                      # inputs never modified


def test_regression_classifier():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, "b", "a")
    default = RegressionClassifier().fit(X, y)          # the default regressor is L2KRRMKL()
    assert type(default.regressor_).__name__ == "L2KRRMKL" and default.score(X, y) > 0.9


def test_methods_and_sets_bad_input():
    ms = benchmark_methods(10, 2)
    assert list(ms) == list(METHODS)
    assert list(benchmark_methods(10, 5)) == [m for m in METHODS if m in MULTICLASS_METHODS + OVR_METHODS]
    with pytest.raises(ValueError, match="unknown method"):
        benchmark_methods(10, 2, ["alignf", "SimpleMKL"])
    with pytest.raises(ValueError, match="unknown benchmark set"):
        benchmark_data("mnist")
    with pytest.raises(ValueError, match="unknown benchmark set"):
        run_benchmark(sets=["wine", "cifar"], quick=True)
    with pytest.raises(ValueError, match="unknown method"):
        run_benchmark(methods=["M4K"], quick=True)
    X, y = benchmark_data("wine", max_n=60)
    assert X.shape == (60, 13) and np.unique(y).size == 3
    assert set(BINARY_SETS) == {"ionosphere", "sonar", "pima", "german", "australian", "liver",
                                "breast-cancer-wisconsin", "spambase", "splice"}


def test_one_vs_rest_columns_and_merging_runs():
    "Chapter 14's baselines run one-vs-rest on a multi-class set; a run of further methods merges on the same splits."
    a = run_benchmark(sets=["wine", "breast_cancer"], methods=["unif", "SVM"], quick=True, progress=False)
    b = run_benchmark(sets=["wine", "breast_cancer"], methods=["2LMKL", "GMKL"], quick=True, progress=False)
    assert type(b.evaluations["wine"]["2LMKL"]).__name__ == "Evaluation"          # 3 classes: one-vs-rest, not '-'
    assert (b.evaluations["wine"]["GMKL"].extra["certified"] == 1).all()          # every binary machine certified
    ab = a.merge(b)
    assert ab.methods == ["unif", "GMKL", "2LMKL", "SVM"] and ab.config["methods"] == ab.methods
    both = np.c_[a.matrix("mean", methods=["unif"]), b.matrix("mean", methods=["2LMKL"])]
    np.testing.assert_array_equal(ab.matrix("mean", methods=["unif", "2LMKL"]), both)
    c = run_benchmark(sets=["wine", "breast_cancer"], methods=["GMKL"], quick=True, random_state=1, progress=False)
    with pytest.raises(ValueError, match="random_state"):
        a.merge(c)
    part = run_benchmark(sets=["wine"], methods=["IKL"], quick=True, progress=False)   # a run over some of the sets
    ap = a.merge(part)
    assert ap.evaluations["wine"]["IKL"] is not None and "IKL" not in ap.evaluations["breast_cancer"]
    with pytest.raises(ValueError, match="sets"):
        part.merge(a)                                                                      # sets outside self's


from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


# All of scikit-learn's checks apply to the least-squares classifier wrapper; no exception is needed.
@parametrize_with_checks([RegressionClassifier(Ridge())])
def test_regression_classifier_is_sklearn_compatible(estimator, check):
    check(estimator)


def test_reproduce_defaults_runs_end_to_end_with_its_progress_bar(tmp_path, monkeypatch):
    "The CLI's `defaults` part on a two-estimator, one-set suite: files written, the rule checked row by row."
    import json
    from sklearn.datasets import load_iris
    import mklbook.benchmark as bm
    from mklbook.baselines import UniformMKL
    from mklbook.alignment import AlignMKL
    X, y = load_iris(return_X_y=True)
    monkeypatch.setattr(bm, "default_suite", lambda quick, data, max_rows: (
        {"AlignMKL": AlignMKL(), "UniformMKL": UniformMKL()}, {"iris": (X[::2], y[::2])}))
    md, js = bm.reproduce_defaults(tmp_path, quick=True, progress=True)
    rows = json.loads(js.read_text())
    assert {r["estimator"] for r in rows} == {"AlignMKL", "UniformMKL"} and all("meets_rule" in r for r in rows)
    assert "rows meet it" in md.read_text()


def _estimator_benchmark():
    "benchmarks/estimators.py as a module (it is a script, not part of the package)."
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "estimators.py"
    spec = importlib.util.spec_from_file_location("bench_estimators", path)
    b = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(b)
    return b


def test_estimator_benchmark_judges_first_runs_and_shows_best_runs_beside_them():
    "benchmarks/estimators.py: the target on the first fit over the floor's first run; 'best runs' on the fastest of each."
    b = _estimator_benchmark()
    row = dict(estimator="GMKL", data="synthetic", m=1000, status="ok", fit_s=0.6, fit_best_s=0.4, floor_s=0.1,
               floor_best_s=0.09, predict_s=0.01, ref_s=0.01, peak_mib=200, score=0.9, ref_score=0.9, warnings=[])
    assert b._best_ratio(row) == pytest.approx(0.4 / 0.09)
    assert np.isnan(b._best_ratio({k: v for k, v in row.items() if k != "fit_best_s"}))   # rows from before
    out = b.targets([row])
    assert "| 1000 | ≤ 5× floor | 1 | 0 | 1 | 1 of 1 |" in out                          # missed on first runs (6x)
    assert "| GMKL | synthetic | 1000 | ≤ 5× floor | 6.00× | 1.20 | 4.44× |" in out
    assert "| 6.0 | 4.4 |" in b.table([row])


def test_estimator_benchmark_pools_fresh_processes_by_the_median_of_first_runs():
    "benchmarks/estimators.py --processes: medians of the first runs, the fastest run of all, the largest peak."
    b = _estimator_benchmark()
    fits = [dict(estimator="GMKL", data="synthetic", m=1000, fit_s=f, fit_best_s=f - 0.1, fit_repeats=3, predict_s=0.01,
                 ref_s=0.01, peak_mib=p, score=0.9, ref_score=0.9, warnings=[]) for f, p in ((1.1, 200), (0.3, 210), (0.35, 205))]
    row = b._pooled(fits, "fit")
    assert row["fit_s"] == 0.35 and row["fit_first_s"] == [1.1, 0.3, 0.35]     # one slow first run does not decide
    assert row["fit_best_s"] == pytest.approx(0.2) and row["peak_mib"] == 210 and row["fit_repeats"] == 9
    assert row["fit_processes"] == 3 and "process_note" not in row
    floors = [dict(floor_s=f, floor_warm_s=f - 0.01, floor_best_s=f - 0.02, floor_repeats=3, floor_peak_mib=100)
              for f in (0.1, 0.05, 0.06)]
    floor = b._pooled(floors, "floor")
    assert floor["floor_s"] == 0.06 and floor["floor_best_s"] == pytest.approx(0.03) and floor["floor_processes"] == 3
    assert b._pooled(fits[:1], "fit") == dict(fits[0], fit_processes=1)              # one process: as before
    fits[1]["score"] = 0.8
    assert "scores differ" in b._pooled(fits, "fit")["process_note"]
    assert "3 fresh processes each" in b._processes_sentence([dict(row, status="ok")])
    assert b._processes_sentence([dict(fits[0], status="ok")]) == ""
