"""Property tests for mklbook.kernels: centering, the centered Gram identity and the kernel bank."""
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone

from mklbook.kernels import (Gaussian, KernelBank, Linear, Polynomial, RankOne, Sigmoid, center, center_test,
                             centered_gram, check_stack, gaussian_bank)


def _stack(seed, m, p, symmetric=True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 3))
    kerns = [Gaussian(g) for g in rng.uniform(0.05, 3.0, size=p)]
    Ks = np.stack([k(X) for k in kerns])
    if not symmetric:
        Ks = Ks + rng.standard_normal(Ks.shape)
    return Ks


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(2, 40), p=st.integers(1, 5), symmetric=st.booleans())
def test_centered_gram_matches_explicit(seed, m, p, symmetric):
    Ks = _stack(seed, m, p, symmetric)
    H = np.eye(m) - 1.0 / m
    Kc = np.stack([H @ K @ H for K in Ks])
    ref = np.einsum("kij,lij->kl", Kc, Kc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # m = 2 can give constant kernels
        M = centered_gram(Ks)
    np.testing.assert_allclose(M, ref, rtol=1e-8, atol=1e-10 * max(1.0, np.abs(ref).max()))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(2, 30))
def test_center_is_idempotent_projection(seed, m):
    Ks = _stack(seed, m, 2)
    Kc = center(Ks)
    np.testing.assert_allclose(center(Kc), Kc, atol=1e-12)
    np.testing.assert_allclose(Kc.sum(axis=2), 0, atol=1e-10)
    assert all(np.linalg.eigvalsh(K).min() > -1e-10 for K in Kc)


def test_centered_gram_blocks_cover_every_row():
    # m not a multiple of the block size, p large enough to force small blocks
    Ks = _stack(0, 101, 3)
    from mklbook import kernels
    M = centered_gram(Ks)
    Kc = center(Ks)
    np.testing.assert_allclose(M, np.einsum("kij,lij->kl", Kc, Kc), rtol=1e-10)
    assert kernels._block_rows(3, 101, target_bytes=8 * 3 * 101 * 7) == 7



@pytest.mark.parametrize("normalize", [None, "trace", "diagonal", "frobenius"])
@pytest.mark.parametrize("centering", [False, True])
def test_bank_train_row_equals_test_row(normalize, centering):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((25, 4))
    bank = KernelBank([Gaussian(0.3), Polynomial(3), Linear(), RankOne(2), Sigmoid(0.1, 0.0)],
                      normalize=normalize, center=centering)
    Ktr = bank.fit_transform(X)
    np.testing.assert_allclose(bank.transform(X), Ktr, atol=1e-10)
    clone_bank = pickle.loads(pickle.dumps(clone(bank).fit(X)))
    np.testing.assert_allclose(clone_bank.transform(X[:3]), Ktr[:, :3], atol=1e-10)



