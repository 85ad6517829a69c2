"""The book's structure: _quarto.yml lists every notebook in reading order, the README carries CI's command."""
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _quarto_chapters():
    text = (ROOT / "_quarto.yml").read_text()
    return re.findall(r"^\s*-\s+(nbs/\S+\.ipynb)\s*$", text, flags=re.M)


def test_every_listed_chapter_exists():
    chapters = _quarto_chapters()
    assert chapters, "_quarto.yml lists no chapter"
    missing = [c for c in chapters if not (ROOT / c).exists()]
    assert not missing, f"_quarto.yml lists chapters that do not exist: {missing}"


def test_every_notebook_is_listed_once_in_reading_order():
    chapters = _quarto_chapters()
    notebooks = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "nbs").glob("*.ipynb"))
    assert sorted(chapters) == notebooks, f"not listed: {set(notebooks) - set(chapters)}"
    assert len(chapters) == len(set(chapters)), "a chapter is listed twice"
    numbered = [c for c in chapters if re.match(r"nbs/\d\d_", c)]
    assert numbered == sorted(numbered), "chapters must be listed in notebook-number (reading) order"
    assert chapters[0] == "nbs/index.ipynb"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- test-command -->\s*```bash\s*\n(.+)\n```", readme)
    assert m, "README.md must give the test command right after <!-- test-command -->"
    cmd = m.group(1).strip()
    assert "nbdev_test" in cmd and "pytest" in cmd
    out = subprocess.run(["awk", '/<!-- test-command -->/{found=1; next} found && /^[^`]/{print; exit}',
                          str(ROOT / "README.md")], capture_output=True, text=True, check=True).stdout.strip()
    assert out == cmd, "the command .ci/run extracts differs from the README's"
    assert "test-command" in (ROOT / ".ci" / "run").read_text()


