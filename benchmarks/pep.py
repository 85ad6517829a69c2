"""Benchmark: FKL (Liu et al. 2017) against the L1-MKL baseline on the same data, and IFKL's outer iterations.

Data: the training half (random, seed 0) of each of `--sets` (default: sonar, ionosphere, liver-disorders), features in
[-1, 1], the paper's 41-kernel bank (Gaussian gamma = 2^-10..2^10, polynomial d = 1..20 on 1 + x'z/s), each kernel at
trace m. For lambda = 1, t = 4, C = 1:

* FKL by Algorithm 1 (reduced gradient + Armijo, `method="reduced-gradient"`) and by the SILP master (`method="silp"`),
  each to a relative certified gap of 1e-4 (max 300 iterations);
* L1-MKL (`mklbook.baselines.l1_mkl`, SILP, relative gap 1e-4) on the same stack: the same problem with lambda = 0;
* IFKL (Algorithms 2-3) from the raw training inputs, tol 1e-3.

Second table: the paper's model-selection grid (lambda in 2^-5..2^5, t in {2, 4, 8, 16}: 44 FKL problems) on the first
inner 3-fold split of the training half, solved (a) as in the first version of the reproduction, one `fkl(method="silp")`
per grid point warm-started in d along lambda (`pep_experiments.fkl_grid_cold`), and (b) by `fkl_path`, one pool of cuts
for the whole grid (`pep_experiments.fkl_grid`). Both certify every grid point to a relative gap of 1e-4; reported: SVM
solves, seconds, the time ratio, the largest relative objective difference, and whether inner CV selects the same (lambda, t).

Reported: iterations, SVM solves, seconds and the time ratio to L1-MKL measured in this process (one run each: the
solvers are deterministic; the machine is shared, so compare ratios, not seconds). Writes benchmarks/results/pep.md.
"""
import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _pep_data import training_half  # noqa: E402
from _timing import timed  # noqa: E402
from mklbook.baselines import l1_mkl  # noqa: E402
from mklbook.pep import empirical_pep, fkl, ifkl  # noqa: E402
from mklbook.pep_experiments import FullStack, fkl_grid, fkl_grid_cold, load_pep_set  # noqa: E402
from mklbook.protocol import RandomSplits, markdown_table  # noqa: E402


GRID_HEAD = ["set", "m (training half)", "SVM solves (independent)", "SVM solves (path)", "seconds (independent)",
             "seconds (path)", "speed-up", "max rel. objective difference", "max certified gap",
             "CV choice (lambda, t): independent / path"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="sonar,ionosphere,liver-disorders")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "pep.md"))
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    for name in args.sets.split(","):
        Xtr, ytr, Ktr = training_half(name)
        m = len(ytr)
        pep, t_pep = timed(lambda: empirical_pep(Ktr, 4))
        l1, t_l1 = timed(lambda: l1_mkl(Ktr, ytr, C=1.0, tol=1e-4))
        rg, t_rg = timed(lambda: fkl(Ktr, ytr, lam=1.0, t=4, pep=pep, method="reduced-gradient", max_iter=300))
        sl, t_sl = timed(lambda: fkl(Ktr, ytr, lam=1.0, t=4, pep=pep, method="silp", max_iter=300))
        ik, t_ik = timed(lambda: ifkl(Xtr, ytr, lam=1.0, t=4))
        assert abs(rg.objective - sl.objective) <= 1e-3 * abs(sl.objective) or rg.status != "optimal"
        for meth, r, tt, solves in (("L1-MKL (SILP, lambda=0)", l1, t_l1, l1.n_solves),
                                    ("FKL Algorithm 1 (reduced gradient)", rg, t_rg, rg.n_solves),
                                    ("FKL (SILP master)", sl, t_sl, sl.n_solves),
                                    ("IFKL (column generation)", ik, t_ik, None)):
            rows.append([name, m, meth, r.n_iter, "–" if solves is None else solves, r.status, f"{r.gap:.1e}",
                         f"{tt:.2f}", f"{tt / t_l1:.2f}"])
        rows.append([name, m, "PEP of 41 kernels (t = 4)", "–", "–", "–", "–", f"{t_pep:.2f}", f"{t_pep / t_l1:.2f}"])
        print(markdown_table(["set", "m", "method", "iterations", "SVM solves", "status", "gap", "seconds",
                              "time / L1-MKL"], rows[-5:]), flush=True)
    table = markdown_table(["set", "m", "method", "iterations (IFKL: outer)", "SVM solves", "status", "gap", "seconds",
                            "time / L1-MKL"], rows)
    grid_rows = []
    for name in args.sets.split(","):
        X, y = load_pep_set(name)
        proto = RandomSplits(n_splits=1, test_size=0.5, inner_cv=3, random_state=0)
        sp = proto.splits(X, y)[0]
        stack = FullStack(X)
        out = {}
        for label, grid in (("cold", fkl_grid_cold), ("path", fkl_grid)):
            cv, res, tt = {}, {}, 0.0
            for tr, va in proto.inner_folds(y[sp.train], seed=0):
                Ktr, Kva = stack.train_test(sp.train[tr], sp.train[va])
                g, dt = timed(lambda: grid(Ktr, y[sp.train[tr]], Kva))
                tt += dt
                for key, (f, r) in g.items():
                    cv.setdefault(key, []).append(np.mean(np.where(f > 0, 1, -1) == y[sp.train[va]]))
                    res.setdefault(key, []).append(r)
            best = max(cv, key=lambda k: (np.mean(cv[k]), -k[1], k[0]))
            out[label] = (tt, sum(r.n_solves for rs in res.values() for r in rs), res, best,
                          max(r.gap for rs in res.values() for r in rs))
        (tc, nc, rc, bc, gc), (tp, np_, rp, bp, gp) = out["cold"], out["path"]
        diff = max(abs(a.objective - b.objective) / max(1.0, abs(a.objective)) for k in rc for a, b in zip(rc[k], rp[k]))
        grid_rows.append([name, len(sp.train), nc, np_, f"{tc:.1f}", f"{tp:.1f}", f"{tc / tp:.2f}", f"{diff:.1e}",
                          f"{max(gc, gp):.1e}", f"{bc} / {bp}"])
        print(markdown_table(GRID_HEAD, grid_rows[-1:]), flush=True)
    text = ("# FKL and IFKL against L1-MKL (41-kernel bank, lambda = 1, t = 4, C = 1, training half of one split)\n\n"
            + table + "\n\n# FKL's 44-point (lambda, t) grid, 3 inner folds of the training half: independent solves vs fkl_path\n\n"
            + markdown_table(GRID_HEAD, grid_rows) + "\n")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