def test_bad_inputs_have_clear_errors():
    with pytest.raises(ValueError, match="must be square"):
        check_stack(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="NaN or inf"):
        KernelBank([Gaussian()]).fit(np.array([[0.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="not positive semi-definite"):
        check_stack(Sigmoid(1.0, -3.0)(np.random.default_rng(0).standard_normal((30, 3))), psd=True)
    with pytest.raises(ValueError, match="reshape"):
        KernelBank().fit(np.arange(5.0))


def test_inputs_are_not_modified():
    Ks = _stack(3, 15, 3)
    before = Ks.copy()
    center(Ks); centered_gram(Ks); center_test(Ks[:, :4], Ks)
    np.testing.assert_array_equal(Ks, before)


def test_default_bank_adapts_to_the_training_inputs():
    rng = np.random.default_rng(0)
    X, Xt = rng.standard_normal((30, 3)), rng.standard_normal((5, 3))
    bank = KernelBank(normalize="trace", center=True).fit(X)
    assert bank.kernels_ == gaussian_bank(2.0 ** np.arange(-3, 4) / 3, standardize=True)
    # an affine change of units per feature leaves the default bank's train and test stacks unchanged
    a, b = np.array([1e-3, 1.0, 600.0]), np.array([5.0, -2.0, 1e4])
    moved = KernelBank(normalize="trace", center=True).fit(X * a + b)
    np.testing.assert_allclose(moved.train_stack_, bank.train_stack_, atol=1e-12)
    np.testing.assert_allclose(moved.transform(Xt * a + b), bank.transform(Xt), atol=1e-12)


# -- the kernel contract at a proportionate cost: tests that refuse only with proof -------------------------------------
from mklbook.kernels import Sigmoid, _psd_sample_size, check_psd, check_stack, centered_products, psd_violation


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("a,b", [(1.0, -3.0), (0.1, 0.0), (0.05, 1.0), (2.0, 0.0)])
def test_sampled_psd_test_proves_what_it_refuses(seed, a, b):
    X = np.random.default_rng(seed).standard_normal((600, 8))
    S = Sigmoid(a / 8, b)(X)
    lam = np.linalg.eigvalsh(S)[0]
    bound = psd_violation(S, sample=_psd_sample_size(600), random_state=seed)
    if bound is not None:
        assert lam <= bound + 1e-10, "a refusal must be a proof: an upper bound on lambda_min"
    if lam < -1e-3 * np.abs(np.diag(S)).max():
        assert bound is not None, "a clearly indefinite sigmoid kernel was missed by the sampled test"


def test_psd_modes():
    X = np.random.default_rng(0).standard_normal((300, 4))
    S, G = Sigmoid(1.0, -3.0)(X), Gaussian(0.5)(X)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        check_psd(S[None], "check")
    with pytest.raises(ValueError, match="not positive semi-definite"):
        check_psd(S[None], "full")
    assert check_psd(np.stack([G, S]), "allow") == [1]
    assert check_psd(S[None], "assume") == [] and check_psd(S[None], "trusted") == []
    with pytest.raises(ValueError, match="psd must be one of"):
        check_psd(G[None], "yes")
    Gb = G - 1e-3 * np.eye(300)                            # slightly indefinite everywhere: the full test sees it
    assert psd_violation(Gb) is not None


def test_symmetry_probes_find_one_asymmetric_entry():
    X = np.random.default_rng(1).standard_normal((500, 4))
    Ks = np.stack([Gaussian(0.3)(X), Gaussian(1.0)(X)])
    bad = Ks.copy()
    bad[1, 17, 400] += 1e-6
    for f in (lambda K: check_stack(K, symmetric=True), lambda K: centered_products(K, symmetric_tol=1e-8)):
        with pytest.raises(ValueError, match=r"Ks\[1\] is not symmetric .*\(K \+ K.T\) / 2"):
            f(bad)
        f(Ks)                                              # a symmetric stack passes
    tiny = Ks.copy()
    tiny[0, 3, 7] += 1e-12                                 # round-off: accepted
    check_stack(tiny, symmetric=True)
    M0, a0 = centered_products(Ks, np.arange(500.0))
    M1, a1 = centered_products(Ks, np.arange(500.0), symmetric_tol=1e-8)
    np.testing.assert_allclose(M0, M1, rtol=1e-12)
    np.testing.assert_allclose(a0, a1, rtol=1e-12)


def test_the_bank_works_by_row_blocks_bit_for_bit(monkeypatch):
    "Distances, centering and diagonal normalisation go by row blocks (no (m, m) temporary): the same bits as one block."
    import mklbook.kernels as kk
    from mklbook.kernels import KernelBank, Linear, Polynomial, gaussian_bank
    X = np.random.default_rng(0).standard_normal((90, 5))
    settings = [dict(kernels=None, normalize="trace", center=True), dict(kernels=None, normalize="diagonal", center=False),
                dict(kernels=gaussian_bank([0.1, 1.0]) + [Polynomial(2), Linear()], normalize="diagonal", center=True)]
    whole = [(b.fit_transform(X), b.transform(X[:7])) for b in (KernelBank(**s) for s in settings)]
    full = kk._row_blocks
    monkeypatch.setattr(kk, "_row_blocks", lambda n, c, size=200: full(n, c, size))   # 2 rows a block
    assert len(kk._row_blocks(90, 90)) == 45
    for (K, T), s in zip(whole, settings):
        b = KernelBank(**s)
        assert np.array_equal(b.fit_transform(X), K) and np.array_equal(b.transform(X[:7]), T)


@pytest.mark.parametrize("normalize", [None, "trace", "diagonal", "frobenius"])
@pytest.mark.parametrize("centering", [True, False])
def test_fit_takes_the_stack_statistics_without_holding_the_stack(normalize, centering, monkeypatch):
    """`fit` streams blocks of rows: the same statistics as `fit_transform` (which sees the whole stack), and a peak
    allocation far below the p m^2 floats of the stack."""
    import tracemalloc
    from mklbook.kernels import default_bank
    X = np.random.default_rng(3).normal(size=(400, 4)) * [1.0, 10.0, 0.1, 3.0] + 5.0
    kerns = default_bank(X, "both") + [Linear(), RankOne(0)]
    full = KernelBank(kerns, normalize=normalize, center=centering)
    S = full.fit_transform(X)
    monkeypatch.setattr("mklbook.kernels.BLOCK_BYTES", S.nbytes // 40)   # about 20 rows per block
    tracemalloc.start()
    streamed = KernelBank(kerns, normalize=normalize, center=centering).fit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.25 * S.nbytes, (peak, S.nbytes)
    # Both paths center in floating point: they agree to round-off of the raw entries, which a centered diagonal near 0
    # (RankOne on a feature with an offset) magnifies by max|K| / min K^c_ii.
    big = np.abs(KernelBank(kerns, center=False).fit_transform(X)).max(axis=(1, 2))
    cond = np.maximum(1.0, big / np.abs(full.diag_fit_).min(axis=1))
    assert np.allclose(full.col_mean_, streamed.col_mean_, rtol=0, atol=1e-13 * big.max())
    assert (np.abs(full.diag_fit_ - streamed.diag_fit_).max(axis=1) <= 1e-12 * big).all()
    assert np.allclose(full.scale_, streamed.scale_, rtol=1e-11)
    assert (full.degenerate_ == streamed.degenerate_).all()
    assert (np.abs(streamed.transform(X) - S).max(axis=(1, 2)) <= 1e-13 * cond).all()


@pytest.mark.parametrize("normalize", [None, "trace", "frobenius", "diagonal"])
@pytest.mark.parametrize("center", [False, True])
def test_subset_and_processed_diagonal_without_a_stack(normalize, center):
    """`_subset` equals a bank of those kernels fitted on the same inputs (no second pass), and `_processed_diag` the
    diagonal of `fit_transform`'s stack, for every centering and normalisation."""
    from mklbook.kernels import Gaussian, KernelBank, Linear, Polynomial
    X = np.random.default_rng(0).standard_normal((60, 4))
    Z = np.random.default_rng(1).standard_normal((7, 4))
    ks = [Gaussian(0.3, standardize=True), Linear(), Polynomial(2)]
    bank = KernelBank(ks, normalize=normalize, center=center).fit(X)
    ref = KernelBank([ks[2], ks[0]], normalize=normalize, center=center).fit(X)
    np.testing.assert_array_equal(bank._subset([2, 0]).transform(Z), ref.transform(Z))
    K = KernelBank(ks, normalize=normalize, center=center).fit_transform(X)
    np.testing.assert_allclose(bank._processed_diag(), np.einsum("kii->ki", K), rtol=1e-12, atol=1e-12)
