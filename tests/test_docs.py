"""The project's own docs stay true: the pages they cite exist, and so does what they name.

- No file in the project cites the contract or rules by a path outside the project: the
  references live in ``docs/`` (``docs/API.md``, ``docs/RULES.md``).
- ``docs/API.md`` holds the observation layout generated from the code, and every
  ``docs/API.md, <section>`` citation in code, tests and docs names one of its sections.
- Every file path and test name that ``docs/ARCHITECTURE.md`` (and ``docs/API.md``)
  cites in backticks exists, so the map cannot go stale silently.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from twilight_env.obs.encoding import layout_table

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SKIP_DIRS = {".git", "build", "dist", "out", "runs", "__pycache__", ".pytest_cache", ".hypothesis", "node_modules"}
TEXT_SUFFIXES = {".py", ".md", ".txt", ".toml", ".cfg", ".ini", ".json", ".ipynb", ".c", ".h", ".yml", ".yaml",
                 ".sh", ".rst", ""}


def project_files(root: Path = ROOT):
    """Text files of the project (sources, docs, tests, notebooks, config, CI), outside
    build outputs and virtual environments: ``(relative path, path)`` pairs."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not d.startswith(".venv") and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if path.suffix in TEXT_SUFFIXES:
                yield path.relative_to(root), path


BANNED = ("INTERFACE" + ".md", ".." + "/shared")
"""Citations of files outside the project (written split so this file does not match itself)."""


def outside_citations(root: Path = ROOT) -> tuple[int, list[str]]:
    """Files scanned, and ``"path: citation"`` for each banned citation found."""
    seen, hits = 0, []
    for rel, path in project_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        seen += 1
        hits += [f"{rel}: {b}" for b in BANNED if b in text]
    return seen, hits


def test_no_file_cites_the_outside_interface_or_shared_folder():
    seen, hits = outside_citations()
    assert seen > 100  # the walk did reach the project
    assert not hits, "cite docs/API.md or docs/RULES.md instead: " + "; ".join(hits)


