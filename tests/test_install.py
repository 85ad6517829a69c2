"""The library as users install it: `pip install .` brings only `requirements` from settings.ini, so every module of
mklbook must import with those alone. Two checks: the imports parsed from the source (each third-party package the
library imports is a runtime requirement, or its import is guarded and optional), and every module imported in a
fresh interpreter where any package outside the runtime requirements' dependency closure is unimportable. `.ci/run`
does the same in a real clean virtual environment before it installs the development extra."""
import ast
import configparser
import importlib.metadata as md
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "mklbook"


def _settings():
    cfg = configparser.ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini", encoding="utf-8")
    return cfg["DEFAULT"]


def _names(key):
    return {Requirement(r).name.lower().replace("_", "-") for r in _settings().get(key, "").split()}


def _closure(names):
    "The distributions `names` need, transitively (extras not taken, environment markers evaluated without extras)."
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            reqs = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        for r in map(Requirement, reqs):
            if r.marker is None or r.marker.evaluate({"extra": ""}):
                todo.append(r.name.lower().replace("_", "-"))
    return seen


def _top_level_of(dists):
    "Import names (top-level packages) provided by the distributions `dists`."
    out = set()
    for mod, ds in md.packages_distributions().items():
        if any(d.lower().replace("_", "-") in dists for d in ds):
            out.add(mod)
    return out


def _imports(tree):
    """Yield (top-level name, guarded, at_import_time) for every absolute import in a module: `guarded` when a
    try/except catching ImportError encloses it, `at_import_time` unless it sits in a function body."""
    def walk(node, guarded, in_func):
        for child in ast.iter_child_nodes(node):
            g, f = guarded, in_func
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                f = True
            if isinstance(child, ast.Try):
                catches = {ast.unparse(h.type) for h in child.handlers if h.type is not None}
                if any(re.search(r"\b(ImportError|ModuleNotFoundError|Exception)\b", c) for c in catches):
                    for stmt in child.body:                 # only the try body is guarded, not the handlers
                        yield from walk(ast.Module(body=[stmt], type_ignores=[]), True, f)
                    for part in child.handlers + child.orelse + child.finalbody:
                        yield from walk(part, g, f)
                    continue
            if isinstance(child, ast.Import):
                for a in child.names:
                    yield a.name.split(".")[0], g, not f
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                yield child.module.split(".")[0], g, not f
            yield from walk(child, g, f)
    yield from walk(tree, False, False)


def _modules():
    return sorted(p for p in PKG.glob("*.py") if p.name != "_modidx.py")


def test_runtime_requirements_cover_every_import():
    runtime = _names("requirements")
    provided = _top_level_of(_closure(runtime)) | {"mklbook"}
    direct = _top_level_of(runtime) | {"mklbook"}
    std = set(sys.stdlib_module_names)
    unlisted, unguarded = [], []
    for path in _modules():
        for name, guarded, at_import in _imports(ast.parse(path.read_text())):
            if name in std:
                continue
            if name not in direct and not guarded and name in provided:
                unlisted.append(f"{path.name}: {name} (installed only as another package's dependency)")
            elif name not in provided and not guarded:
                unguarded.append(f"{path.name}: {name}" + (" at import time" if at_import else ""))
    assert not unlisted, ("list these in settings.ini `requirements` (the library imports them directly): "
                          + "; ".join(unlisted))
    assert not unguarded, ("imports of packages outside the runtime requirements must be optional, inside "
                           "try/except ImportError with a message naming the extra: " + "; ".join(unguarded))


def test_no_module_imports_a_development_package_at_import_time():
    dev_only = _names("dev_requirements") - _names("requirements")
    dev_names = _top_level_of(dev_only) | {"nbdev", "execnb", "ghapi", "pytest", "hypothesis", "IPython",
                                          "ipywidgets", "dask", "distributed", "jupyterlab"}
    found = [f"{p.name}: {name}" for p in _modules() for name, guarded, at_import in _imports(ast.parse(p.read_text()))
             if name in dev_names and at_import and not guarded]
    assert not found, f"development-only packages imported when the library is imported: {found}"


def test_every_module_imports_with_the_runtime_requirements_alone():
    """A fresh interpreter in which every package outside the runtime closure (nbdev, IPython, dask, pytest, ...)
    raises ModuleNotFoundError imports each module of mklbook."""
    provided = sorted(_top_level_of(_closure(_names("requirements"))) | {"mklbook"})
    mods = [f"mklbook.{p.stem}" for p in _modules() if p.stem != "__init__"]
    code = textwrap.dedent(f"""
        import importlib, importlib.abc, sys
        allowed = set({provided!r}) | set(sys.stdlib_module_names)
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                top = name.split(".")[0]
                if top not in allowed and not top.startswith("_"):
                    raise ModuleNotFoundError(f"No module named {{name!r}} (blocked: not a runtime requirement)")
        sys.meta_path.insert(0, Block())
        failed = []
        for m in {mods!r}:
            try:
                importlib.import_module(m)
            except Exception as e:
                failed.append(f"{{m}}: {{type(e).__name__}}: {{e}}")
        print("\\n".join(failed))
        sys.exit(1 if failed else 0)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, f"modules that need a non-runtime package to import:\n{r.stdout}{r.stderr[-2000:]}"


def test_the_book_renderer_is_built_on_first_access():
    pytest.importorskip("nbdev")
    import mklbook.protocol as protocol
    cls = protocol.BookDocRenderer
    assert cls.__module__ == "mklbook.protocol" and cls.__name__ == "BookDocRenderer"
    assert protocol.BookDocRenderer is cls                   # built once
    with pytest.raises(AttributeError, match="no attribute"):
        protocol.not_a_name
