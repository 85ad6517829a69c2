"""Estimator contract and numerical properties of mklbook.lowrank (feature-map banks, streamed statistics)."""
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.alignment import alignment_stats
from mklbook.kernels import Gaussian, Polynomial, Sigmoid, center, gaussian_bank
from mklbook.lowrank import (LowRankAlignMKL, LowRankBank, accumulate_moments, feature_moments,
                             lowrank_alignment_stats)

SMALL = [Gaussian(0.1), Gaussian(1.0)]


# All of scikit-learn's checks apply to the estimator, with every second stage: the default ridge classifier and
# Ridge (solved from the streamed moments), RFF features, and a LogisticRegression on the materialised features.
# LowRankBank is not in the list: its `transform` returns a FeatureStack (the bank, never formed), not an array, by
# design, which the generic transformer checks cannot consume; its behaviour is tested below.
@parametrize_with_checks([
    LowRankAlignMKL(SMALL, n_components=20, random_state=0),
    LowRankAlignMKL(SMALL, n_components=20, features="rff", method="align", random_state=0),
    LowRankAlignMKL(SMALL, n_components=20, estimator=Ridge(), random_state=0),
    LowRankAlignMKL(SMALL, n_components=20, estimator=LogisticRegression(), method="unif", random_state=0),
])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)


