#!/usr/bin/env python
"""Execute the book's notebooks as a reader sees them and store their outputs.

    python tools/execute_book.py [NOTEBOOK ...]     # default: every nbs/*.ipynb

Each notebook runs in a fresh Jupyter kernel (`python3`) from `nbs/`, with matplotlib's inline backend (MPLBACKEND is
removed from the environment), full-size experiments (IN_TEST unset), progress bars off (MKLBOOK_PROGRESS=0: a widget
saved in a notebook shows as text noise) and the benchmark data from MKLBOOK_DATA (default: ../shared/datasets).
Cells flagged `#| slow` or `#| eval: false` are not run (they regenerate committed results). Run `nbdev_clean`
afterwards; `tests/test_book.py` then checks the outputs (figures present, tables rendered, no machine paths).
"""
import os, sys, time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
SKIP = ("#| slow", "#| eval: false", "#|eval: false")
TAG = "skip-execution"


def execute(path: Path, timeout: int = 7200) -> float:
    nb = nbformat.read(path, as_version=4)
    skipped = []
    for c in nb.cells:
        if c.cell_type == "code" and any(c.source.lstrip().startswith(s) or f"\n{s}" in c.source for s in SKIP):
            c.metadata.setdefault("tags", []).append(TAG)
            skipped.append(c)
    env = dict(os.environ, MKLBOOK_PROGRESS="0")
    env.pop("MPLBACKEND", None)
    env.pop("IN_TEST", None)
    env.setdefault("MKLBOOK_DATA", str((ROOT / ".." / "shared" / "datasets").resolve()))
    t0 = time.time()
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", skip_cells_with_tag=TAG,
                            resources={"metadata": {"path": str(path.parent)}})
    old = dict(os.environ)
    os.environ.clear(); os.environ.update(env)          # the kernel inherits this process's environment
    try:
        client.execute()
    finally:
        os.environ.clear(); os.environ.update(old)
    for c in skipped:
        c.metadata["tags"].remove(TAG)
        if not c.metadata["tags"]:
            del c.metadata["tags"]
    nbformat.write(nb, path)
    return time.time() - t0


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted((ROOT / "nbs").glob("*.ipynb"))
    for p in paths:
        print(f"{p.name} ...", end=" ", flush=True)
        print(f"{execute(p.resolve()):.0f} s", flush=True)
