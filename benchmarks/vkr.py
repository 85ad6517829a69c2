"""Benchmark: VKR solvers on the same problem -- HiGHS on the full LP, row and column generation on the dual (on the stack
in memory and on an ImplicitStack), Appendix C coordinate descent finished by generation, generic cvxpy -- and the
(lambda, beta) grid of the experiments solved point by point against `vkr_path`.

Default mode (solvers). For m in {250, 500, 1000, 2000, 4000} points (10 standard-normal features mapped into the unit
ball, labels from a noisy quadratic rule) and p = 10 polynomial kernels (x.x' + 1)^k, k = 1..10, with the trace penalty,
lam = 1e-2, beta = 1e-3: the wall-clock time of `solve_vkr(solver="lp")` (HiGHS on the full LP of Section 5; only up to
--lp-max points), `solve_vkr(solver="cg")` (row and column generation on the dual) on the (p, m, m) stack and on an
`ImplicitStack` of the same kernels (the stack never formed; its construction is timed with it), `solve_vkr(solver="cd")`
(Appendix C, then generation), and cvxpy's direct formulation of Eq. (1) (CLARABEL; only up to --cvxpy-max points), their
objectives, and the peak Python memory (tracemalloc) of each solver beside the stack (8 p m^2 bytes, allocated before
the measurement) and the LP constraint matrix [-Q, Q, -I] (2 p m^2 + m non-zeros, 12 bytes each in CSR).

--path mode (grids). Fold 0 of the paper's rotation on one set (default: ionosphere), VKRT (ten polynomial kernels,
trace penalty), the paper's 9 x 9 grid lam, beta in {1, ..., 1e-8}: CPU seconds per grid point of (a) a fresh
StandardScaler -> VKRClassifier(solver="lp") pipeline per point (stack, penalties and a cold full LP), measured on
--sample points and extrapolated; (b) the same with solver="cg" (the default for these sizes); (c)
`vkr_path(warm_basis=False)` (one stack, working set carried); (d) `vkr_path` (one stack, one warm HiGHS model).
Objectives of (a) and (b) are compared with (d) on the sampled points.

Times are measured in this process one after the other: compare ratios, not absolute seconds. Prints Markdown and
writes it to benchmarks/results/vkr.md (each mode replaces its own section).
"""
import argparse
import re
import time
import tracemalloc
from pathlib import Path

import numpy as np

from mklbook.kernels import KernelBank, polynomial_bank
from mklbook.vkr import ImplicitStack, solve_vkr, trace_bound

RESULTS = Path(__file__).parent / "results" / "vkr.md"


def problem(m, p, seed=0):
    "(X, y, stack): the inputs in the unit ball, the labels and the (p, m, m) stack of (x.x' + 1)^k, k = 1..p."
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 10))
    y = np.where(X[:, 0] * X[:, 1] + 0.5 * X[:, 2] + 0.3 * rng.standard_normal(m) > 0, 1.0, -1.0)
    X /= np.linalg.norm(X, axis=1).max()
    return X, y, KernelBank(polynomial_bank(range(1, p + 1))).fit_transform(X)


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


def write_section(title, body):
    "Replace (or append) the section `## title` of the results file."
    RESULTS.parent.mkdir(exist_ok=True)
    text = RESULTS.read_text() if RESULTS.exists() else ""
    sections = re.split(r"(?m)^(?=## )", text)
    new = f"## {title}\n\n{body.rstrip()}\n\n"
    for i, sec in enumerate(sections):
        if sec.startswith(f"## {title}"):
            sections[i] = new
            break
    else:
        sections.append(new)
    RESULTS.write_text("\n\n".join(sec.strip() for sec in sections if sec.strip()) + "\n")


