"""The Makefile's test tiers cover every test folder exactly once, and the unit tier refuses a
test that needs the database."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIERS = ("UNIT_TESTS", "INTEGRATION_TESTS", "E2E_TESTS", "BROWSER_TESTS", "CITUS_TESTS")


def tier_folders() -> dict[str, list[str]]:
    makefile = (ROOT / "Makefile").read_text()
    folders = {}
    for tier in TIERS:
        match = re.search(rf"^{tier} := (.+)$", makefile, re.MULTILINE)
        assert match, f"the Makefile defines {tier}"
        folders[tier] = match.group(1).split()
    return folders


def test_every_test_folder_is_in_exactly_one_tier() -> None:
    listed = [folder for folders in tier_folders().values() for folder in folders]
    assert len(listed) == len(set(listed))
    with_tests = sorted(
        {str(path.parent.relative_to(ROOT)) for path in (ROOT / "tests").rglob("test_*.py")}
    )
    assert with_tests, "found the tests"
    for folder in with_tests:
        owners = [f for f in listed if folder == f or folder.startswith(f + "/")]
        assert len(owners) == 1, f"{folder} is in {owners}"


def test_the_unit_tier_refuses_a_test_that_needs_the_database(tmp_path: Path) -> None:
    """tests/unit/conftest.py, copied beside a unit test that asks for `database_url` (through
    another fixture, as a real one would): collection fails and says why."""
    unit = tmp_path / "tests" / "unit"
    unit.mkdir(parents=True)
    (tmp_path / "tests" / "conftest.py").write_text(
        "import pytest\n\n"
        "@pytest.fixture\ndef database_url() -> str:\n    return 'postgresql://nowhere'\n\n"
        "@pytest.fixture\ndef store(database_url: str) -> str:\n    return database_url\n"
    )
    (unit / "conftest.py").write_text((ROOT / "tests" / "unit" / "conftest.py").read_text())
    (unit / "test_probe.py").write_text("def test_probe(store: str) -> None:\n    assert store\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0
    assert "test_probe.py::test_probe asks for database_url" in run.stdout + run.stderr