def test_the_citation_scan_finds_a_citation(tmp_path):
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "m.py").write_text('"""Encoding as in ' + BANNED[0] + '."""\n')
    (tmp_path / "notes.md").write_text("Sources in `" + BANNED[1] + "/seeds`.\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "copy.py").write_text(BANNED[0] + "\n")  # build outputs are not the project's text
    seen, hits = outside_citations(tmp_path)
    assert seen == 2 and sorted(hits) == [f"{Path('agents/m.py')}: {BANNED[0]}", f"notes.md: {BANNED[1]}"]


def test_api_page_holds_the_observation_layout():
    assert layout_table() in (DOCS / "API.md").read_text(encoding="utf-8")


def _sections(page: Path) -> set[str]:
    return {m.group(1).strip() for m in re.finditer(r"^#{2,3} (.+)$", page.read_text(encoding="utf-8"), re.M)}


def test_api_citations_name_sections_of_the_page():
    sections = _sections(DOCS / "API.md")
    cite = re.compile(r"docs/API\.md`*(?:,|:)\s*(?:sections?\s+)?([A-Z][a-z]+(?: [a-z]+)*)")
    found, bad = 0, []
    for rel, path in project_files():
        for m in cite.finditer(path.read_text(encoding="utf-8", errors="replace")):
            found += 1
            if m.group(1) not in sections:
                bad.append(f"{rel}: {m.group(1)!r}")
    assert found >= 10
    assert not bad, f"no such section in docs/API.md ({sorted(sections)}): {bad}"


_BACKTICKED = re.compile(r"`([^`\s]+)`")
_PATHLIKE = re.compile(r"^(?:twilight_env|agents|training|experiments|benchmarks|tests|docs|notebooks)/[\w./-]*$"
                       r"|^[\w-]+\.(?:py|md|toml|c)$")


def cited_names(page: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """Backticked paths (``dir/file.py``) and ``path::name`` citations of a page."""
    paths, names = [], []
    for token in _BACKTICKED.findall(page.read_text(encoding="utf-8")):
        token = token.split("#")[0]
        if "::" in token:
            path, _, name = token.partition("::")
            names.append((path, name))
        elif _PATHLIKE.match(token):
            paths.append(token)
    return paths, names


def _defines(path: Path, name: str) -> bool:
    text = path.read_text(encoding="utf-8")
    return bool(re.search(rf"^\s*(?:def|class) {re.escape(name)}\b|^{re.escape(name)}\s*[:=]", text, re.M))


@pytest.mark.parametrize("page", ["ARCHITECTURE.md", "API.md"])
def test_architecture_names_only_files_and_tests_that_exist(page):
    paths, names = cited_names(DOCS / page)
    if page == "ARCHITECTURE.md":
        assert len(paths) > 30 and len(names) > 25  # the parser does read the map
    missing = [p for p in paths if not (ROOT / p).exists() and not (DOCS / p).exists()]
    missing += [f"{p}::{n}" for p, n in names if not (ROOT / p).is_file() or not _defines(ROOT / p, n)]
    assert not missing, f"docs/{page} names what does not exist: {missing}"


def test_the_name_check_catches_a_stale_entry(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("`agents/heuristic.py::decide` `agents/heuristic.py::no_such_step` `agents/no_such.py` "
                    "`tests/agents/test_heuristic.py::test_decisions_equal_the_recorded_ones`\n")
    paths, names = cited_names(page)
    assert paths == ["agents/no_such.py"]
    assert [n for p, n in names if not _defines(ROOT / p, n)] == ["no_such_step"]
    assert not (ROOT / paths[0]).exists()


def test_readme_links_the_architecture_page():
    head = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## ")[0]
    assert "docs/ARCHITECTURE.md" in head and "docs/API.md" in head


_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
_HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)


def _prose_lines(text: str):
    """The lines of a Markdown text outside fenced code blocks: ``(line number, line)``."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: the rendered text (inline code, emphasis
    and link syntax dropped), lower-cased, every character other than a letter, digit,
    space, ``-`` or ``_`` removed, spaces turned into ``-`` (each space its own ``-``)."""
    import unicodedata

    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    kept = [c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM"]
    return "".join(kept).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a Markdown page has on GitHub: one per heading (a repeated heading's
    slug gets ``-1``, ``-2``, ...) and the ``id``/``name`` of its HTML ``<a>`` tags."""
    out, seen = set(), {}
    for _, line in _prose_lines(text):
        out.update(_HTML_ANCHOR.findall(line))
        m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = github_slug(m.group(1))
            k = seen.get(slug, 0)
            seen[slug] = k + 1
            out.add(slug if k == 0 else f"{slug}-{k}")
    return out


def broken_links(root: Path = ROOT) -> list[str]:
    """``"page:line: target (why)"`` for each link of a Markdown page of the project to a
    file of the project that does not exist, or to an anchor its page does not have."""
    bad, cache = [], {}
    for rel, path in project_files(root):
        if path.suffix != ".md":
            continue
        for n, line in _prose_lines(path.read_text(encoding="utf-8", errors="replace")):
            for target in _LINK.findall(line) + _REF_LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, mailto:, ...
                    continue
                file, _, anchor = target.partition("#")
                dest = (path.parent / file).resolve() if file else path
                if not dest.exists():
                    bad.append(f"{rel}:{n}: {target} (no such file)")
                elif anchor and dest.suffix == ".md":
                    if dest not in cache:
                        cache[dest] = anchors(dest.read_text(encoding="utf-8", errors="replace"))
                    if anchor not in cache[dest]:
                        bad.append(f"{rel}:{n}: {target} (no heading or anchor #{anchor} there)")
    return bad


def test_every_markdown_link_inside_the_project_resolves():
    """Each relative link of every Markdown page names a file that exists and, with
    ``#anchor``, a heading of that page as GitHub slugs it."""
    assert broken_links() == []


def test_the_link_check_slugs_as_github_does_and_finds_a_broken_anchor(tmp_path):
    assert github_slug("Expert iteration (`python -m twilight_env.training.exit`)") == \
        "expert-iteration-python--m-twilight_envtrainingexit"
    assert github_slug("The fair handicap: what makes the 3-player game even") == \
        "the-fair-handicap-what-makes-the-3-player-game-even"
    assert github_slug("Moon − Sun, [the table](x.md)") == "moon--sun-the-table"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n<a id=\"here\"></a>\n") == {"a", "a-1", "here"}
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "B.md").write_text("# Speed\n")
    (tmp_path / "docs" / "A.md").write_text("[ok](B.md#speed) [gone](B.md#speeds) [none](C.md)\n"
                                           "```\n[in code](B.md#x)\n```\n[web](https://example.org/#x)\n")
    assert broken_links(tmp_path) == ["docs/A.md:1: B.md#speeds (no heading or anchor #speeds there)",
                                      "docs/A.md:1: C.md (no such file)"]


def deprecated_specs(text: str) -> list[tuple[int, str]]:
    """``(line number, spec)`` of every backticked agent spec in ``text`` that names a
    deprecated agent (one declared with ``replaced_by``, docs/API.md "Network agents: names
    and families") on a line that does not say it is deprecated."""
    from twilight_env.agents.base import declarations

    names = [n for n, d in declarations().items() if d.replaced_by]
    spec = re.compile(r"`(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")(:[^`]*)?`")
    return [(i, m.group(0)) for i, line in enumerate(text.splitlines(), 1) if "deprecated" not in line
            for m in spec.finditer(line)]


def test_the_readme_recommends_no_deprecated_agent_name():
    """The README names the current agents (``policy:default``, ``guided:default``); the
    deprecated ``exit`` and ``exit-search`` appear only where it says they are deprecated."""
    assert deprecated_specs((ROOT / "README.md").read_text(encoding="utf-8")) == []
    assert deprecated_specs("The shipped weights (`neural:default`, `exit:default`) load by name.\n"
                            "| `exit`, `exit-search` | deprecated names |\n") == [(1, "`exit:default`")]


def _cell_count(row: str) -> int:
    """Cells of a Markdown table row as GitHub splits it: on every ``|`` not escaped as
    ``\\|`` (inside code spans too), the row's leading and trailing pipe dropped."""
    s = row.strip()
    s = s[1:] if s.startswith("|") else s
    s = s[:-1] if s.endswith("|") and not s.endswith("\\|") else s
    return len(re.split(r"(?<!\\)\|", s))


def ragged_table_rows(root: Path = ROOT) -> list[str]:
    """``"page:line: N cells, header M"`` for each row of a Markdown table whose cell
    count differs from its header's: GitHub drops a row's extra cells unseen (text after a
    stray ``|``) and leaves missing ones blank."""
    bad = []
    for rel, path in project_files(root):
        if path.suffix != ".md":
            continue
        lines = list(_prose_lines(path.read_text(encoding="utf-8", errors="replace")))
        header = None
        for k, (n, line) in enumerate(lines):
            if not line.lstrip().startswith("|") or (k and lines[k - 1][0] != n - 1):
                header = None
            nxt = lines[k + 1] if k + 1 < len(lines) else (0, "")
            if header is None and line.lstrip().startswith("|") and nxt[0] == n + 1 \
                    and re.match(r"^\s*\|?\s*:?-{3,}", nxt[1]):
                header = _cell_count(line)
            elif header is not None and not re.match(r"^\s*\|?\s*:?-{3,}", line) \
                    and _cell_count(line) != header:
                bad.append(f"{rel}:{n}: {_cell_count(line)} cells, header {header}")
    return bad


def test_every_markdown_table_row_has_its_headers_cells():
    """No table row of the project's pages hides text in a cell beyond its header's
    (docs/API.md's agent-spec table once put three agents' ``temperature`` option there)."""
    assert ragged_table_rows() == []


def test_the_table_check_finds_a_stray_pipe(tmp_path):
    (tmp_path / "A.md").write_text("| a | b |\n|---|---|\n| 1 | 2 |\n| 1 | 2 |; 3\n| `x \\| y` | 2 |\n\n"
                                   "| c |\n|---|\n| 1 |\n```\n| in | code | block |\n```\n")
    assert ragged_table_rows(tmp_path) == ["A.md:4: 3 cells, header 2"]


def unlisted_results(root: Path = ROOT) -> list[str]:
    """The folders and files at the top of ``results/`` that results/README.md does not
    name in backticks (``\\`NAME/...\\```, ``\\`NAME\\```): a reader of that index would not
    learn what they hold or which command made them."""
    folder = root / "results"
    text = (folder / "README.md").read_text(encoding="utf-8")
    return sorted(p.name for p in folder.iterdir() if p.name != "README.md" and not p.name.startswith(".")
                  and not re.search("`" + re.escape(p.name) + r"(/[^`]*)?`", text))


def test_results_readme_names_every_results_folder():
    assert unlisted_results() == []


def test_the_results_index_check_finds_an_unlisted_folder(tmp_path):
    (tmp_path / "results" / "a_run").mkdir(parents=True)
    (tmp_path / "results" / "b_run").mkdir()
    (tmp_path / "results" / "c.json").write_text("{}")
    (tmp_path / "results" / "README.md").write_text("| `a_run/x/` | ... |\n| `c.json` | ... |\nb_run without backticks\n")
    assert unlisted_results(tmp_path) == ["b_run"]


_MACHINE_PATH = re.compile(r"(?:^|[\s(`'\"=:])(/(?:work|tmp|home|root|Users)/[^\s`'\")]*)")


def machine_paths(root: Path = ROOT) -> list[str]:
    """``"page:line: path"`` for each absolute path of one machine (``/work/...``,
    ``/tmp/...``, a home folder) that a Markdown page of the project names: a reader's
    machine has none of them; a command's folders are written relative (``runs/...``)."""
    bad = []
    for rel, path in project_files(root):
        if path.suffix == ".md":
            for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                bad += [f"{rel}:{n}: {p}" for p in _MACHINE_PATH.findall(line)]
    return bad


def test_no_page_names_a_folder_of_one_machine():
    assert machine_paths() == []


def test_the_machine_path_check_finds_one(tmp_path):
    (tmp_path / "A.md").write_text("python -m x --out /work/runs/a\nnfsp:path=/tmp/b.npz and runs/c, http://h/work/d\n")
    assert machine_paths(tmp_path) == ["A.md:1: /work/runs/a", "A.md:2: /tmp/b.npz"]


README_MAX_LINES = 250
"""The README is a first screen and a map; details live in docs/."""


def test_the_readme_stays_within_its_length():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines, at most {README_MAX_LINES}"
