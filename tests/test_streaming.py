"""Estimator contract, bad input and edge cases of mklbook.streaming (statistics streamed from X, no stack).

The chapter checks the streamed statistics against the stacked ones under every normalisation; here: scikit-learn's
estimator checks, clear errors, untouched inputs, tile-size independence, and degenerate banks."""
import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from mklbook.alignment import alignment_stats
from mklbook.kernels import Gaussian, KernelBank, Polynomial, Precomputed, gaussian_bank
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


@pytest.mark.parametrize("tile", [1, 7, 64, 1000])
def test_any_tile_size_gives_the_stacked_statistics(tile):
    X, y = _problem()
    bank = gaussian_bank([0.01, 0.02, 0.3]) + [Polynomial(3, 1.0)]
    a, M = alignment_stats(KernelBank(bank, normalize="trace", center=True).fit_transform(X), y)
    a2, M2 = streamed_alignment_stats(bank, X, y, normalize="trace", center=True, tile=tile, n_jobs=2, progress=False)
    np.testing.assert_allclose(a2, a, rtol=1e-10, atol=1e-14 * np.abs(a).max())
    np.testing.assert_allclose(M2, M, rtol=1e-10, atol=1e-14 * np.abs(M).max())


def test_inputs_untouched_and_test_kernels_as_kernelbank():
    X, y = _problem()
    X0, y0 = X.copy(), y.copy()
    sb = StreamedBank(SMALL, normalize="frobenius", center=True, progress=False).fit(X, y)
    kb = KernelBank(SMALL, normalize="frobenius", center=True).fit(X)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_allclose(sb.transform(X[:9]), kb.transform(X[:9]), atol=1e-12)
    np.testing.assert_allclose(sb.combine(X[:9], [0.3, 0.7]), np.tensordot([0.3, 0.7], kb.transform(X[:9]), 1), atol=1e-12)


@pytest.mark.parametrize("make, match", [
    (lambda: StreamedBank(SMALL, normalize="diagonal"), "'diagonal' rescales every entry"),
    (lambda: StreamedBank([Precomputed(np.eye(5))]), "Precomputed matrix is already the stack"),
    (lambda: StreamedBank(SMALL, tile=0), "tile"),
    (lambda: StreamedBank(SMALL, n_jobs=0), "n_jobs"),
    (lambda: StreamedAlignMKL(SMALL, method="best"), "'method' parameter of StreamedAlignMKL"),
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
    with pytest.raises(TypeError, match="client must be None, a dask.distributed Client or a scheduler address"):
        StreamedBank(SMALL, client=3, progress=False).fit(X, y)


def test_constant_and_vanishing_kernels():
    X, y = _problem(40)
    with pytest.raises(ValueError, match="every kernel of the bank is constant"):
        StreamedBank(SMALL, progress=False).fit(np.ones((40, 4)), y)
    with pytest.warns(RuntimeWarning, match="vanish on the training set"):
        sb = StreamedBank([Gaussian(1e-14), Gaussian(0.5)], normalize="trace", center=True, progress=False).fit(X, y)
    assert sb.degenerate_.tolist() == [True, False] and sb.a_[0] == 0 and (sb.M_[0] == 0).all()