def solvers(args):
    head = ["m", "stack MiB", "LP matrix MiB", "LP s", "CD+gen. s", "generation s", "implicit s", "cvxpy s", "LP / gen.",
            "implicit / gen.", "objective (generation)", "largest rel. diff. of F", "atoms", "LP peak MiB",
            "gen. peak MiB", "implicit peak MiB", "rounds, passes"]
    lines = [f"p = {args.p} polynomial kernels, trace penalty, lam = {args.lam:g}, beta = {args.beta:g}; 'implicit': "
             "generation on an ImplicitStack built from X (the stack never formed), construction included", "",
             "| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for m in args.sizes:
        X, y, Ks = problem(m, args.p)
        r = trace_bound(Ks)
        lp_bytes = (2 * args.p * m * m + m) * 12 + (m + 1) * 4
        G, tg, pg = measured(lambda: solve_vkr(Ks, y, r, args.lam, args.beta, solver="cg", tol=1e-8))
        C, tc, pc = measured(lambda: solve_vkr(Ks, y, r, args.lam, args.beta, solver="cd", tol=1e-8))
        I, ti, pi = measured(lambda: solve_vkr(ImplicitStack(polynomial_bank(range(1, args.p + 1)), X), y, r,
                                               args.lam, args.beta, solver="cg", tol=1e-8))
        runs = [G, C, I]
        if m <= args.lp_max:
            L, tl, pl = measured(lambda: solve_vkr(Ks, y, r, args.lam, args.beta, solver="lp", tol=1e-8))
            runs.append(L)
            lp = f"{tl:.2f}", f"{tl / tg:.0f}", f"{pl / 2**20:.0f}"
        else:
            lp = "–", "–", "–"
        assert all(R.status == "optimal" for R in runs), [(R.solver, R.status, R.message) for R in runs]
        if m <= args.cvxpy_max:
            t0 = time.perf_counter()
            runs.append(type("R", (), {"objective": cvxpy_objective(Ks, y, G.Lambda)}))
            cv = f"{time.perf_counter() - t0:.1f}"
        else:
            cv = "–"
        diff = max(abs(R.objective - G.objective) / G.objective for R in runs)
        rounds = G.message.split("; ")[1].split(" over")[0]
        lines.append(f"| {m} | {Ks.nbytes / 2**20:.0f} | {lp_bytes / 2**20:.0f} | {lp[0]} | {tc:.2f} | {tg:.2f} | {ti:.2f} | "
                     f"{cv} | {lp[1]} | {ti / tg:.1f} | {G.objective:.8f} | {diff:.1e} | {G.n_support} | {lp[2]} | "
                     f"{pg / 2**20:.1f} | {pi / 2**20:.1f} | {rounds} |")
        print(lines[-1], flush=True)
    lines += ["", "The stack stays in memory for the LP, CD and 'generation' (its 8 p m^2 bytes are not in their peaks); "
              "'implicit' never forms it: its peak is all it needs."]
    write_section("VKR solvers: HiGHS LP, row and column generation (stack / implicit), CD + generation, cvxpy",
                  "\n".join(lines))
    print("\n".join(lines))


def paths(args):
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from mklbook.kernels import Polynomial
    from mklbook.protocol import RotatingFolds
    from mklbook.vkr import VKRClassifier, vkr_path
    from mklbook.vkr_experiments import load_vkr_dataset

    X, y = load_vkr_dataset(args.set)
    sp = RotatingFolds(5, random_state=0).splits(X, y)[0]
    grid = [10.0 ** -i for i in range(9)]
    kernels = [Polynomial(k) for k in range(1, 11)]
    est = VKRClassifier(kernels, penalty="trace")
    Ks, _, ytr = est._prepare(StandardScaler().fit_transform(X[sp.train]), y[sp.train])
    m = Ks.shape[1]
    T = time.process_time()
    P = vkr_path(Ks, ytr, est.penalties_, grid, grid, warn=False)
    t_path = time.process_time() - T
    T = time.process_time()
    P0 = vkr_path(Ks, ytr, est.penalties_, grid, grid, warm_basis=False, warn=False)
    t_ws = time.process_time() - T
    rng = np.random.default_rng(0)
    keys = list(P)
    pick = [keys[i] for i in rng.choice(len(keys), args.sample, replace=False)]
    per, worst = {}, {}
    for solver in ("lp", "cg"):
        T, w = time.process_time(), 0.0
        for lam, beta in pick:
            pipe = make_pipeline(StandardScaler(), clone(est).set_params(lam=lam, beta=beta, solver=solver))
            pipe.fit(X[sp.train], y[sp.train])
            R = pipe[-1].result_
            w = max(w, abs(R.objective - P[lam, beta].objective) / P[lam, beta].objective)
        per[solver], worst[solver] = (time.process_time() - T) / len(pick), w
    w0 = max(abs(P0[k].objective - P[k].objective) / P[k].objective for k in P)
    n_opt = sum(r.status == "optimal" for r in P.values())
    lines = [f"{args.set}, fold 0 of the rotation (m = {m} training points), VKRT (10 polynomial kernels, trace penalty), "
             f"the paper's 9 x 9 grid; CPU seconds (process time); per-point fits measured on {args.sample} random grid points.", "",
             "| method | CPU s per grid point | 81 points (s) | speed-up vs per-point LP | max rel. objective diff vs warm path |",
             "|---|---:|---:|---:|---:|",
             f"| per-point pipeline, solver='lp' (full LP) | {per['lp']:.3f} | {81 * per['lp']:.0f} (extrapolated) | 1.0 | {worst['lp']:.1e} |",
             f"| per-point pipeline, solver='cg' (generation) | {per['cg']:.3f} | {81 * per['cg']:.0f} (extrapolated) | {per['lp'] / per['cg']:.1f} | {worst['cg']:.1e} |",
             f"| vkr_path(warm_basis=False): one stack, working set carried | {t_ws / 81:.3f} | {t_ws:.1f} | {81 * per['lp'] / t_ws:.1f} | {w0:.1e} |",
             f"| vkr_path: one stack, one warm HiGHS model | {t_path / 81:.3f} | {t_path:.1f} | {81 * per['lp'] / t_path:.1f} | 0 |",
             "", f"{n_opt} of 81 warm-path points certified optimal (relative gap <= 1e-7)."]
    write_section("Grid paths: the 9 x 9 (lambda, beta) grid of one fold", "\n".join(lines))
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000, 4000])
    ap.add_argument("--lp-max", type=int, default=1000, help="largest m solved by the full LP (it is slow)")
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--lam", type=float, default=1e-2)
    ap.add_argument("--beta", type=float, default=1e-3)
    ap.add_argument("--cvxpy-max", type=int, default=250)
    ap.add_argument("--path", action="store_true", help="benchmark the grid path instead of the single solvers")
    ap.add_argument("--set", default="ionosphere", help="--path: the data set (needs MKLBOOK_DATA for the UCI sets)")
    ap.add_argument("--sample", type=int, default=6, help="--path: grid points fitted one by one")
    args = ap.parse_args()
    paths(args) if args.path else solvers(args)


if __name__ == "__main__":
    main()
