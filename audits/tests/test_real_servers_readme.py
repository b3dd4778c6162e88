"""The README's "Real models" table names, for each server, the tests that back it: each named test file exists,
each named case (`[id]`) is a case of a test in a file that row names, and each emulation named exists."""

import re
from pathlib import Path

from audits.tests.server_emulations import FLAVOURS

ROOT = Path(__file__).resolve().parents[2]
TESTS = Path(__file__).resolve().parent


def real_models_rows() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Real models\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| server ")]


def test_every_row_of_the_real_models_table_names_tests_that_exist():
    rows = real_models_rows()
    assert len(rows) >= 12
    for row in rows:
        backing = row.rstrip(" |").rsplit("|", 1)[1]
        files = re.findall(r"test_real_servers_\w+\.py", backing)
        assert files, row
        sources = []
        for name in files:
            assert (TESTS / name).is_file(), name
            sources.append((TESTS / name).read_text())
        for case in re.findall(r"`\[([\w-]+)\]`|, `\[([\w-]+)\]`", backing):
            case = next(part for part in case if part)
            assert any(f'id="{case}"' in source for source in sources), (case, row)
        for flavour in re.findall(r"\(`(\w+)`", backing):
            assert flavour in FLAVOURS, (flavour, row)
            assert any(f'"{flavour}"' in source for source in sources), (flavour, row)
        for test in re.findall(r"`(test_\w+)`", backing):
            assert any(f"def {test}(" in source for source in sources), (test, row)
