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
    mom = accumulate_moments(((slice(i, i + chunk), Phi[i:i + chunk], y[i:i + chunk]) for i in range(0, 120, chunk)),
                             bank.blocks_, n_rows=120)
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


@pytest.mark.parametrize("params, match", [
    (dict(features="pca"), "The 'features' parameter of LowRankAlignMKL must be a str among"),
    (dict(landmarks="random"), "The 'landmarks' parameter of LowRankAlignMKL must be a str among"),
    (dict(n_components=2.5), "The 'n_components' parameter of LowRankAlignMKL must be an int in the range"),
    (dict(n_components=0), "The 'n_components' parameter of LowRankAlignMKL must be an int in the range"),
    (dict(chunk_size=-1), "The 'chunk_size' parameter of LowRankAlignMKL must be None or an int in the range"),
    (dict(method="linear"), "The 'method' parameter of LowRankAlignMKL must be a str among"),
    (dict(oversampling=0.5), r"The 'oversampling' parameter of LowRankAlignMKL must be a float in the range \[1.0, inf\)"),
    (dict(oversampling="4"), "The 'oversampling' parameter of LowRankAlignMKL"),
    (dict(estimator="ridge"), "The 'estimator' parameter of LowRankAlignMKL must be None or an object implementing"),
    (dict(random_state="0"), "The 'random_state' parameter of LowRankAlignMKL"),
    (dict(kernels="gaussian"), "The 'kernels' parameter of LowRankAlignMKL"),
])
def test_hyper_parameters_are_validated_by_declaration(params, match):
    X, y = _problem(60)
    with pytest.raises(ValueError, match=match):
        LowRankAlignMKL(**params).fit(X, y > 0)
    bank_params = {k: v for k, v in params.items() if k in LowRankBank().get_params()}
    if bank_params:                                     # the bank validates its own (users call it directly)
        with pytest.raises(ValueError, match=match.replace("LowRankAlignMKL", "LowRankBank")):
            LowRankBank(**bank_params).fit(X)


def test_bad_input_is_refused_with_the_fix():
    X, y = _problem(60)
    with pytest.raises(ValueError, match="use features='nystroem'"):
        LowRankAlignMKL([Polynomial(2)], features="rff").fit(X, y > 0)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        LowRankAlignMKL([Sigmoid(1.0, 0.0)]).fit(X, y > 0)
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
    with pytest.raises(ValueError, match="chunk_size.*positive integer"):
        lowrank_alignment_stats(bank, X, y, chunk_size=0)
    with pytest.raises(ValueError, match="no rows were streamed"):
        accumulate_moments([], bank.blocks_)


def test_overlapping_or_missing_row_blocks_are_refused():
    "accumulate_moments: the chunks partition the sample; a row streamed twice would count twice."
    X, y = _problem(60)
    bank = LowRankBank(n_components=10, random_state=0).fit(X)
    Phi = bank.features_of(X)
    with pytest.raises(ValueError, match=r"sample rows \[20, 21, 22, 23, 24\] appear in more than one chunk"):
        accumulate_moments([(slice(0, 40), Phi[:40], y[:40]), (slice(20, 60), Phi[20:], y[20:])], bank.blocks_)
    with pytest.raises(ValueError, match=r"sample rows \[3\] appear in more than one chunk \(or twice in one\)"):
        accumulate_moments([(np.array([3, 3, 4]), Phi[[3, 3, 4]], y[[3, 3, 4]])], bank.blocks_)
    with pytest.raises(ValueError, match="a \\(rows, Phi_chunk, Y_chunk\\) triple"):
        accumulate_moments([(Phi, y)], bank.blocks_)
    with pytest.raises(ValueError, match="has 40 rows of features but its rows name 60"):
        accumulate_moments([(slice(0, 60), Phi[:40], y[:40])], bank.blocks_, n_rows=60)
    with pytest.raises(ValueError, match=r"missing, e.g.: \[40, 41, 42, 43, 44\]"):
        accumulate_moments([(slice(0, 40), Phi[:40], y[:40])], bank.blocks_, n_rows=60)
    ok = accumulate_moments([(np.arange(30, 60), Phi[30:], y[30:]), (slice(0, 30), Phi[:30], y[:30])], bank.blocks_,
                            n_rows=60)                 # any order, any index form
    ref = feature_moments(bank, X, y)
    np.testing.assert_allclose(ok.gram, ref.gram, rtol=0, atol=1e-10 * np.abs(ref.gram).max())


