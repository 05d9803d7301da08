"""The README and the guide in docs/ stay true: their Python examples run (doctests), the
commands they quote parse with the real ``euchre-overlay`` parser, the files, routes, ops and
links they name exist, and the README stays short and opens with the two commands CI runs.

Only ``overlay.cli`` is imported from the service; everything else of ``overlay/`` is read as
text, so this test does not care which module of ``overlay/`` holds a route.
"""

from __future__ import annotations

import argparse
import doctest
import glob
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from overlay.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
README_MAX_LINES = 250

FENCE = re.compile(r"^```(\w*)\s*\n(.*?)^```\s*$", re.M | re.S)
SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
#: a path inside the repository as the docs write it (top-level folders of the project)
REPO_PATH = re.compile(r"^(?:engine|renderer|overlay|studio|assets|scripts|tests|docs|\.ci)/[\w./*-]*$")


def rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


def text_of(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def blocks(page: Path, *langs: str) -> Iterator[str]:
    """The fenced code blocks of a page in these languages."""
    for m in FENCE.finditer(text_of(page)):
        if m.group(1) in langs:
            yield m.group(2)


def prose(page: Path) -> str:
    """The page without its fenced code blocks."""
    return FENCE.sub("", text_of(page))


def spans(page: Path) -> list[str]:
    return SPAN.findall(prose(page))


# ---------------------------------------------------------------- the parser


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


PARSER = build_parser()
COMMANDS = subparsers(PARSER)
BENCHES = subparsers(COMMANDS["bench"])


def all_parsers() -> Iterator[argparse.ArgumentParser]:
    todo = [PARSER]
    while todo:
        p = todo.pop()
        yield p
        todo.extend(subparsers(p).values())


def options_of(parser: argparse.ArgumentParser) -> set[str]:
    return set(parser._option_string_actions)


def parser_for(words: list[str]) -> tuple[argparse.ArgumentParser, list[str]]:
    """The subcommand's parser for ``euchre-overlay WORDS…`` and the words after its name."""
    if words[0].isupper():  # `euchre-overlay COMMAND --help`
        return PARSER, words[1:]
    assert words[0] in COMMANDS, f"no subcommand {words[:1]!r}; euchre-overlay has {sorted(COMMANDS)}"
    parser, rest = COMMANDS[words[0]], words[1:]
    if words[0] == "bench" and rest and not rest[0].startswith("-") and not rest[0].isupper():
        assert rest[0] in BENCHES, f"no benchmark {rest[0]!r}; bench has {sorted(BENCHES)}"
        parser, rest = BENCHES[rest[0]], rest[1:]
    return parser, rest


def flags_in(words: list[str]) -> Iterator[str]:
    """Option names in a command written with placeholders (``[--t S]``, ``--view/--theme``)."""
    for word in words:
        for part in word.strip("[]()").split("/"):
            part = part.split("=", 1)[0].strip("[]()")
            if re.fullmatch(r"--?[A-Za-z][\w-]*", part):
                yield part


# ---------------------------------------------------------------- commands in code blocks


def shell_commands(script: str) -> Iterator[list[str]]:
    """Each simple command of a shell block, as words, environment assignments dropped."""
    script = script.replace("\\\n", " ")
    for line in script.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words: list[str] = []
        for token in [*lexer, ";"]:
            if token and set(token) <= set("|&;()<>"):
                while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
                    words.pop(0)
                if words:
                    yield words
                words = []
            else:
                words.append(token)


def program(word: str) -> str:
    return word.rsplit("/", 1)[-1] if word.startswith(".venv/bin/") else word


def quoted_commands() -> Iterator[tuple[str, list[str]]]:
    for page in PAGES:
        for block in blocks(page, "sh", "bash", "console"):
            for words in shell_commands(block):
                yield rel(page), words


def test_every_page_is_checked() -> None:
    assert README in PAGES and len(PAGES) >= 9, PAGES
    assert sum(1 for _ in quoted_commands()) > 50


def test_shell_commands_parse() -> None:
    """Every ``euchre-overlay`` line in a shell block parses with the real parser: the
    subcommand, its options, their choices and types, the required arguments."""
    seen = 0
    for page, words in quoted_commands():
        if program(words[0]) != "euchre-overlay":
            continue
        seen += 1
        try:
            PARSER.parse_args(words[1:])
        except SystemExit as exc:
            pytest.fail(f"{page}: `{shlex.join(words)}` does not parse (exit {exc.code})")
    assert seen > 30


def test_scripts_and_pytest_commands_exist() -> None:
    bootstrap = text_of(ROOT / "scripts" / "bootstrap")
    markers = text_of(ROOT / "pyproject.toml")
    for page, words in quoted_commands():
        head = words[0]
        if head.startswith("scripts/"):
            script = ROOT / head
            assert script.is_file(), f"{page}: {head} does not exist"
            for flag in flags_in(words[1:]):
                assert re.search(rf"['\"]{re.escape(flag)}['\"]", text_of(script)), f"{page}: {head} has no option {flag}"
            if head == "scripts/bootstrap":
                assert len(words) > 1 and re.search(rf"^\s*{words[1]}\)", bootstrap, re.M), f"{page}: scripts/bootstrap has no mode {words[1:2]}"
        if words[1:3] == ["-m", "pytest"]:
            for i, word in enumerate(words):
                if word.startswith("tests/"):
                    assert (ROOT / word).exists(), f"{page}: {word} does not exist"
                if word == "-m" and i + 1 < len(words) and words[i + 1] != "pytest":
                    assert f'"{words[i + 1]}:' in markers, f"{page}: no pytest marker {words[i + 1]!r}"


# ---------------------------------------------------------------- commands in the prose


def test_inline_commands_name_real_options() -> None:
    """``euchre-overlay render GAME -o OUT [--ray]`` and the shorter ``render --ray`` in the
    prose and tables: the subcommand, the benchmark and each option exist."""
    for page in PAGES:
        for span in spans(page):
            words = span.split()
            if words[0] == "euchre-overlay":
                words = words[1:]
            elif not (words[0] in COMMANDS and any(w.startswith("-") for w in words[1:])):
                continue
            if not words:
                continue
            parser, rest = parser_for(words)
            for flag in flags_in(rest):
                assert flag in options_of(parser), f"{rel(page)}: `{span}`: {parser.prog} has no option {flag}"


def test_bare_options_exist_somewhere() -> None:
    """An option quoted alone (`--split-seconds`) belongs to some subcommand or script."""
    known = set().union(*(options_of(p) for p in all_parsers()))
    scripts = "".join(text_of(p) for p in (ROOT / "scripts").iterdir() if p.is_file())
    for page in PAGES:
        for span in spans(page):
            first = span.split()[0].split("=")[0]
            for flag in first.split("/"):
                if re.fullmatch(r"--[a-z][\w-]*", flag):
                    assert flag in known or f'"{flag}"' in scripts, f"{rel(page)}: `{span}`: no command has {flag}"


def test_readme_cli_table_lists_every_subcommand() -> None:
    rows = re.findall(r"^\| `euchre-overlay (\w+)[^`]*` \|", text_of(README), re.M)
    assert rows == list(COMMANDS), f"the README's command table lists {rows}, the parser has {list(COMMANDS)}"
    row = next(line for line in text_of(README).splitlines() if line.startswith("| `euchre-overlay bench"))
    assert sorted(re.findall(r"`(\w+)`", row.split("|")[2])) == sorted(BENCHES)


def test_benchmarks_page_covers_every_benchmark() -> None:
    text = text_of(DOCS / "benchmarks.md")
    headings = {m.group(2) for m in HEADING.finditer(prose(DOCS / "benchmarks.md"))}
    for name in BENCHES:
        assert any(f"(`bench {name}`)" in h for h in headings), f"docs/benchmarks.md has no section for bench {name}"
        assert re.search(rf"^euchre-overlay bench {name}\b", text, re.M), f"docs/benchmarks.md shows no command for bench {name}"


def test_transport_table_lists_every_control_op() -> None:
    (op,) = [a for a in COMMANDS["control"]._actions if a.dest == "op"]
    assert op.choices is not None
    section = text_of(DOCS / "running-a-show.md").split("## Playback control", 1)[1].split("\n## ", 1)[0]
    table = {name for row in re.findall(r"^\| (`[^|]*`) \|", section, re.M) for name in re.findall(r"`(\w+)", row)}
    assert table == set(op.choices), f"transport table {sorted(table)} != control ops {sorted(op.choices)}"


# ---------------------------------------------------------------- routes


ROUTE_DEF = re.compile(r"\.(?:add_)?(get|post|put|patch|delete)\(\s*[\"'](/[^\"']*)[\"']")


def source_routes() -> set[tuple[str, str]]:
    found = set()
    for folder in ("overlay", "studio"):
        for path in (ROOT / folder).rglob("*.py"):
            if "bench" in path.parts:
                continue
            found |= {(m.group(1).upper(), m.group(2)) for m in ROUTE_DEF.finditer(text_of(path))}
    return found


def documented_routes() -> set[tuple[str, str]]:
    found = set()
    for page in (DOCS / "api.md", DOCS / "studio.md"):
        for methods, path in re.findall(r"^\| ([A-Z, ]+) \| `(/[^`]*)` \|", text_of(page), re.M):
            if "…" not in path:
                found |= {(m.strip(), path) for m in methods.split(",")}
    return found


def test_route_tables_match_the_service() -> None:
    """docs/api.md and docs/studio.md list exactly the routes the service and studio declare."""
    code, docs = source_routes(), documented_routes()
    assert len(code) > 30, f"found only {len(code)} route declarations: update ROUTE_DEF to how routes are declared now"
    assert not code - docs, f"routes not in docs/api.md or docs/studio.md: {sorted(code - docs)}"
    assert not docs - code, f"documented routes the service does not declare: {sorted(docs - code)}"


# ---------------------------------------------------------------- names and files


def test_named_files_exist() -> None:
    """Every repository path the pages quote exists; none names a module file of overlay/,
    which is being reorganised (a command or URL says it better)."""
    words = [w for page in PAGES for span in spans(page) for w in [span, *span.split()]]
    words += [w for _, cmd in quoted_commands() for w in cmd]
    for word in words:
        if not REPO_PATH.match(word):
            continue
        assert word == "overlay/" or not word.startswith("overlay/"), f"{word}: name the command or URL, not a module of overlay/"
        assert glob.glob(str(ROOT / word)), f"{word} does not exist"


def test_environment_variables_exist() -> None:
    sources = "".join(text_of(p) for folder in ("engine", "renderer", "overlay", "studio", "tests") for p in (ROOT / folder).rglob("*.py"))
    sources += "".join(text_of(p) for p in (ROOT / "scripts").iterdir() if p.is_file())
    for page in PAGES:
        for name in set(re.findall(r"\b(EUCHRE_[A-Z_]+)=", text_of(page))) | {s for s in spans(page) if re.fullmatch(r"EUCHRE_[A-Z_]+", s)}:
            assert name in sources, f"{rel(page)}: nothing reads {name}"


def test_rulesets_table_lists_every_key_with_its_default() -> None:
    from engine.ruleset import PRESETS, Ruleset

    text = text_of(DOCS / "engine.md")
    for name, field in Ruleset.model_fields.items():
        default = field.default
        shown = str(getattr(default, "value", default))
        shown = shown.lower() if isinstance(default, bool) else shown
        assert f"| `{name}` | `{shown}` |" in text, f"docs/engine.md: ruleset key {name} (default {shown}) missing"
    for preset in PRESETS:
        assert f'"{preset}"' in text, f"docs/engine.md: preset {preset} missing"


# ---------------------------------------------------------------- links, headings, the site


def slug(heading: str) -> str:
    """GitHub's anchor for a heading (MkDocs makes the same one when it has no '--')."""
    text = re.sub(r"[`*_]", "", re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def anchors(page: Path) -> set[str]:
    return {slug(m.group(2)) for m in HEADING.finditer(prose(page))}


def test_links_resolve() -> None:
    for page in PAGES:
        for target in LINK.findall(prose(page)):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            assert dest.exists(), f"{rel(page)}: link to {target}: no such file"
            if page.parent == DOCS:
                assert DOCS in dest.parents or dest == DOCS, f"{rel(page)}: {target} leaves docs/ (the site cannot link it)"
            if anchor:
                assert dest.suffix == ".md" and anchor in anchors(dest), f"{rel(page)}: link to {target}: no such heading"


def test_heading_anchors_are_the_same_on_github_and_mkdocs() -> None:
    for page in PAGES:
        for a in anchors(page):
            assert "--" not in a, f"{rel(page)}: heading anchor {a!r}: GitHub and MkDocs would differ"


def test_every_docs_page_is_in_the_site_and_linked() -> None:
    nav = re.findall(r":\s*([\w./-]+\.md)\s*$", text_of(ROOT / "mkdocs.yml"), re.M)
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    assert sorted(nav) == pages, f"mkdocs.yml nav {nav} != docs/ pages {pages}"
    index = prose(DOCS / "index.md")
    for name in pages:
        if name != "index.md":
            assert f"]({name})" in index, f"docs/index.md does not link {name}"
            assert f"](docs/{name})" in prose(README), f"README.md does not link docs/{name}"


# ---------------------------------------------------------------- the README


def test_readme_is_short() -> None:
    lines = len(text_of(README).splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; the rest belongs in docs/"


def test_readme_opens_with_the_two_commands() -> None:
    text = text_of(README)
    assert text.index("```sh") < text.index("\n## "), "the two commands come first"
    block = text.split("```sh", 1)[1].split("```", 1)[0].strip().splitlines()
    assert [line.split("#")[0].strip() for line in block] == ["scripts/bootstrap run", "scripts/bootstrap test"]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    block = text_of(README).split("```sh", 1)[1].split("```", 1)[0].strip().splitlines()
    test_command = block[1].split("#")[0].strip()
    ci = [line.strip() for line in text_of(ROOT / ".ci" / "run").splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert ci[-1] == test_command, f".ci/run ends with {ci[-1]!r}, the README's test command is {test_command!r}"


def test_images_are_small() -> None:
    for page in PAGES:
        for target in LINK.findall(prose(page)):
            if target.endswith((".png", ".jpg", ".gif", ".webp", ".svg")):
                size = (page.parent / target).stat().st_size
                assert size <= 200_000, f"{rel(page)}: {target} is {size} bytes"


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_examples_run(page: Path) -> None:
    result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    if page == README or page.name in ("engine.md", "analysis.md"):
        assert result.attempted > 0
