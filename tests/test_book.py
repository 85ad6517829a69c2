"""The book's structure: _quarto.yml lists every notebook in reading order, the README carries CI's command."""
import re
import subprocess
from pathlib import Path

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


def test_every_chapter_cites_the_bibliography_and_every_citation_resolves():
    "Author-year links `[Cortes et al., 2012](#ref-key)` to a References section that holds an anchor for each key."
    keys = _bib_keys()
    assert {"cortes2012alignment", "cortes2015vkr", "liu2017ifkl", "cortes2013m3k", "zhou2016vcmkl"} <= keys
    used = set()
    for nb in _quarto_chapters():
        cells = _cells(ROOT / nb)
        refs = [c for c in cells if c.startswith("## References")]
        text = "\n".join(c for c in cells if not c.startswith("## References"))
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
