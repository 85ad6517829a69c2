"""Collapse the library's code in the chapters: every `#| export` / `#| exporti` / `#| hide` cell, and every
`#| code-fold: true` cell (code that draws a figure or defines a reference implementation for a check: the rendered
docs fold it under a "Code" toggle) and `#| echo: false` cell, gets
`metadata.jupyter.source_hidden = true`, so JupyterLab opens a chapter on its argument, figures and checks with the
exported code one click away (settings.ini's `allowed_cell_metadata_keys = jupyter` keeps it through `nbdev_clean`).
Every `show_doc(...)` cell gets `metadata.jupyter.outputs_hidden = true`: JupyterLab shows the call and folds its API card
(one click opens it); the rendered documentation shows the cards in full.

Usage: `python tools/collapse_code.py [NB ...]` (default: every notebook in nbs/); prints how many cells it changed."""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY_CELL = re.compile(r"#\|\s*(export|exporti|hide|echo:\s*false|code-fold:\s*true)\b")


def is_library_cell(cell) -> bool:
    "A code cell whose first line is an nbdev `export`, `exporti` or `hide` directive, `echo: false` or `code-fold: true` (code that draws a figure or defines a reference implementation)."
    src = "".join(cell.get("source", [])).lstrip()
    return cell.get("cell_type") == "code" and bool(LIBRARY_CELL.match(src.split("\n", 1)[0].strip()))


def is_api_card(cell) -> bool:
    "A code cell that only calls `show_doc` (its output is the API card of one definition)."
    src = "".join(cell.get("source", [])).strip()
    return cell.get("cell_type") == "code" and src.startswith("show_doc(") and "\n" not in src


def collapse(path: Path) -> int:
    nb = json.loads(path.read_text())
    changed = 0
    for cell in nb["cells"]:
        key = "source_hidden" if is_library_cell(cell) else "outputs_hidden" if is_api_card(cell) else None
        if key and not cell.get("metadata", {}).get("jupyter", {}).get(key):
            cell.setdefault("metadata", {}).setdefault("jupyter", {})[key] = True
            changed += 1
    if changed:
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return changed


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted((ROOT / "nbs").glob("*.ipynb"))
    print(sum(collapse(p) for p in paths), "cells collapsed")