def test_sparse_input_is_densified_within_a_budget():
    "CSR input: LowRankBank.fit densifies (within 1 GiB), the streamed statistics densify one chunk at a time."
    import scipy.sparse as sp
    from mklbook import lowrank
    X, y = _problem(80)
    X[np.abs(X) < 0.7] = 0.0
    Xs = sp.csr_matrix(X)
    dense = LowRankBank(n_components=10, random_state=0).fit(X)
    sparse = LowRankBank(n_components=10, random_state=0).fit(Xs)
    np.testing.assert_array_equal(sparse.landmarks_, dense.landmarks_)
    a0, M0 = lowrank_alignment_stats(dense, X, y)
    a1, M1 = lowrank_alignment_stats(dense, Xs, y, chunk_size=7)
    np.testing.assert_allclose(a1, a0, rtol=1e-10)
    np.testing.assert_allclose(M1, M0, rtol=1e-10)
    np.testing.assert_allclose(dense.transform(Xs).Phi, dense.features_of(X), rtol=0, atol=1e-12)
    big = sp.csr_matrix((200_000, 1000))                     # 1.5 GiB dense
    with pytest.raises(ValueError, match="sparse 200000 x 1000 matrix; its dense copy would take 1.5 GiB.*TruncatedSVD"):
        LowRankBank(n_components=10).fit(big)
    with pytest.raises(ValueError, match="NaN or infinity"):
        lowrank_alignment_stats(dense, sp.csr_matrix(np.where(X == 0, 0, np.nan)), y)
    assert lowrank._DENSE_BUDGET == 1 << 30


def test_precomputed_kernel_second_stage_is_refused_above_its_budget():
    "The kernel machine on Z Z^T (checked against the linear machine on Z in the chapter) needs m^2 memory."
    from sklearn.svm import SVC
    from mklbook import lowrank
    X, y = _problem(120)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lowrank, "_KERNEL_BUDGET", 8 * 100 * 100)
        with pytest.raises(ValueError, match="reads the m x m combined kernel.*LinearSVC for the SVM"):
            LowRankAlignMKL(SMALL, 20, estimator=SVC(kernel="precomputed")).fit(X, y > 0)
    mdl = LowRankAlignMKL(SMALL, 20, estimator=SVC(kernel="precomputed"), random_state=0).fit(X, y > 0)
    assert mdl.decision_function(X[:5]).shape == (5,) and mdl.score(X, y > 0) > 0.8


def test_rff_truncation_from_the_small_gram_equals_the_primal_one():
    "RFF with fewer rows than frequencies: the top directions from the n x n Gram span the primal eigenvectors'."
    X, _ = _problem(30)
    bank = LowRankBank([Gaussian(0.3)], 10, features="rff", random_state=0).fit(X)   # s = 40 > n = 30: the dual
    Psi = bank.maps_[0].transform(X)
    Pc = Psi - Psi.mean(axis=0)
    lam, V = np.linalg.eigh(Pc.T @ Pc)
    V = V[:, ::-1][:, :10]
    mean = Psi.mean(axis=0)
    u = mean - V @ (V.T @ mean)
    P = np.column_stack([V, u / np.linalg.norm(u)])
    Phi = bank.transform(X).Phi
    np.testing.assert_allclose(Phi @ Phi.T, Psi @ P @ P.T @ Psi.T, rtol=0, atol=1e-10)
    assert Phi.shape[1] == 11


def test_constant_and_diagonal_kernels_are_reported():
    "A constant kernel (tiny features) vanishes as in AlignMKL; a kernel too narrow for the features (K ~ I) warns."
    X, y = _problem(120)
    yc = y > 0
    with pytest.raises(ValueError, match="every kernel vanishes on the training set after centering"):
        LowRankAlignMKL([Gaussian(1.0)], 20, random_state=0).fit(X * 1e-7, yc)
    with pytest.warns(RuntimeWarning, match=r"kernel\(s\) \['Gaussian\(gamma=1.0\)'\] vanish on the training set"):
        mdl = LowRankAlignMKL([Gaussian(1.0), Gaussian(1.0, standardize=True)], 20, random_state=0).fit(X * 1e-7, yc)
    assert mdl.mu_[0] == 0 and mdl.score(X * 1e-7, yc) > 0.8
    with pytest.warns(RuntimeWarning, match="numerically diagonal on the landmarks.*predicts the same value"):
        LowRankAlignMKL([Gaussian(1.0)], 200, random_state=0).fit(X * 100, yc)          # s >= m: W is the kernel
    with pytest.warns(RuntimeWarning, match="numerically diagonal on the training rows"):
        LowRankAlignMKL([Gaussian(1.0)], 20, features="rff", random_state=0).fit(X * 100, yc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                       # the default bank on the same data: no warning
        LowRankAlignMKL(n_components=20, random_state=0).fit(X * 100, yc)


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