def _problem(m=240, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    return X, np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(m)


@settings(max_examples=15, deadline=None)
@given(chunk=st.integers(1, 300), seed=st.integers(0, 1000), offset=st.sampled_from([0.0, 1e3]))
def test_streamed_statistics_equal_in_memory_ones(chunk, seed, offset):
    "The centering identity: any chunking, any common offset of the features, same a and M as the FeatureStack."
    X, y = _problem(120, seed=seed)
    bank = LowRankBank(gaussian_bank([0.03, 0.3, 3.0]), 25, random_state=seed).fit(X)
    fs = bank.transform(X)
    a0, M0 = alignment_stats(fs, y)
    Phi = fs.Phi + offset
    mom = accumulate_moments(((Phi[i:i + chunk], y[i:i + chunk]) for i in range(0, 120, chunk)), bank.blocks_)
    a1, M1 = mom.alignment_stats()
    np.testing.assert_allclose(a1, a0, rtol=0, atol=1e-9 * a0.max())
    np.testing.assert_allclose(M1, M0, rtol=0, atol=1e-9 * M0.max())
    np.testing.assert_allclose(mom.traces(), [np.trace(center(K)) for K in fs.toarray()], rtol=1e-9)






def test_materialised_second_stage_uses_only_weighted_kernels():
    X, y = _problem(200)
    mdl = LowRankAlignMKL(gaussian_bank([1e-4, 0.3, 30.0]), 30, estimator=LinearSVC(), random_state=0).fit(X, y > 0)
    q = sum(len(mdl.bank_.blocks_[k]) for k in mdl.active_)
    assert mdl._features(X).shape == (200, q)
    assert set(mdl.active_) == set(np.flatnonzero(mdl.mu_ > 0))
    assert mdl.score(X, y > 0) > 0.8


def test_pipeline_grid_search_clone_pickle():
    X, y = _problem(200)
    pipe = make_pipeline(StandardScaler(), LowRankAlignMKL(n_components=20, random_state=0))
    gs = GridSearchCV(pipe, {"lowrankalignmkl__method": ["unif", "alignf"]}, cv=3).fit(X, y > 0)
    assert gs.best_score_ > 0.7
    est = pickle.loads(pickle.dumps(gs.best_estimator_))
    assert (est.predict(X) == gs.best_estimator_.predict(X)).all()
    assert clone(pipe).get_params()["lowrankalignmkl__n_components"] == 20


def test_bad_input_is_refused_with_the_fix():
    X, y = _problem(60)
    with pytest.raises(ValueError, match="'nystroem' or 'rff'"):
        LowRankAlignMKL(features="pca").fit(X, y > 0)
    with pytest.raises(ValueError, match="use features='nystroem'"):
        LowRankAlignMKL([Polynomial(2)], features="rff").fit(X, y > 0)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        LowRankAlignMKL([Sigmoid(1.0, 0.0)]).fit(X, y > 0)
    with pytest.raises(ValueError, match="positive integer"):
        LowRankAlignMKL(n_components=2.5).fit(X, y > 0)
    with pytest.raises(ValueError, match="chunk_size.*positive integer"):
        LowRankAlignMKL(chunk_size=-1).fit(X, y > 0)
    with pytest.raises(ValueError, match="'unif', 'align' or 'alignf'"):
        LowRankAlignMKL(method="linear").fit(X, y > 0)
    with pytest.raises(ValueError, match="landmarks must be 'kmeans' or 'uniform'"):
        LowRankAlignMKL(landmarks="random").fit(X, y > 0)
    with pytest.raises(ValueError, match="oversampling must be >= 1"):
        LowRankAlignMKL(oversampling=0.5).fit(X, y > 0)
    with pytest.raises(ValueError, match="empty kernel list"):
        LowRankAlignMKL(kernels=[]).fit(X, y > 0)
    with pytest.raises(ValueError, match="single class"):
        LowRankAlignMKL().fit(X, np.ones(60, int))
    with pytest.raises(ValueError, match="y is constant"):
        LowRankAlignMKL(estimator=Ridge()).fit(X, np.ones(60))
    Xn = X.copy()
    Xn[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity|inf"):
        LowRankAlignMKL().fit(Xn, y > 0)
    bank = LowRankBank(n_components=10, random_state=0).fit(X)
    with pytest.raises(ValueError, match="one target per sample"):
        feature_moments(bank, X, y[:5])
    with pytest.raises(ValueError, match="no rows were streamed"):
        accumulate_moments([], bank.blocks_)


def test_inputs_are_not_modified():
    X, y = _problem(80)
    X0, y0 = X.copy(), y.copy()
    mdl = LowRankAlignMKL(n_components=15, estimator=LogisticRegression(), random_state=0).fit(X, y > 0)
    mdl.predict_proba(X)
    lowrank_alignment_stats(LowRankBank(n_components=15, random_state=0).fit(X), X, y, chunk_size=9)
    assert (X == X0).all() and (y == y0).all()


def test_constant_kernel_gets_zero_weight_with_a_warning():
    X, y = _problem(80)
    with pytest.warns(RuntimeWarning, match="vanish on the training set"):
        mdl = LowRankAlignMKL([Gaussian(1e-300), Gaussian(0.3)], 15, random_state=0).fit(X, y > 0)
    assert mdl.mu_[0] == 0 and mdl.mu_[1] > 0


def test_oversampled_kmeans_bank_is_one_sided_and_truncated():
    "k-means landmarks with truncation: r columns + the mean direction per kernel, statistics still below the exact ones."
    X, y = _problem(300)
    bank = gaussian_bank([0.03, 0.3, 3.0])
    lr = LowRankBank(bank, 20, random_state=0).fit(X)
    assert [len(b) for b in lr.blocks_] == [21, 21, 21] and lr.landmarks_.shape == (80, X.shape[1])
    a_lr, M_lr = lowrank_alignment_stats(lr, X, y)
    a, M = alignment_stats(np.stack([k(X) for k in bank]), y)
    assert (a_lr <= a * (1 + 1e-9)).all() and (np.diag(M_lr) <= np.diag(M) * (1 + 1e-9)).all()


def test_truncation_from_a_subsample_and_chunks_sized_by_the_landmarks():
    "Above 100 s rows the top directions come from a subsample (still a projection: one-sided); chunks bound (rows, s)."
    X, y = _problem(500)
    lr = LowRankBank(gaussian_bank([0.3]), 1, random_state=0).fit(X)      # s = 4 landmarks, 500 > 100 s rows
    assert len(lr.blocks_[0]) <= 2
    a_lr, M_lr = lowrank_alignment_stats(lr, X, y)
    a, M = alignment_stats(np.stack([k(X) for k in gaussian_bank([0.3])]), y)
    assert 0 <= a_lr[0] <= a[0] * (1 + 1e-9) and 0 <= M_lr[0, 0] <= M[0, 0] * (1 + 1e-9)
    Xw = np.random.default_rng(0).standard_normal((12000, 2))
    wide = LowRankBank(gaussian_bank([1e-4]), 100, landmarks="uniform", random_state=0).fit(Xw)   # s = 400, few columns
    assert wide.n_columns_ < 50
    rows, _ = next(wide.chunks(Xw))
    assert rows.stop == (1 << 22) // 400              # sized by the (rows, s) kernel block, not the few output columns
