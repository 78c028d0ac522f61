"""The Makefile's test tiers cover every test folder exactly once, the unit tier refuses a test
that needs the database, and it leaves out only the tests marked `slow` (`make test` runs them)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

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


def pytest_options(target: str) -> str:
    """What a Makefile target passes to pytest (its recipe after `-m pytest`)."""
    makefile = (ROOT / "Makefile").read_text()
    match = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert match, f"the Makefile has a {target} target"
    _, runs, options = match.group(1).partition("-m pytest ")
    assert runs, f"{target} runs pytest"
    return options


def test_the_unit_tier_leaves_out_only_the_slow_tests_and_make_test_runs_them() -> None:
    """`make test-unit` deselects the `slow` marker and nothing else; `make test` deselects
    nothing, so every unit test still runs there."""
    unit = pytest_options("test-unit")
    assert re.findall(r"(?:^|\s)-m\s+(\"[^\"]*\"|\S+)", unit) == ['"not slow"']
    assert "$(UNIT_TESTS)" in unit
    assert not re.search(r"(?:^|\s)(-m|-k|--deselect|--ignore)\b", pytest_options("test"))
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert any(marker.startswith("slow:") for marker in options["markers"])
    assert not any(option.startswith(("-m", "-k")) for option in options.get("addopts", []))


@pytest.mark.slow  # a pytest of its own, in a subprocess
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