def test_each_notebook_exports_one_module():
    import json
    seen = {}
    for nb in sorted((ROOT / "nbs").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        exps = [ln.split()[-1] for c in cells if c["cell_type"] == "code"
                for ln in "".join(c["source"]).splitlines() if ln.startswith("#| default_exp")]
        assert len(exps) <= 1, f"{nb.name} declares several modules: {exps}"
        if exps:
            assert exps[0] not in seen, f"{nb.name} and {seen.get(exps[0])} export the same module"
            seen[exps[0]] = nb.name
            assert (ROOT / "mklbook" / f"{exps[0]}.py").exists(), f"mklbook/{exps[0]}.py missing: run nbdev_export"


def _markdown(nb_path):
    return "\n".join(_cells(nb_path))


def _bib_keys():
    return set(re.findall(r"^@\w+\{([^,\s]+),", (ROOT / "references.bib").read_text(), flags=re.M))


def _cells(nb_path, kind="markdown"):
    import json
    return ["".join(c["source"]) for c in json.loads(Path(nb_path).read_text())["cells"] if c["cell_type"] == kind]


def _generated_markdown(nb_path):
    "The Markdown that code cells display (generated prose, e.g. a discussion written from the committed results)."
    import json
    out = []
    for c in json.loads(Path(nb_path).read_text())["cells"]:
        for o in c.get("outputs", []) if c["cell_type"] == "code" else []:
            md = o.get("data", {}).get("text/markdown")
            if md:
                out.append("".join(md))
    return out


def test_every_chapter_cites_the_bibliography_and_every_citation_resolves():
    "Author-year links `[Cortes et al., 2012](#ref-key)` to a References section that holds an anchor for each key."
    keys = _bib_keys()
    assert {"cortes2012alignment", "cortes2015vkr", "liu2017ifkl", "cortes2013m3k", "zhou2016vcmkl"} <= keys
    used = set()
    for nb in _quarto_chapters():
        cells = _cells(ROOT / nb)
        refs = [c for c in cells if c.startswith("## References")]
        text = "\n".join([c for c in cells if not c.startswith("## References")] + _generated_markdown(ROOT / nb))
        cited = set(re.findall(r"\]\(#ref-([\w:-]+)\)", text))
        assert cited, f"{nb} cites nothing from references.bib (use [Author, year](#ref-key))"
        assert not cited - keys, f"{nb} cites keys missing from references.bib: {sorted(cited - keys)}"
        assert len(refs) == 1, f"{nb} needs one '## References' section (it has {len(refs)})"
        anchors = set(re.findall(r'<a id="ref-([\w:-]+)"></a>', refs[0]))
        assert anchors == cited, f"{nb}: References section {sorted(anchors)} != cited {sorted(cited)}"
        used |= cited
    assert not keys - used, f"references.bib has entries no chapter cites: {sorted(keys - used)}"


def test_no_quarto_only_markup_is_left_where_jupyterlab_shows_it_raw():
    "Callout fences and @citations render only in Quarto; in JupyterLab and on GitHub they show as raw text."
    for nb in _quarto_chapters():
        for cell in _cells(ROOT / nb):
            for line in cell.splitlines():
                assert not re.match(r"^\s*(>\s*)?:::", line), f"{nb}: Quarto fence left raw: {line[:80]}"
                raw = re.search(r"(?<![\w.`/\[(#-])@[A-Za-z][\w-]*\d{4}", line)
                assert not raw, f"{nb}: raw citation {raw.group(0)} (use [Author, year](#ref-key))"


def test_every_chapter_ends_with_a_summary_and_exercises():
    for nb in _quarto_chapters():
        if nb == "nbs/index.ipynb":
            continue
        heads = re.findall(r"^##\s+(.+?)\s*$", _markdown(ROOT / nb), flags=re.M)
        assert "Summary" in heads and "Exercises" in heads, f"{nb} lacks a '## Summary' or '## Exercises' section"
        assert heads.index("Summary") < heads.index("Exercises"), f"{nb}: the summary comes before the exercises"


def _module_of(nb_path):
    cells = _cells(nb_path, "code")
    exp = [ln.split()[-1] for c in cells for ln in c.splitlines() if ln.startswith("#| default_exp")]
    return exp[0] if exp else None


def test_no_exported_cell_is_over_60_lines():
    "Cells a reader can follow: one public definition per exported cell, long classes spread with @patch."
    long = [(nb, len(c.splitlines())) for nb in _quarto_chapters() for c in _cells(ROOT / nb, "code")
            if c.startswith("#| export") and len(c.splitlines()) > 60]
    assert not long, f"exported cells over 60 lines: {long}"


def test_every_public_function_and_class_has_a_show_doc_in_its_chapter():
    "nbdev's API reference in place: `show_doc(name)` after each public definition of the module's __all__."
    import importlib
    import inspect
    missing = {}
    for nb in _quarto_chapters():
        mod = _module_of(ROOT / nb)
        if mod is None:
            continue
        module = importlib.import_module(f"mklbook.{mod}")
        documented = set(re.findall(r"show_doc\(([\w.]+)", "\n".join(_cells(ROOT / nb, "code"))))
        public = [n for n in module.__all__ if inspect.isfunction(getattr(module, n)) or
                  inspect.isclass(getattr(module, n))]
        gaps = [n for n in public if n not in documented]
        if gaps:
            missing[nb] = gaps
    assert not missing, f"public names without show_doc: {missing}"


# ---- the committed outputs: what a reader sees in JupyterLab, on GitHub and in nbconvert's HTML ----------------------

import json as _json

DRAWS = re.compile(r"plt\.(subplots|figure|show|plot)\(|\.(plot|semilogy|loglog|bar|scatter|stackplot|contourf)\(|"
                   r"\bfigure2\(|\bcd_diagram\(|display\(Image\(")


def _code_cells(nb_path):
    for i, c in enumerate(_json.loads(nb_path.read_text())["cells"]):
        if c["cell_type"] == "code":
            yield i, "".join(c["source"]), c.get("outputs", [])


def _skipped(src):
    return src.lstrip().startswith(("#| export", "#| slow", "#| eval: false", "#|eval: false"))


def _texts(outputs):
    for o in outputs:
        if o.get("output_type") == "stream":
            yield "".join(o.get("text", ""))
        for mime in ("text/plain", "text/markdown", "text/html"):
            v = o.get("data", {}).get(mime)
            if v is not None:
                yield "".join(v)
        if o.get("output_type") == "error":
            yield "\n".join(o.get("traceback", []))


NOTEBOOKS = sorted((ROOT / "nbs").glob("*.ipynb"))


def _only_defines(src) -> bool:
    "A cell whose top level only imports and defines functions or classes: running it draws nothing."
    import ast
    try:
        body = ast.parse("\n".join(l for l in src.splitlines() if not l.startswith("#|"))).body
    except SyntaxError:
        return False
    return bool(body) and all(isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)) for n in body)


