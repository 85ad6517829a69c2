"""Protocol: splits, selection, determinism across joblib backends (including a Dask cluster), t-tests, tables."""
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mklbook.protocol import (RandomSplits, RotatingFolds, comparison_table, evaluate, paired_ttest)


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    return X[::2], y[::2]


MODEL = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
GRID = {"logisticregression__C": [0.01, 1.0]}




def test_inner_cv_refits_and_is_deterministic(data):
    X, y = data
    a = evaluate(MODEL, X, y, RandomSplits(3, 0.5, inner_cv=3, random_state=4), GRID, progress=False)
    b = evaluate(MODEL, X, y, RandomSplits(3, 0.5, inner_cv=3, random_state=4), GRID, progress=False)
    np.testing.assert_array_equal(a.test, b.test)


def test_regression_metric(data):
    X, y = data
    ev = evaluate(Ridge(), X, y.astype(float), RotatingFolds(3), {"alpha": [0.1, 10.0]}, metric="rmse", progress=False)
    assert ev.metric == "rmse" and (ev.test > 0).all()


def test_dask_backend_gives_the_serial_table(data):
    distributed = pytest.importorskip("distributed")
    import joblib
    X, y = data
    serial = evaluate(MODEL, X, y, RotatingFolds(3), GRID, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cl, \
            distributed.Client(cl):
        with joblib.parallel_backend("dask"):
            remote = evaluate(MODEL, X, y, RotatingFolds(3), GRID, n_jobs=-1, progress=False)
    np.testing.assert_array_equal(serial.test, remote.test)
    assert serial.params == remote.params


def test_paired_ttest_direction_and_errors():
    a, b = np.array([1.0, 2.0, 3.0, 2.5, 1.5]), np.array([2.0, 3.1, 3.9, 3.4, 2.6])
    assert paired_ttest(a, b, "less", 0.05)[2] and not paired_ttest(b, a, "less", 0.05)[2]
    with pytest.raises(ValueError, match="same length"):
        paired_ttest(a, b[:3])


def test_tables(data):
    X, y = data
    ev = evaluate(MODEL, X, y, RotatingFolds(3), GRID, progress=False)
    md = comparison_table({"bc": {"logreg": ev}}, paper={"bc": {"logreg": "3.0"}})
    assert "| bc | logreg |" in md and "3.0" in md


class _Warner(LogisticRegression):
    "A classifier that warns: ConvergenceWarning when C > 1, and always a UserWarning."
    def fit(self, X, y):
        import warnings
        from sklearn.exceptions import ConvergenceWarning
        if self.C > 1:
            warnings.warn("cut off", ConvergenceWarning)
        warnings.warn("unrelated", UserWarning)
        return super().fit(X, y)


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_evaluate_counts_convergence_warnings_per_setting(data, n_jobs):
    import warnings
    from sklearn.exceptions import ConvergenceWarning
    X, y = data
    X = StandardScaler().fit_transform(X)                 # so that LogisticRegression itself converges
    grid = {"C": [0.5, 10.0]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = evaluate(_Warner(max_iter=500), X, y, RandomSplits(3, test_size=0.5, inner_cv=2, random_state=0), grid,
                      progress=False, n_jobs=n_jobs)
    # inner folds (2 per split) and, where C = 10 is selected, the refit
    np.testing.assert_array_equal(ev.unconverged[:, 0], 0)
    refit = np.array([p == {"C": 10.0} for p in ev.params], dtype=int)
    np.testing.assert_array_equal(ev.unconverged[:, 1], 2 + refit)
    assert ev.unconverged_selected == int(3 * refit.sum())
    conv = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(conv) == 1 and f"{int(ev.unconverged.sum())} of" in conv[0]          # one summary, not one per fit
    other = [w for w in caught if issubclass(w.category, UserWarning) and str(w.message) == "unrelated"]
    assert len(other) == 1                      # other warnings are passed on once, from joblib workers too
