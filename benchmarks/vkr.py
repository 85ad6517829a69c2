"""Benchmark: VKR solvers on the same problem -- HiGHS LP, coordinate descent + working-set LP, generic cvxpy.

For m in {250, 500, 1000} points (10 standard-normal features mapped into the unit ball, labels from a noisy quadratic
rule) and p = 10 polynomial kernels (x.x' + 1)^k, k = 1..10, with the trace penalty, lam = 1e-2, beta = 1e-3:
the wall-clock time of `solve_vkr(solver="lp")` (HiGHS on the full LP of Section 5), `solve_vkr(solver="cd")`
(Appendix C coordinate descent finished by a working-set LP), and cvxpy's direct formulation of Eq. (1) (CLARABEL;
only up to --cvxpy-max points, it is far slower), their objectives, and the peak Python memory (tracemalloc) of each
solver against the LP constraint matrix [-Q, Q, -I] (2 p m^2 + m non-zeros, 12 bytes each in CSR).
Times are measured in this process one after the other: compare ratios, not absolute seconds.

Prints a Markdown table and writes it to benchmarks/results/vkr.md.
"""
import argparse
import time
import tracemalloc
from pathlib import Path

import numpy as np

from mklbook.kernels import KernelBank, polynomial_bank
from mklbook.vkr import solve_vkr, trace_bound


def problem(m, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 10))
    y = np.where(X[:, 0] * X[:, 1] + 0.5 * X[:, 2] + 0.3 * rng.standard_normal(m) > 0, 1.0, -1.0)
    X /= np.linalg.norm(X, axis=1).max()
    return KernelBank(polynomial_bank(range(1, p + 1))).fit_transform(X), y


def measured(f):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = f()
    t = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, t, peak


def cvxpy_objective(Ks, y, Lambda):
    import cvxpy as cp
    p, m, _ = Ks.shape
    a = cp.Variable((p, m))
    marg = sum(cp.multiply(y, Ks[k] @ cp.multiply(y, a[k])) for k in range(p))
    obj = cp.sum(cp.pos(1 - marg)) / m + sum(Lambda[k] * cp.norm1(a[k]) for k in range(p))
    return cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000])
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--lam", type=float, default=1e-2)
    ap.add_argument("--beta", type=float, default=1e-3)
    ap.add_argument("--cvxpy-max", type=int, default=250)
    args = ap.parse_args()
    lines = [f"p = {args.p} polynomial kernels, trace penalty, lam = {args.lam:g}, beta = {args.beta:g}", "",
             "| m | LP matrix MiB | HiGHS LP s | LP peak MiB | CD+WS s | CD peak MiB | cvxpy s | time CD/LP | time cvxpy/LP "
             "| objective LP | objective CD (rel. diff) | objective cvxpy (rel. diff) | atoms | CD peak / LP matrix |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m in args.sizes:
        Ks, y = problem(m, args.p)
        r = trace_bound(Ks)
        lp_bytes = (2 * args.p * m * m + m) * 12 + (m + 1) * 4
        L, tl, pl = measured(lambda: solve_vkr(Ks, y, r, args.lam, args.beta, solver="lp", tol=1e-8))
        C, tc, pc = measured(lambda: solve_vkr(Ks, y, r, args.lam, args.beta, solver="cd", tol=1e-8))
        assert L.status == C.status == "optimal", (L, C)
        if m <= args.cvxpy_max:
            t0 = time.perf_counter()
            ref = cvxpy_objective(Ks, y, L.Lambda)
            tv = time.perf_counter() - t0
            cv = f"{tv:.1f}", f"{tv / tl:.1f}", f"{ref:.8f} ({abs(ref - L.objective) / L.objective:.1e})"
        else:
            cv = "–", "–", "not run (m > --cvxpy-max)"
        lines.append(f"| {m} | {lp_bytes / 2**20:.0f} | {tl:.2f} | {pl / 2**20:.0f} | {tc:.2f} | {pc / 2**20:.1f} | {cv[0]} | "
                     f"{tc / tl:.2f} | {cv[1]} | {L.objective:.8f} | {C.objective:.8f} "
                     f"({abs(C.objective - L.objective) / L.objective:.1e}) | {cv[2]} | {L.n_support} | {pc / lp_bytes:.3f} |")
        print(lines[-1], flush=True)
    text = "## VKR solvers: HiGHS LP vs coordinate descent (+ working-set LP) vs cvxpy\n\n" + "\n".join(lines) + "\n"
    out = Path(__file__).parent / "results" / "vkr.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