def test_every_drawing_cell_is_committed_with_its_image():
    missing = [f"{nb.name} cell {i}" for nb in NOTEBOOKS for i, src, outs in _code_cells(nb)
               if not _skipped(src) and DRAWS.search(src) and not _only_defines(src)
               and not any("image/png" in o.get("data", {}) for o in outs)]
    assert not missing, ("cells that draw but have no committed image (execute with `python tools/execute_book.py "
                         f"NB`, inline backend): {missing}")


def test_no_output_prints_a_raw_markdown_table():
    raw = [f"{nb.name} cell {i}" for nb in NOTEBOOKS for i, src, outs in _code_cells(nb)
           for o in outs if o.get("output_type") == "stream"
           and re.search(r"^\|.*\|\s*\n\|\s*:?-{3,}", "".join(o.get("text", "")), flags=re.M)]
    assert not raw, f"pipe tables printed as text (display them with IPython.display.Markdown): {raw}"


def test_no_output_shows_a_machine_path_or_an_error():
    bad = []
    for nb in NOTEBOOKS:
        for i, src, outs in _code_cells(nb):
            for t in _texts(outs):
                if re.search(r"(/work/|/root/|/home/|/tmp/|site-packages|\.pyenv)", t):
                    bad.append(f"{nb.name} cell {i}: path")
                if "Traceback" in t or "IProgress not found" in t:
                    bad.append(f"{nb.name} cell {i}: traceback or widget warning")
            if any(o.get("output_type") == "error" for o in outs):
                bad.append(f"{nb.name} cell {i}: error output")
    assert not bad, f"outputs a reader should not see: {bad}"


def test_every_chapter_is_executed():
    for nb in NOTEBOOKS:
        cells = [(src, outs) for _, src, outs in _code_cells(nb) if not _skipped(src) and "#| hide" not in src[:8]]
        shown = [outs for src, outs in cells if src.startswith("show_doc(")]
        assert all(shown), f"{nb.name}: show_doc cells without output: execute the chapter (tools/execute_book.py)"


def test_each_chapter_renders_to_html_with_its_figures_embedded():
    import nbformat
    from nbconvert import HTMLExporter
    exporter = HTMLExporter(template_name="classic")
    exporter.exclude_input = True        # what is asserted lives in outputs and Markdown; highlighting the code is 8x the cost
    for nb in NOTEBOOKS:
        node = nbformat.read(nb, as_version=4)
        n_png = sum("image/png" in o.get("data", {}) for c in node.cells if c.cell_type == "code" for o in c.outputs)
        html, _ = exporter.from_notebook_node(node)
        assert html.count("data:image/png;base64,") >= n_png, f"{nb.name}: figures not embedded in the HTML"
        assert "{.callout" not in html, f"{nb.name}: a Quarto callout left raw"


def test_each_show_doc_has_its_own_cell():
    # only a cell's last expression is displayed: a second show_doc in the same cell would never be seen
    crowded = [f"{nb.name} cell {i}" for nb in NOTEBOOKS for i, src, _ in _code_cells(nb)
               if sum(ln.startswith("show_doc(") for ln in src.splitlines()) > 1]
    assert not crowded, f"cells with several show_doc calls (one per cell): {crowded}"


def test_api_reference_outputs_carry_no_quarto_only_attributes():
    # nbdev's default renderer writes [source](url){target="_blank" ...}: raw text in JupyterLab and on GitHub
    raw = [f"{nb.name} cell {i}" for nb in NOTEBOOKS for i, src, outs in _code_cells(nb) for o in outs
           if '{target="_blank"' in "".join(o.get("data", {}).get("text/markdown", ""))]
    assert not raw, f"show_doc outputs with Quarto-only link attributes (renderer in settings.ini?): {raw}"


