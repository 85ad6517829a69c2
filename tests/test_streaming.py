"""Estimator contract, bad input and edge cases of mklbook.streaming (statistics streamed from X, no stack).

The chapter checks the streamed statistics against the stacked ones under every normalisation; here: scikit-learn's
estimator checks, clear errors, untouched inputs, tile-size independence, and degenerate banks."""
import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.alignment import alignment_stats
from mklbook.kernels import Gaussian, KernelBank, Linear, Polynomial, Precomputed, gaussian_bank
from mklbook.streaming import StreamedAlignMKL, StreamedBank, streamed_alignment_stats

SMALL = [Gaussian(0.1), Gaussian(1.0)]


@parametrize_with_checks([StreamedAlignMKL(SMALL, n_jobs=1), StreamedAlignMKL(SMALL, method="align", tile=7)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)


def _problem(m=150, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    return X, np.sin(X[:, 0]) + 0.1 * rng.standard_normal(m)


@pytest.mark.parametrize("tile", [1, 2, 7, 64, None, 1000])
def test_any_tile_size_gives_the_stacked_statistics(tile):
    """Every tile size, 1 included (a diagonal tile of one entry has no spread: the extremes come from every tile); tiles
    of one and two entries on 40 rows (a Python loop per tile: 150 rows took 13 s for the same code paths)."""
    X, y = _problem(40 if tile in (1, 2) else 150)
    bank = gaussian_bank([0.01, 0.02, 0.3]) + [Polynomial(3, 1.0)]
    kb = KernelBank(bank, normalize="trace", center=True).fit(X)
    a, M = alignment_stats(kb.transform(X), y)
    sb = StreamedBank(bank, normalize="trace", center=True, tile=tile, n_jobs=2, progress=False).fit(X, y)
    np.testing.assert_allclose(sb.a_, a, rtol=1e-10, atol=1e-14 * np.abs(a).max())
    np.testing.assert_allclose(sb.M_, M, rtol=1e-10, atol=1e-14 * np.abs(M).max())
    np.testing.assert_allclose(sb.col_mean_, kb.col_mean_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(sb.diag_fit_, kb.diag_fit_, rtol=1e-10, atol=1e-14)
    Kraw = np.stack([k(X) for k in bank])
    d2 = (np.einsum("kii->ki", Kraw) ** 2).sum(axis=1)
    np.testing.assert_allclose(sb.offdiag_, np.sqrt(((Kraw ** 2).sum(axis=(1, 2)) - d2) / d2), rtol=1e-10)
    sa = StreamedAlignMKL(bank, tile=tile, n_jobs=1).fit(X, y > 0)
    assert sa.score(X, y > 0) > 0.8


@pytest.mark.parametrize("offset", [1e2, 1e3, 3e3])
@pytest.mark.parametrize("normalize, center", [(None, True), (None, False), ("frobenius", False), ("trace", True)])
def test_linear_kernel_with_a_large_offset_keeps_its_digits(offset, normalize, center):
    "A row-and-column shift centres the features' kernel, not only a constant: M as accurate as in memory, or better."
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((600, 5))
    y = Z[:, 0] + 0.1 * rng.standard_normal(600)
    Zc = Z - Z.mean(axis=0)
    Kc = Zc @ Zc.T                                              # the centered linear kernel, exactly (no offset)
    X = Z + offset
    sb = StreamedBank([Linear()], normalize=normalize, center=center, tile=64, progress=False).fit(X, y)
    kb = KernelBank([Linear()], normalize=normalize, center=center).fit(X)
    M_ref = (Kc * Kc).sum()                                     # M before the normalisation
    err = abs(sb.M_[0, 0] * sb.scale_[0] ** 2 - M_ref) / M_ref
    M_kb = alignment_stats(kb.transform(X), y)[1][0, 0] * kb.scale_[0] ** 2
    err_kb = abs(M_kb - M_ref) / M_ref
    assert err <= max(2 * err_kb, 1e-13), (err, err_kb)     # the constant shift alone: 1.7e-10 at offset 1e3
    # what remains is the raw kernel's own rounding, eps * offset^2 relative per entry, in both paths (KernelBank.fit
    # forms the kernel by row blocks, whose rounding differs from one symmetric product's at that level)
    np.testing.assert_allclose(sb.col_mean_, kb.col_mean_, rtol=1e-12)
    np.testing.assert_allclose(sb.scale_, kb.scale_, rtol=np.finfo(float).eps * offset ** 2)


@pytest.mark.parametrize("make, match", [
    (lambda: StreamedBank(SMALL, normalize="diagonal"), "The 'normalize' parameter of StreamedBank must be None or a str among"),
    (lambda: StreamedBank([Precomputed(np.eye(5))]), "Precomputed matrix is already the stack"),
    (lambda: StreamedBank(SMALL, tile=0), "The 'tile' parameter of StreamedBank must be None or an int in the range"),
    (lambda: StreamedBank(SMALL, tile=2.5), "The 'tile' parameter of StreamedBank"),
    (lambda: StreamedBank(SMALL, n_jobs=0), "The 'n_jobs' parameter of StreamedBank"),
    (lambda: StreamedBank(SMALL, center="False"), "The 'center' parameter of StreamedBank must be an instance of 'bool'"),
    (lambda: StreamedBank(SMALL, progress="yes"), "The 'progress' parameter of StreamedBank"),
    (lambda: StreamedBank(SMALL, client=3), "The 'client' parameter of StreamedBank must be None, an instance of 'str' "
                                            "or an object implementing 'scatter', 'map' and 'scheduler_info'"),
    (lambda: StreamedAlignMKL(SMALL, method="best"), "'method' parameter of StreamedAlignMKL"),
    (lambda: StreamedAlignMKL(SMALL, normalize="diagonal"), "The 'normalize' parameter of StreamedAlignMKL"),
    (lambda: StreamedAlignMKL(SMALL, tile=-1), "The 'tile' parameter of StreamedAlignMKL"),
    (lambda: StreamedAlignMKL(SMALL, n_jobs=1.5), "The 'n_jobs' parameter of StreamedAlignMKL"),
    (lambda: StreamedAlignMKL(SMALL, client=[]), "The 'client' parameter of StreamedAlignMKL"),
    (lambda: StreamedAlignMKL(SMALL, center="False"), "The 'center' parameter of StreamedAlignMKL"),
])
def test_bad_input_is_named(make, match):
    X, y = _problem(30)
    if "Precomputed" in match:
        X = np.arange(5.0)[:, None]
        y = y[:5]
    with pytest.raises(ValueError, match=match):
        make().fit(X, y)


def test_bad_shapes_and_values():
    X, y = _problem(30)
    with pytest.raises(ValueError, match="y has 29 rows but X has 30"):
        StreamedBank(SMALL, progress=False).fit(X, y[:29])
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        StreamedBank(SMALL, progress=False).fit(Xn, y)
    with pytest.raises(ValueError, match="overflow"):
        StreamedBank([Polynomial(40, 1.0)], progress=False).fit(X * 1e6, y)
    sb = StreamedBank(SMALL, progress=False).fit(X, y)
    with pytest.raises(ValueError, match="weights must be 2 finite numbers"):
        sb.combine(X, [1.0])
    with pytest.raises(TypeError, match="never forms the"):
        sb.fit_transform(X)
    import scipy.sparse as sp
    big = sp.csr_matrix((200_000, 1000))
    with pytest.raises(ValueError, match="sparse 200000 x 1000 matrix; its dense copy would take 1.5 GiB"):
        streamed_alignment_stats(SMALL, big, np.arange(200_000) % 2, progress=False)


@pytest.mark.parametrize("normalize, center", [("trace", True), ("frobenius", True), (None, False)])
def test_past_the_budget_the_weights_stay_exact_and_the_features_give_the_combined_kernel(normalize, center):
    """Past `memory_budget` the weights are the exact streamed ones, and the second stage's features reproduce the exact
    combined kernel: on 60 points the Nystroem bank (200 columns per kernel) takes every training row as a landmark, so
    Z Z^T must equal kernel_scale_ * sum_k weights_k K_k (centered: center=True; up to its constant part otherwise)."""
    X, y = _problem(60)
    kw = dict(kernels=SMALL + [Polynomial(2, 1.0)], method="align", normalize=normalize, center=center)
    exact = StreamedAlignMKL(**kw).fit(X, y > 0)
    small = StreamedAlignMKL(**kw, memory_budget=8 * 50 * 50).fit(X, y > 0)
    assert exact.low_rank_ is None and small.low_rank_ is not None
    np.testing.assert_allclose(small.weights_, exact.weights_, rtol=0, atol=1e-12)
    assert small.kernel_scale_ == pytest.approx(exact.kernel_scale_, rel=1e-12)
    Z = small.low_rank_._features(X)
    K = exact.bank_.combine(X, exact.weights_ * exact.kernel_scale_)
    J = np.eye(60) - 1.0 / 60
    np.testing.assert_allclose(Z @ Z.T, J @ K @ J, rtol=0, atol=1e-7 * np.abs(K).max())
    assert (small.predict(X) == small.low_rank_.predict(X)).all() and small.score(X, y > 0) > 0.8


def test_past_the_budget_the_second_stage_is_the_matching_linear_model():
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.svm import SVC, SVR
    X, y = _problem(150)
    tight = 8 * 100 * 100
    svm = StreamedAlignMKL(SMALL, estimator=SVC(kernel="precomputed", C=3.0), memory_budget=tight).fit(X, y > 0)
    assert type(svm.estimator_).__name__ == "LinearSVC" and svm.estimator_.C == 3.0
    assert svm.decision_function(X).shape == (150,) and svm.score(X, y > 0) > 0.8
    ridge = StreamedAlignMKL(SMALL, estimator=KernelRidge(alpha=0.5, kernel="precomputed"), memory_budget=tight)
    assert ridge.fit(X, y).score(X, y) > 0.8 and ridge.estimator_.alpha == 0.5
    with pytest.raises(ValueError, match="combined kernel exceeds memory_budget.*SVR has no linear counterpart"):
        StreamedAlignMKL(SMALL, estimator=SVR(kernel="precomputed"), memory_budget=tight).fit(X, y)
    with pytest.raises(ValueError, match="method='linear'.*needs non-negative weights"):
        StreamedAlignMKL(SMALL, method="linear", memory_budget=tight).fit(X, y > 0)
    with pytest.raises(ValueError, match="'memory_budget' parameter of StreamedAlignMKL"):
        StreamedAlignMKL(SMALL, memory_budget=-1).fit(X, y > 0)
    yl = np.where(y > 0, "yes", "no")
    X0, y0 = X.copy(), yl.copy()
    named = StreamedAlignMKL(SMALL, memory_budget=tight).fit(X, yl)
    assert set(named.predict(X)) <= {"yes", "no"} and named.score(X, yl) > 0.8
    assert (X == X0).all() and (yl == y0).all()                      # the caller's arrays are untouched
    unlimited = StreamedAlignMKL(SMALL, memory_budget=None).fit(X, y > 0)
    assert unlimited.low_rank_ is None and unlimited.score(X, y > 0) > 0.8


def test_never_switching_past_physical_memory_is_refused_before_the_pass(monkeypatch):
    import mklbook.streaming as S
    X, y = _problem(150)
    monkeypatch.setattr(S, "_physical_memory", lambda: 8.0 * 100 * 100)      # a machine smaller than the 150 x 150 kernel
    def no_pass(*a, **k):
        raise AssertionError("the streamed pass ran before the refusal")
    monkeypatch.setattr(S.StreamedBank, "fit", no_pass)
    with pytest.raises(MemoryError, match=r"memory_budget=None\) on 150 points.*0\.0 GiB, more than this machine's"):
        StreamedAlignMKL(SMALL, memory_budget=None).fit(X, y > 0)
    monkeypatch.setattr(S, "_physical_memory", lambda: None)                 # a platform that does not say: no refusal
    with pytest.raises(AssertionError, match="streamed pass ran"):
        StreamedAlignMKL(SMALL, memory_budget=None).fit(X, y > 0)


def test_sparse_input_is_densified():
    import scipy.sparse as sp
    X, y = _problem(60)
    X[np.abs(X) < 0.8] = 0.0
    a, M = streamed_alignment_stats(SMALL, X, y, progress=False)
    a2, M2 = streamed_alignment_stats(SMALL, sp.csr_matrix(X), y, progress=False)
    np.testing.assert_array_equal(a2, a)
    np.testing.assert_array_equal(M2, M)
    sb = StreamedBank(SMALL, progress=False).fit(X, y)
    np.testing.assert_array_equal(sb.combine(sp.csr_matrix(X[:5]), [0.5, 0.5]), sb.combine(X[:5], [0.5, 0.5]))


def test_a_kernel_too_narrow_for_the_features_warns():
    "Gaussian(1.0) on raw features of scale 100: the kernel is the identity on the sample, predictions a constant."
    X, y = _problem(80)
    with pytest.warns(RuntimeWarning, match="numerically diagonal on the training set.*predicts the same value"):
        StreamedAlignMKL([Gaussian(1.0)]).fit(X * 100, y > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        StreamedAlignMKL().fit(X * 100, y > 0)                         # the default bank adapts: no warning


def test_constant_and_vanishing_kernels():
    X, y = _problem(40)
    with pytest.raises(ValueError, match="every kernel of the bank is constant"):
        StreamedBank(SMALL, progress=False).fit(np.ones((40, 4)), y)
    with pytest.warns(RuntimeWarning, match="vanish on the training set"):
        sb = StreamedBank([Gaussian(1e-14), Gaussian(0.5)], normalize="trace", center=True, progress=False).fit(X, y)
    assert sb.degenerate_.tolist() == [True, False] and sb.a_[0] == 0 and (sb.M_[0] == 0).all()
