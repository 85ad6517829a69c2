"""Benchmark: the four VCMKL solvers on the Table 1 setting (pima, M = 5 linear kernels, nu_m = 0.02,
gamma = |I-|/l) at the paper's training size (384, half of pima) and at twice and four times that size.

Sizes beyond pima's 768 points are drawn with replacement from the standardised data plus N(0, 0.05^2) jitter (so no
two points coincide). Every solver starts from the same balanced k-means assignment and stops by the paper's rule
|J_t+1 - J_t| <= 1e-4 |J_t| or max_iter = 100. Reported: OPT1 at the returned (w, b, rho) (the same function for all),
iterations, inner QP solves, PDDP's cache hits, wall time, and the ratios PDDP/best-local for objective gap and time,
all measured in this one process. PDDP+seeds is the multi-start PDDP (seeds=("sgd", "cccp"): its vertex phase also
starts from SGD's and CCCP's end points; their iterations, QPs and time are included in its row). The objective
column compares with the best of AM, CCCP and SGD. Writes benchmarks/results/vcmkl.md.

`--part estimator`: VCMKLClassifier with its defaults on the synthetic set of benchmarks/estimators.py
(`make_classification(m, 20, n_informative=8)`, up to 2000 held-out rows), each size in a fresh process: fit and
predict seconds, peak resident memory of the fit (recorded before anything else runs at full size), accuracy, the
number of inner QPs of the refit and its certificate; then, in the same process, the floor of estimators.py (the default
Gaussian stack built and one precomputed SVC on its sum; not run past m = 4000, where its seven m x m kernels alone
exceed 4 GiB) and SVC(). Run: `OMP_NUM_THREADS=1 python benchmarks/vcmkl.py --part estimator --sizes 1000 4000 10000`.
`--part clarabel`: Clarabel's LDL back end on the inner QPs. Every inner QP of one default `VCMKLClassifier().fit` on the
synthetic set (m = 1000 by default) is recorded, then solved again with the factorisation by QDLDL (single-threaded: what
`mklbook.solvers.clarabel_settings` sets) and by Clarabel 0.11's default ("auto", the multi-threaded faer), one after
the other in this process: total seconds, the ratio, and the largest difference of the solutions and objectives.
Run: `OMP_NUM_THREADS=2 python benchmarks/vcmkl.py --part clarabel`.
Each part rewrites only its own section of benchmarks/results/vcmkl.md.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402

from mklbook.data import load_dataset  # noqa: E402
from mklbook.protocol import markdown_table  # noqa: E402
from mklbook.vcmkl import kmeans_lambda, make_problem, solve_vcmkl  # noqa: E402


def data(n, seed=0):
    X, y = load_dataset("pima")
    X = (X - X.mean(0)) / X.std(0)
    y = np.where(y == 1, 1, -1)
    rng = np.random.default_rng(seed)
    if n <= len(y):
        idx = rng.permutation(len(y))[:n]
        return X[idx], y[idx]
    idx = rng.integers(0, len(y), n)
    return X[idx] + rng.normal(0, 0.05, (n, X.shape[1])), y[idx]


def estimator_row(m):
    "One row of the estimator part, in this (fresh) process."
    sys.path.insert(0, str(Path(__file__).parent))
    import estimators as bench
    from mklbook.vcmkl import VCMKLClassifier
    Xtr, ytr, Xte, yte = bench._load("classification", "synthetic", m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w = np.r_[np.flatnonzero(ytr == 0)[:40], np.flatnonzero(ytr == 1)[:40]]
        VCMKLClassifier().fit(Xtr[w], ytr[w]).predict(Xte[:10])           # imports and first calls, not timed
        t0 = time.perf_counter()
        clf = VCMKLClassifier().fit(Xtr, ytr)
        row = dict(m=m, fit_s=time.perf_counter() - t0)
        row["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        row["score"] = float(np.mean(clf.predict(Xte) == yte))
        row["predict_s"] = time.perf_counter() - t0
        row.update(n_qp=clf.result_.n_qp, gap=float(clf.result_.gap), status=clf.result_.status)
        if m <= 4000:
            t0 = time.perf_counter()
            bench._floor(Xtr, ytr, "gaussian", "classification")
            row["floor_s"] = time.perf_counter() - t0
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.svm import SVC
        ref = make_pipeline(StandardScaler(), SVC())
        t0 = time.perf_counter()
        ref.fit(Xtr, ytr)
        row["svc_s"] = time.perf_counter() - t0
        row["svc_score"] = float(np.mean(ref.predict(Xte) == yte))
    return row


def estimator_part(sizes):
    "Markdown section: the defaults at each size, each in a fresh process."
    rows = []
    for m in sizes:
        code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import vcmkl as b; "
                f"print('ROW ' + json.dumps(b.estimator_row({m})))")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
        line = next((x for x in r.stdout.splitlines() if x.startswith("ROW ")), None)
        if line is None:
            rows.append([str(m)] + ["–"] * 9 + [f"failed: {(r.stderr.strip().splitlines() or ['?'])[-1][:120]}"])
            continue
        d = json.loads(line[4:])
        print(d, flush=True)
        floor = f"{d['floor_s']:.2f}" if "floor_s" in d else "not run"
        ratio = f"{d['fit_s'] / d['floor_s']:.1f}" if "floor_s" in d else "–"
        rows.append([str(m), f"{d['fit_s']:.2f}", f"{d['predict_s']:.2f}", floor, ratio, f"{d['fit_s'] / d['svc_s']:.0f}",
                     f"{d['peak_mib']:.0f}", f"{d['score']:.3f}", f"{d['svc_score']:.3f}", str(d["n_qp"]),
                     f"{d['gap']:.1e} ({d['status']})"])
    table = markdown_table(["m", "fit s", "predict s", "floor s", "x floor", "x SVC()", "peak MiB (fit)", "score",
                            "SVC() score", "refit QPs", "refit gap (status)"], rows, "rrrrrrrrrrl")
    return ("## VCMKLClassifier with its defaults (synthetic, make_classification(m, 20, n_informative=8))\n\n"
            f"{os.cpu_count()} cores, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
            f"{time.strftime('%Y-%m-%d')}.\n\n" + table + "\n")


def clarabel_part(m):
    "Markdown section: every inner QP of one default fit, solved by QDLDL and by Clarabel's default back end."
    import clarabel
    from mklbook.solvers import clarabel_settings
    from mklbook.vcmkl import VCMKLClassifier
    sys.path.insert(0, str(Path(__file__).parent))
    import estimators as bench
    Xtr, ytr, _, _ = bench._load("classification", "synthetic", m)
    seen, Solver = [], clarabel.DefaultSolver

    class Recorder:                                    # records each problem, then solves it as asked
        def __init__(self, P, q, A, b, cones, settings):
            seen.append((P, q, A, b, [(type(c).__name__, c.dim) for c in cones], settings.tol_feas))
            self.solver = Solver(P, q, A, b, cones, settings)

        def solve(self):
            return self.solver.solve()
    clarabel.DefaultSolver = Recorder
    try:
        VCMKLClassifier().fit(Xtr, ytr)
    finally:
        clarabel.DefaultSolver = Solver
    rows, total, dx, dobj = {}, {"qdldl": 0.0, "auto": 0.0}, 0.0, 0.0
    for P, q, A, b, cones, tol in seen:
        out = {}
        for method in ("qdldl", "auto"):
            settings = clarabel_settings(tol, direct_solve_method=method, max_threads=1 if method == "qdldl" else 0)
            t0 = time.perf_counter()
            sol = Solver(P, q, A, b, [getattr(clarabel, name)(dim) for name, dim in cones], settings).solve()
            dt = time.perf_counter() - t0
            out[method] = sol
            total[method] += dt
            key = (A.shape[1], A.shape[0])
            rows.setdefault(key, {"qdldl": 0.0, "auto": 0.0, "n": 0})[method] += dt
        rows[key]["n"] += 1
        x1, x2 = np.array(out["qdldl"].x), np.array(out["auto"].x)
        dx = max(dx, float(np.abs(x1 - x2).max() / max(1.0, np.abs(x2).max())))
        dobj = max(dobj, abs(out["qdldl"].obj_val - out["auto"].obj_val) / max(1.0, abs(out["auto"].obj_val)))
    body = [[f"{n_var} x {n_con}", str(r["n"]), f"{r['qdldl']:.2f}", f"{r['auto']:.2f}", f"{r['auto'] / r['qdldl']:.1f}"]
            for (n_var, n_con), r in sorted(rows.items(), key=lambda kv: -kv[1]["auto"])[:8]]
    body.append(["all", str(len(seen)), f"{total['qdldl']:.2f}", f"{total['auto']:.2f}",
                 f"{total['auto'] / total['qdldl']:.1f}"])
    table = markdown_table(["QP (variables x constraints)", "solves", "QDLDL s", "default (faer) s", "ratio"], body, "lrrrr")
    return (f"## Clarabel's LDL back end on VCMKL's inner QPs (defaults, synthetic, m = {m})\n\n"
            f"Clarabel {clarabel.__version__}, {os.cpu_count()} cores, OMP_NUM_THREADS="
            f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, {time.strftime('%Y-%m-%d')}. The eight costliest problem shapes "
            f"and the total. Largest difference between the two back ends: solutions {dx:.1e} (relative to max |x|), "
            f"objectives {dobj:.1e} (relative).\n\n" + table + "\n")


def write_section(text):
    "Replace the section of results/vcmkl.md that starts with the same heading (append it if absent)."
    out = Path(__file__).parent / "results" / "vcmkl.md"
    sections, cur = [], []
    for line in (out.read_text() if out.exists() else "").splitlines(keepends=True):
        if line.startswith("## ") and cur:
            sections.append("".join(cur))
            cur = []
        cur.append(line)
    if cur:
        sections.append("".join(cur))
    kept = [p.rstrip("\n") + "\n" for p in sections if p.splitlines()[0] != text.splitlines()[0]]
    out.write_text("\n".join(kept + [text]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=["solvers", "estimator", "clarabel"], default="solvers")
    ap.add_argument("--sizes", type=int, nargs="+", default=None, help="solvers: 384 768 1536; estimator: 1000 4000 10000")
    ap.add_argument("--nu", type=float, nargs="+", default=[0.02, 0.06])
    ap.add_argument("--max-iter", type=int, default=100)
    args = ap.parse_args()
    if args.part == "clarabel":
        text = clarabel_part((args.sizes or [1000])[0])
        print(text)
        write_section(text)
        return
    if args.part == "estimator":
        text = estimator_part(args.sizes or [1000, 4000, 10000])
        print(text)
        write_section(text)
        return
    rows = []
    for nu in args.nu:
        for n in args.sizes or [384, 768, 1536]:
            X, y = data(n)
            Ks = np.stack([X @ X.T] * 5)
            prob = make_problem(Ks, y, nu)
            lam0 = kmeans_lambda(prob, X[prob.neg])
            res = {}
            for s in ("pddp", "pddp+seeds", "am", "cccp", "sgd"):
                t0 = time.perf_counter()
                r = solve_vcmkl(Ks, y, nu, solver=s.split("+")[0], lam0=lam0, max_iter=args.max_iter, warn=False,
                                seeds=("sgd", "cccp") if s == "pddp+seeds" else ())
                res[s] = (r, time.perf_counter() - t0)
                print(f"nu={nu} n={n} {s}: {r.objective:.6g} it={r.n_iter} qp={r.n_qp} hits={r.n_hits} "
                      f"{res[s][1]:.1f}s {r.status}", flush=True)
            best = min(res[s][0].objective for s in ("am", "cccp", "sgd"))
            for s, (r, t) in res.items():
                rows.append([str(nu), str(n), s.upper(), f"{r.objective:.6g}",
                             f"{(r.objective - best) / abs(best):+.2%}", str(r.n_iter), str(r.n_qp), str(r.n_hits),
                             f"{t:.1f}", f"{t / res['am'][1]:.2f}", str(int(r.idle.sum())), r.status])
    table = markdown_table(["nu", "l", "solver", "OPT1", "vs best of AM, CCCP, SGD (+ = worse)", "iterations", "QP calls", "cache hits",
                            "time s", "time / AM", "idle rules", "status"], rows, "lllrrrrrrrrl")
    text = "## VCMKL solvers on the Table 1 setting (pima, 5 linear kernels)\n\n" + __doc__.split("\n\n")[1] + \
        "\n\n" + table + "\n"
    print(text)
    write_section(text)


if __name__ == "__main__":
    main()
