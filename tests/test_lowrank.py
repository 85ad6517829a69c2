"""Estimator contract and numerical properties of mklbook.lowrank (feature-map banks, streamed statistics)."""
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.kernel_approximation import Nystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.alignment import AlignMKL, alignf_from_stats, alignment_stats
from mklbook.kernels import Gaussian, KernelBank, Polynomial, Sigmoid, center, gaussian_bank
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


def test_nystroem_statistics_are_one_sided_and_above_the_tail_floor():
    X, y = _problem(300)
    bank_list = gaussian_bank([0.02, 0.2, 1.0, 4.0])
    a, M = alignment_stats(KernelBank(bank_list).fit_transform(X), y)
    r = 40
    a_lr, M_lr = lowrank_alignment_stats(LowRankBank(bank_list, r, random_state=3).fit(X), X, y)
    tol = 1e-9 * M.max()
    assert (a_lr <= a + 1e-9 * a.max()).all() and (a_lr >= 0).all()
    assert (M_lr <= M + tol).all() and (M_lr >= -tol).all()
    for k, g in enumerate([0.02, 0.2, 1.0, 4.0]):
        lam = np.linalg.eigvalsh(center(Gaussian(g)(X)))[::-1]
        assert M[k, k] - M_lr[k, k] >= np.sum(lam[r:] ** 2) - tol


def test_nystroem_matches_sklearn_with_the_same_seed():
    X, _ = _problem(150)
    P = LowRankBank([Gaussian(0.4)], 50, random_state=7).fit(X).transform(X).Phi
    S = Nystroem(kernel="rbf", gamma=0.4, n_components=50, random_state=7).fit(X).transform(X)
    np.testing.assert_allclose(P @ P.T, S @ S.T, atol=1e-8)


def test_full_rank_equals_align_mkl_with_kernel_ridge():
    "Every training point a landmark: Nystroem is exact, so weights and KRR predictions equal AlignMKL's."
    X, y = _problem(150)
    Xt, _ = _problem(40, seed=1)
    ker = gaussian_bank([0.05, 0.5, 2.0])
    lr = LowRankAlignMKL(ker, 150, estimator=Ridge(alpha=0.3), random_state=0).fit(X, y)
    ex = AlignMKL(ker, estimator=KernelRidge(alpha=0.3, kernel="precomputed")).fit(X, y)
    np.testing.assert_allclose(lr.weights_, ex.weights_, rtol=0, atol=1e-6 * ex.weights_.max())
    np.testing.assert_allclose(lr.predict(Xt), ex.predict(Xt), atol=1e-6)
    assert lr.alignf_.status == "optimal" and lr.alignf_.gap <= 1e-8


@pytest.mark.parametrize("est,kind", [(Ridge(alpha=2.0), "reg"), (RidgeClassifier(alpha=0.5), "bin"),
                                      (RidgeClassifier(), "multi")])
def test_ridge_from_moments_equals_ridge_on_the_features(est, kind):
    X, y = _problem(200)
    target = {"reg": y, "bin": np.where(y > 0.2, "a", "b"), "multi": np.digitize(y, [-0.5, 0.5])}[kind]
    mdl = LowRankAlignMKL(n_components=30, estimator=est, random_state=0, chunk_size=37).fit(X, target)
    assert mdl.coef_ is not None                              # solved from the moments, no second pass
    Z = mdl._features(X)
    ref = clone(est).fit(Z, target)
    if kind == "reg":
        np.testing.assert_allclose(mdl.predict(X), ref.predict(Z), atol=1e-9)
    else:
        np.testing.assert_allclose(mdl.decision_function(X), ref.decision_function(Z), atol=1e-9)
        assert (mdl.predict(X) == ref.predict(Z)).all()


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
