"""Benchmark: alignment statistics + alignf weights against one BLAS product; alignf vs a generic QP call.

Part 1 -- for m in {1000, 2000, 4000} points (10 standard-normal features) and p = 20 Gaussian kernels
(gamma = 2^-10 .. 2^9), the time of computing the alignment statistics and the alignf weights from a stack --
`a, M = alignment_stats(Ks, y)` then the certified QP on (a, M), which is exactly what `alignf_weights(Ks, y)`
and `AlignMKL` do -- divided by the time of one BLAS product F F^T of the flattened (p, m^2) stack, both measured
in this process, interleaved, best of `--repeat`. The statistics alone are also reported.

Part 2 -- the alignf QP (7) on an ill-conditioned bank (20 Gaussian kernels 2^-12 .. 2^7, 300 points of the
breast-cancer data, centered and trace-normalised): mklbook's certified NNLS against cvxpy with default
settings, with the KKT residual each achieves.

Prints Markdown tables and writes them to benchmarks/results/alignment.md.
"""
import argparse
import sys
import time
from pathlib import Path

import cvxpy as cp
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).parent))
from _timing import best_of  # noqa: E402
from mklbook.alignment import alignf_weights, alignment_stats, kkt_residual, nonneg_quadratic
from mklbook.kernels import KernelBank, gaussian_bank



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000])
    ap.add_argument("--p", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    lines = ["## alignment_stats + alignf_weights vs one BLAS product", "",
             f"p = {args.p} Gaussian kernels, best of {args.repeat}", "",
             "| m | stack MiB | BLAS F F^T (s) | alignment_stats (s) | ratio | alignf_weights: stats + QP (s) | ratio |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for m in args.sizes:
        rng = np.random.default_rng(0)
        X = rng.standard_normal((m, 10))
        y = np.sign(X[:, 0] + X[:, 1] * X[:, 2])
        D = euclidean_distances(X, squared=True)
        Ks = np.stack([np.exp(-g * D) for g in 2.0 ** np.arange(-10, -10 + args.p)])
        del D
        F = Ks.reshape(args.p, -1)
        t_blas, t_both, t_f = [], [], []
        for _ in range(args.repeat):          # interleaved, so that load on the machine hits all three alike
            t_blas.append(best_of(lambda: F @ F.T, 1))
            t_both.append(best_of(lambda: alignment_stats(Ks, y), 1))
            t_f.append(best_of(lambda: alignf_weights(Ks, y), 1))
        t_blas, t_both, t_f = min(t_blas), min(t_both), min(t_f)
        r = alignf_weights(Ks, y)
        assert r.status == "optimal", r
        lines.append(f"| {m} | {Ks.nbytes / 2**20:.0f} | {t_blas:.3f} | {t_both:.3f} | {t_both / t_blas:.2f} | "
                     f"{t_f:.3f} | {t_f / t_blas:.2f} |")
        print(lines[-1], flush=True)
        del Ks, F

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:300]
    y = y[:300]
    Ks = KernelBank(gaussian_bank(2.0 ** np.arange(-12, 8)), normalize="trace", center=True).fit_transform(X)
    a, M = alignment_stats(Ks, y)
    lam = np.linalg.eigvalsh(M)
    t_ours = best_of(lambda: nonneg_quadratic(M, a), 5)
    v_ours, res_ours, _ = nonneg_quadratic(M, a)
    v = cp.Variable(len(a))
    prob = cp.Problem(cp.Minimize(cp.quad_form(v, cp.psd_wrap(M)) - 2 * a @ v), [v >= 0])
    t_cvx = best_of(lambda: prob.solve(), 3)
    res_cvx = kkt_residual(np.maximum(v.value, 0), M, a)
    lines += ["", "## the alignf QP on an ill-conditioned bank", "",
              f"20 Gaussian kernels 2^-12..2^7 on 300 breast-cancer points; eigenvalues of M from {lam.max():.1e} "
              f"down to |{np.abs(lam).min():.1e}| (ratio {lam.max() / max(np.abs(lam).min(), 1e-300):.1e})", "",
              "| solver | seconds | KKT residual (relative) |", "|---|---:|---:|",
              f"| mklbook nonneg_quadratic (NNLS on an eigen-factor) | {t_ours:.4f} | {res_ours:.1e} |",
              f"| cvxpy default ({prob.solver_stats.solver_name}) | {t_cvx:.4f} | {res_cvx:.1e} |"]
    text = "\n".join(lines)
    print("\n".join(lines[-8:]))
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "alignment.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