def test_ci_runs_the_readme_main_command_in_a_clean_environment():
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- main-command -->\s*```bash\s*\n(.+)\n```", readme)
    assert m, "README.md must give the main command right after <!-- main-command -->"
    cmd = m.group(1).strip()
    assert cmd.startswith("pip install") and "mklbook reproduce all --quick" in cmd
    out = subprocess.run(["awk", '/<!-- main-command -->/{found=1; next} found && /^[^`]/{print; exit}',
                          str(ROOT / "README.md")], capture_output=True, text=True, check=True).stdout.strip()
    assert out == cmd, "the command .ci/run extracts differs from the README's"
    ci = (ROOT / ".ci" / "run").read_text()
    assert "main-command" in ci and "-m venv" in ci and "pip install -q ." in ci


def test_every_notebook_names_its_kernel():
    "JupyterLab opens a chapter without asking for a kernel: the notebook metadata names one (nbdev_clean keeps it)."
    for nb in NOTEBOOKS:
        spec = _json.loads(nb.read_text())["metadata"].get("kernelspec", {})
        assert spec.get("name") == "python3", f"{nb.name}: no kernelspec (add {{'name': 'python3', ...}} to its metadata)"


def test_no_latex_escape_is_left_in_the_prose_outside_math():
    r"BibTeX accents (`Alpayd\i n`, `Nystr\"om`) show raw in JupyterLab and on GitHub: the prose writes the letter itself."
    escape = re.compile(r"[A-Za-z]\\(?:[\"'`^~]|i\b|i(?=n))")
    assert escape.search('Nystr\\"om') and escape.search("Alpayd\\in") and not escape.search("Nyström, $\\alpha$")
    for nb in _quarto_chapters():
        for cell in _cells(ROOT / nb):
            text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`", " ", cell, flags=re.S)
            hit = escape.search(text)
            assert not hit, f"{nb}: raw LaTeX escape {text[max(0, hit.start() - 20):hit.end() + 5]!r}"


PAPERS = ROOT.parent / "shared" / "papers"
PROSE_NUMBER = re.compile(r"(?<![\w.$\\^_{])(\d+\.\d{2,})(?![\w.])")   # a measured value: two or more decimals


def test_every_number_in_the_prose_is_printed_by_its_chapter_or_quoted_from_a_paper():
    """Text that cannot drift from its outputs: a number with two or more decimals in a Markdown cell (outside math)
    must appear in an output of the same chapter, or in one of the papers (a quotation). Numbers a chapter computes
    belong in generated Markdown (`IPython.display.Markdown(f"...")`)."""
    if not PAPERS.is_dir():
        pytest.skip(f"the papers are not at {PAPERS}: quotations cannot be told from drift")
    quoted = " ".join(p.read_text(errors="ignore") for p in PAPERS.glob("*.txt"))
    drift = []
    for nb in NOTEBOOKS:
        cells = _json.loads(nb.read_text())["cells"]
        printed = " ".join(" ".join(_texts(c.get("outputs", []))) for c in cells)
        for i, c in enumerate(cells):
            if c["cell_type"] != "markdown":
                continue
            prose = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", "".join(c["source"]), flags=re.S)
            for n in PROSE_NUMBER.findall(prose):
                if not any(v and (v in printed or v in quoted) for v in {n, n.rstrip("0"), n.lstrip("0")}):
                    drift.append(f"{nb.name} cell {i}: {n}")
    assert not drift, f"numbers in the prose that no output of the chapter prints and no paper states: {drift}"


def test_every_chapter_but_the_index_and_the_cli_has_a_figure():
    bare = [nb.name for nb in NOTEBOOKS if nb.name not in ("index.ipynb", "90_cli.ipynb")
            and not any("image/png" in o.get("data", {}) for _, _, outs in _code_cells(nb) for o in outs)]
    assert not bare, f"chapters without a committed figure: {bare}"


def test_papers_are_named_by_author_and_year():
    "No reader knows the papers' file numbers: the text, the CLI and the README say 'Cortes et al. 2012', not 'paper 004'."
    text = lambda p: "\n".join(_cells(p, "markdown") + _cells(p, "code")) if p.suffix == ".ipynb" else p.read_text()
    where = [p.name for p in [*NOTEBOOKS, ROOT / "README.md", *sorted((ROOT / "mklbook").glob("*.py"))]
             if re.search(r"(?i)\bpapers? 00\d\b", text(p))]
    assert not where, f"papers named by their file number in: {where}"


def test_the_library_code_is_collapsed_so_the_chapter_opens_on_its_argument():
    """Exported and hidden cells carry `jupyter.source_hidden`, show_doc cells `jupyter.outputs_hidden` (both kept by
    nbdev_clean): JupyterLab shows the library's code as one line and each API card folded under its `show_doc` call."""
    import sys
    sys.path.insert(0, str(ROOT / "tools"))
    from collapse_code import is_library_cell, is_api_card
    flag = lambda c, key: c.get("metadata", {}).get("jupyter", {}).get(key)
    cells = [(nb, i, c) for nb in NOTEBOOKS for i, c in enumerate(_json.loads(nb.read_text())["cells"])]
    open_ = [f"{nb.name} cell {i}" for nb, i, c in cells if is_library_cell(c) and not flag(c, "source_hidden")]
    assert not open_, f"library cells shown open (run `python tools/collapse_code.py`, then nbdev_clean): {open_}"
    cards = [f"{nb.name} cell {i}" for nb, i, c in cells if is_api_card(c) and not flag(c, "outputs_hidden")]
    assert not cards, f"API cards shown open (run `python tools/collapse_code.py`, then nbdev_clean): {cards}"
    assert "jupyter" in (ROOT / "settings.ini").read_text().split("allowed_cell_metadata_keys", 1)[1].split("\n", 1)[0]


def test_the_interactive_explorations_each_have_a_static_figure():
    """At least three ipywidgets explorations; each is `#| eval: false` (the page must read without a kernel) and follows
    a cell whose committed figure shows the same exploration at a few settings."""
    found = []
    for nb in NOTEBOOKS:
        cells = list(_code_cells(nb))
        for j, (i, src, _) in enumerate(cells):
            if "from ipywidgets import" in src and "interact(" in src:
                assert src.lstrip().startswith("#| eval: false"), f"{nb.name} cell {i}: an interact cell must be eval: false"
                assert any("image/png" in o.get("data", {}) for _, _, outs in cells[max(0, j - 3):j] for o in outs), \
                    f"{nb.name} cell {i}: no static figure of the exploration just before it"
                found.append(f"{nb.name} cell {i}")
    assert len(found) >= 3, f"interactive explorations: {found}"


# The retired uses of the index's reserved symbols: (pattern, what the symbol would then mean, the book's symbol for it).
# The patterns read LaTeX as stored in Markdown cells and in docstrings (single backslashes).
RETIRED_USES = {
    r"\gamma": [
        (r"\\(?:bar|tilde)\s*\{?\\gamma|\\hat\\gamma_\{?K|\\gamma_\{?(?:K|\\max)|\\gamma_0\s*=\s*\\max|\\boldsymbol\\gamma",
         "a (kernel) margin", r"\zeta"),
        (r"\\gamma''|\\gamma'\s*=\s*10|\\gamma,\\gamma'", "a weight of the single-stage problem (9)", r"\eta, \eta', \eta''"),
        (r"\\frac\{?\\gamma\}?\s*\{?l\}?|\(1-\\gamma\)|\\frac\{1-\\gamma\}", "VCMKL's weight of the positive losses", r"\omega"),
        (r"2\^\{\\gamma_[01]\}", "an exponent of a grid of Gaussian parameters", "j_0, j_1"),
        (r"\(\\gamma\\?,?\s*x\s*\\cdot", "the scale of a polynomial kernel", "a (the argument keeps scikit-learn's name gamma)"),
        (r"(?i)width (?:parameter )?\$\\gamma|\\gamma\$?,? (?:the|a|its)? ?width\b|of width parameter|\bwidths? \$\\gamma",
         "a width (the Gaussian parameter is an inverse squared width)", "narrow (large gamma) / wide (small gamma)"),
        (r"(?:exp\(-|e\^\{-)\\tau|Gaussian[^.$]{0,40}\$\\tau|\\tau\\in\[2\^|\\log_2\\tau", "the Gaussian parameter", r"\gamma"),
    ],
    r"\rho": [(r"R_\{?(?:S,)?\\rho|\\rho_h|\\Psi_\\rho|\\frac\d\\rho|\\frac\{\d\}\{\\rho|\{m\\rho\}|\\rho>0|\\rho_m\b|"
               r"[^a-zA-Z]d\\rho\(|\\rho\(\\mu|\$\\rho\$-margin", "a margin, a measure or a penalty", r"\theta (margin), \mu (measure)")],
    "p": [(r"\\rVert_p\b|\\rVert_\{p|_\{p\^\*\}|_\{p\*\}|\\\|_p\b|\bL_p\b ball|norm \$p\b", "a norm", "q")],
    r"\mu": [(r"\\lVert\\theta\\rVert|\\theta\\ge0,|\\mathbf d\\ge0|\\mathbf d\\in|\\sum_k d_k|d_k\\mathbf K_k|\\lVert\\mathbf d\\rVert|"
              r"weights \$\\mathbf d\$|weights \$\\theta", "kernel weights written theta or d", r"\mu")],
    r"\theta": [(r"K_\{?\\theta|\\theta\\in\\Omega|d\\mu\(\\theta\)", "the parameter of a kernel family", r"\psi")],
    "C": [(r"\bC\(y|\|C\(y|C_y\b", "the points of a class", "I_y")],
}


def _notation_table():
    cell = next(s for s in _cells(ROOT / "nbs" / "index.ipynb") if s.startswith("## Notation"))
    return [row.split("|")[1].strip() for row in cell.splitlines() if row.startswith("| $")]


def test_the_reserved_symbols_of_the_index_keep_one_meaning_in_every_chapter():
    """The index's notation table is the law: each symbol it lists means one object in every chapter (Markdown and the
    docstrings of the code). The known retired uses are searched for, and each symbol policed here must be in the table."""
    firsts = " ".join(_notation_table())
    for sym in RETIRED_USES:
        assert re.search(re.escape(f"${sym}") + r"(?![a-zA-Z])", firsts), f"{sym} is policed but not in the index's table"
    bad = []
    for nb in NOTEBOOKS:
        for i, c in enumerate(_json.loads(nb.read_text())["cells"]):
            if c["cell_type"] not in ("markdown", "code"):
                continue
            src = "".join(c["source"])
            if nb.name == "index.ipynb" and src.startswith("## Notation"):
                continue                                       # the law itself names the papers' letters
            for sym, rules in RETIRED_USES.items():
                for pat, what, use in rules:
                    for m in re.finditer(pat, src):
                        bad.append(f"{nb.name} cell {i}: {sym} as {what} (use {use}): "
                                   f"...{src[max(0, m.start() - 40):m.end() + 20]}...")
    assert not bad, f"{len(bad)} retired uses of reserved symbols:\n" + "\n".join(bad[:40])


def test_library_signatures_follow_the_notation():
    "The norm is q, the Gaussian range gamma_range, the kernel margin zeta0, the single-stage weights eta*, VCMKL's omega."
    import inspect
    from mklbook.classic_mkl import LpMKL, NLMKL, TwoLayerMKL, lp_mkl, IKL
    from mklbook.pep import IFKLClassifier
    from mklbook.m3k import M3KClassifier, theorem1_bound
    from mklbook.alignment import AlignmentKRR
    from mklbook.vcmkl import VCMKLClassifier
    params = lambda f: set(inspect.signature(f).parameters)
    for f in (LpMKL, NLMKL, TwoLayerMKL, lp_mkl):
        assert "q" in params(f) and "p" not in params(f), f
    for f in (IKL, IFKLClassifier):
        assert "gamma_range" in params(f) and "tau_range" not in params(f), f
    assert "zeta0" in params(M3KClassifier) and "theta" in params(theorem1_bound) and "rho" not in params(theorem1_bound)
    assert {"eta", "eta1", "eta2"} <= params(AlignmentKRR) and "gamma" not in params(AlignmentKRR)
    assert "omega" in params(VCMKLClassifier) and "gamma" not in params(VCMKLClassifier)
