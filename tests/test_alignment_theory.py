"""Fast checks of mklbook.alignment_theory: the bound functions' shape (monotone in m and delta), the Figure 1 closed
form against alignments computed from kernel matrices, Lemma 6's range, and the bad-input errors."""
import numpy as np
import pytest

from mklbook.alignment_theory import (
    figure1_alignments, lemma18_sensitivity, lemma19_bias_bound, lemma19_exact_bias, prop11_bound, prop21_bound,
    theorem12_beta, theorem12_bound, theorem13_bound, theorem14_bound, theorem15_bound, theorem16_bound, theorem17_bound,
    unnormalized_alignment,
)
from mklbook.kernels import center

MS = np.array([10, 20, 50, 100, 1000, 10_000])


def _rho(K, L):
    Kc, Lc = center(K), center(L)
    return (Kc * Lc).sum() / (np.linalg.norm(Kc) * np.linalg.norm(Lc))


def _A(K, L):
    return (K * L).sum() / (np.linalg.norm(K) * np.linalg.norm(L))


@pytest.mark.parametrize("bound", [
    lambda m, d: prop11_bound(m, d, 1.0, 2.0),
    lambda m, d: prop11_bound(m, d, 1.0, 2.0, sharp=True),
    lambda m, d: theorem12_bound(m, d, 3.0),
    lambda m, d: theorem12_bound(m, d, 3.0, sharp=True),
    lambda m, d: theorem17_bound(m, d, 0.1, 1.0, 1.0 / m, 0.1),
    lambda m, d: theorem17_bound(m, d, 0.1, 1.0, 1.0 / m, 0.1, paper=True),
])
def test_probabilistic_bounds_decrease_in_m_and_grow_as_delta_shrinks(bound):
    vals = bound(MS, 0.05)
    assert np.all(np.diff(vals) < 0)
    for m in (20, 500):
        assert bound(m, 0.01) > bound(m, 0.05) > bound(m, 0.2)


def test_deterministic_bounds_decrease_in_m():
    assert np.all(np.diff(lemma18_sensitivity(MS, 1.0, 1.0)) < 0)
    assert np.all(np.diff(lemma19_bias_bound(MS, 1.0, 1.0)) < 0)
    assert np.all(lemma19_bias_bound(MS, 1.0, 1.0, sharp=True) < lemma19_bias_bound(MS, 1.0, 1.0))
    b16 = [theorem16_bound(m, 0.1, 1.0, 1.0, [0.0, 0.0], [5.0, 3.0]) for m in MS]
    assert np.all(np.diff(b16) < 0)
    # the exact bias is O(1/m) and within the sharp bound for moments allowed by R^2 = R'^2 = 1
    bias = lemma19_exact_bias(MS, 0.3, 0.8, 0.7)
    assert np.all(np.abs(bias) <= lemma19_bias_bound(MS, 1.0, 1.0, sharp=True))
    np.testing.assert_allclose(bias * MS, 0.8 - 3 * 0.3, rtol=0.5)


def test_theorem12_constants():
    # the printed form is weaker than the sharp one; the corrected beta equals the printed one when R = R'
    assert np.all(theorem12_bound(MS, 0.1, 2.0) > theorem12_bound(MS, 0.1, 2.0, sharp=True))
    assert theorem12_beta(1.0, 1.0, 0.2, 0.5) == theorem12_beta(1.0, 1.0, 0.2, 0.5, paper=True) == 5.0
    # the corrected beta is invariant to rescaling K' (R'^2 -> c R'^2, E[K'_c^2] -> c^2 E[K'_c^2]); the printed one is not
    c = 7.0
    assert theorem12_beta(1.0, c, 0.2, 0.5 * c ** 2) == pytest.approx(theorem12_beta(1.0, 1.0, 0.2, 0.5))
    assert theorem12_beta(1.0, c, 0.2, 0.5 * c ** 2, paper=True) != pytest.approx(theorem12_beta(1.0, 1.0, 0.2, 0.5, paper=True))




def test_classification_and_regression_bounds():
    assert theorem13_bound(0.6, 1.2) == pytest.approx(0.5)
    assert theorem14_bound(0.75) == pytest.approx(0.5)
    assert theorem15_bound(0.5, 2.0) == pytest.approx(0.75)


def test_prop21_bound_is_invariant_to_scaling_M_and_a():
    rng = np.random.default_rng(1)
    B = rng.standard_normal((3, 3))
    M = B @ B.T + np.eye(3)
    dM = 0.01 * (B + B.T)
    da = 0.01 * rng.standard_normal(3)
    v, vp = np.array([1.0, 0.5, 0.0]), np.array([1.1, 0.4, 0.0])
    r1, r2 = prop21_bound(M, da, dM, v, vp), prop21_bound(9 * M, 9 * da, 9 * dM, v, vp)
    assert r1.dv == pytest.approx(r2.dv) and r1.dmu == pytest.approx(r2.dmu)
    assert prop21_bound(M, da, dM, v, vp, q=1).dmu >= 0


@pytest.mark.parametrize("call, message", [
    (lambda: prop11_bound(0, 0.1, 1, 1), "integer >= 1"),
    (lambda: lemma18_sensitivity(2.5, 1, 1), "integer >= 1"),
    (lambda: prop11_bound(10, 0.0, 1, 1), "open interval (0, 1)"),
    (lambda: theorem12_bound(10, 1.5, 2.0), "open interval (0, 1)"),
    (lambda: lemma19_bias_bound(10, 0.0, 1.0), "R2 must be positive"),
    (lambda: prop11_bound(10, 0.1, 1.0, -2.0), "R2p must be positive"),
    (lambda: theorem12_bound(10, 0.1, 0.5), "at least 1"),
    (lambda: theorem12_beta(1.0, 1.0, 2.0, 0.5), "cannot exceed R^4"),
    (lambda: theorem13_bound(1.5, 1.2), "lies in [-1, 1]"),
    (lambda: theorem13_bound(0.5, 0.5), "at least 1"),
    (lambda: figure1_alignments(-0.1), "[0, 1]"),
    (lambda: lemma18_sensitivity(np.inf, 1, 1), "NaN or inf"),
    (lambda: theorem16_bound(10, 0.0, 1, 1, [0.1], [1.0]), "lambda0 must be positive"),
    (lambda: theorem17_bound(10, 0.1, -0.1, 1, 1, 0.1), "emp_risk must be non-negative"),
    (lambda: unnormalized_alignment(np.ones((2, 3)), np.ones((2, 3))), "square"),
])
def test_bad_input_errors(call, message):
    with pytest.raises((ValueError, TypeError), match=None) as info:
        call()
    assert message in str(info.value)
