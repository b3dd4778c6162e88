"""The map in docs/ARCHITECTURE.md stays true: every file its tables name exists, the concepts a newcomer looks for
are in it, and no code or page cites a document that is not in the repository or an issue by number."""

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAP = ROOT / "docs/ARCHITECTURE.md"
# What a newcomer asks for first: each must be a row of the concept table.
CONCEPTS = (
    "ledger",
    "dialogue loop",
    "judge: rubric prompt and strict parse",
    "contrasts",
    "violation rule",
    "gate",
    "blindness",
    "assignment",
    "resolution",
    "agreement",
    "Appendix-D report",
    "crowd entry",
    "batch judging",
    "judge-corrected contrasts",
    "analysis parameters",
    "launching a design",
    "design label plan",
    "leased jobs",
    "an audit's running totals",
    "audit exports streamed",
)
CITED_DOCUMENT = re.compile(r"(?<![\w/.{}-])(?!/)((?:\.\./)*[\w./-]*\b[\w-]+\.md)\b")
ISSUE_NUMBER = re.compile(r"\bissues?\s*#?\d+", re.IGNORECASE)


def _table_rows(text: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|") and not line.startswith("|---")
    ]


def _tracked(*patterns: str) -> list[Path]:
    listed = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / name for name in listed.stdout.split()]


def test_every_file_the_map_names_exists():
    named = re.findall(r"`([\w./-]+\.(?:py|md|toml|yml|cfg))`", MAP.read_text())
    assert len(named) > 80
    missing = sorted({name for name in named if not (ROOT / name).is_file()})
    assert missing == []


def test_the_concepts_a_newcomer_looks_for_are_in_the_table():
    rows = {row[0] for row in _table_rows(MAP.read_text())}
    assert [concept for concept in CONCEPTS if not any(row.startswith(concept) for row in rows)] == []


def test_no_code_cites_a_document_outside_the_repository():
    cited = []
    for path in _tracked("*.py", "*.html", "Makefile", ".ci/run"):
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for name in CITED_DOCUMENT.findall(line):
                if not (ROOT / name).is_file():
                    cited.append(f"{path.relative_to(ROOT)}:{number}: {name}")
    assert cited == []


def test_no_code_names_an_issue_by_number():
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _tracked("*.py", "*.html", "*.js", "*.css")
        if "static/vendor/" not in str(path)
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if ISSUE_NUMBER.search(line)
    ]
    assert found == []


def test_every_module_docstring_opens_with_a_one_line_summary():
    long_openings = []
    for path in _tracked("*.py"):
        name = str(path.relative_to(ROOT))
        parts = path.relative_to(ROOT).parts
        if "tests" in parts or "migrations" in parts or path.name in ("__init__.py", "conftest.py"):
            continue
        if path.name.startswith("test_"):
            continue
        docstring = ast.get_docstring(ast.parse(path.read_text()))
        if docstring and "\n" in docstring.split("\n\n")[0].strip():
            long_openings.append(name)
    assert long_openings == []
