"""The import rule between the layers holds in the code, and the check would catch a break."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.layers import driver_paths, sql_texts, violations

ROOT = Path(__file__).resolve().parents[2]


def test_no_module_imports_against_the_layers() -> None:
    assert violations(ROOT) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("where", "source", "broken"),
    [
        (
            "service/domain/rules/engine.py",
            "from service.store.events import EventStore\n",
            "service.store",
        ),
        ("service/domain/views.py", "import service.usecases.play\n", "service.usecases"),
        ("service/domain/fairness.py", "from service import api\n", "service.api"),
        ("service/domain/chain.py", "import asyncpg\n", "asyncpg"),
        ("service/domain/tables.py", "from ..store import pool\n", "service.store"),
        (
            "service/store/events.py",
            "from service.usecases.errors import NotFound\n",
            "service.usecases",
        ),
        ("service/usecases/play.py", "from service.api.routes import Move\n", "service.api"),
        ("service/usecases/play.py", "from service.bootstrap import Swarm\n", "service.bootstrap"),
        ("service/usecases/money.py", "import asyncpg\n", "asyncpg"),
        ("service/usecases/accounts.py", "from asyncpg import UniqueViolationError\n", "asyncpg"),
        ("service/usecases/clock.py", "import psycopg\n", "psycopg"),
        # the log's vocabulary lives beside the stores (store/log.py), not in the PostgreSQL one
        (
            "service/usecases/play.py",
            "from service.store.events import NewEvent\n",
            "service.store.events",
        ),
        (
            "service/usecases/streams.py",
            "from ..store.pool import PoolExhausted\n",
            "service.store.pool",
        ),
        (
            "service/store/memory.py",
            "from service.store.events import EventStore\n",
            "service.store.events",
        ),
        ("service/store/memory.py", "import asyncpg\n", "asyncpg"),
        ("service/store/memory.py", "from . import projections\n", "service.store.projections"),
        (
            "service/store/port.py",
            "from service.store.events import RecordedEvent\n",
            "service.store.events",
        ),
        ("service/store/log.py", "from asyncpg import UniqueViolationError\n", "asyncpg"),
        ("service/api/problems.py", "import asyncpg\n", "asyncpg"),
    ],
)
def test_a_forbidden_import_is_reported(
    tmp_path: Path, where: str, source: str, broken: str
) -> None:
    root = _tree(tmp_path, {where: source})
    found = violations(root)
    assert len(found) == 1 and found[0].startswith(where) and f"(forbidden: {broken})" in found[0]


def test_no_use_case_and_no_in_memory_store_loads_the_driver() -> None:
    assert driver_paths(ROOT) == []


def test_a_driver_loaded_through_another_module_is_reported(tmp_path: Path) -> None:
    # Each import allowed on its own: the use case imports a store module, which imports the
    # driver. The chain is what the fast tier would load.
    root = _tree(
        tmp_path,
        {
            "service/__init__.py": "",
            "service/store/__init__.py": "",
            "service/store/rows.py": "from service.store import wakeups\n",
            "service/store/wakeups.py": "import asyncpg\n",
            "service/store/log.py": "import msgspec\n",
            "service/usecases/play.py": "from service.store.rows import Timer\nimport asyncio\n",
            "service/usecases/money.py": "from service.store.log import NewEvent\n",
        },
    )
    assert violations(root) == []
    assert driver_paths(root) == [
        "service.usecases.play -> service.store.rows -> service.store.wakeups -> asyncpg"
    ]


def test_the_real_tree_broken_once_is_caught(tmp_path: Path) -> None:
    """The rule run on a copy of the real `service/` with one line of the memory store turned
    back to what it was (issue 42): both checks report it."""
    for source in (ROOT / "service").rglob("*.py"):
        copy = tmp_path / source.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(source.read_bytes())
    memory = tmp_path / "service/store/memory.py"
    text = memory.read_text(encoding="utf-8")
    memory.write_text(text + "\nfrom service.store.events import EventStore  # noqa\n")
    found = violations(tmp_path)
    assert len(found) == 1 and "(forbidden: service.store.events)" in found[0], found
    assert driver_paths(tmp_path) == ["service.store.memory -> service.store.events -> asyncpg"]


def test_allowed_imports_pass(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "service/domain/views.py": "from service.domain.rules.engine import GameState\n",
            "service/usecases/play.py": (
                "from service.domain.bee_answers import decide_with_bees\nimport asyncio\n"
            ),
            "service/store/projections.py": "from service.domain.tables import TableState\n",
            "service/store/memory.py": (
                "from service.store.log import NewEvent, hashes\n"
                "from service.store.port import Ports\nfrom service.store.rows import Row\n"
            ),
            "service/store/events.py": "import asyncpg\nfrom service.store.log import NewEvent\n",
            "service/usecases/money.py": "from service.store.port import PoolExhausted\n",
            "service/api/routes.py": "from service.bootstrap import Swarm\nimport litestar\n",
        },
    )
    assert violations(root) == []


def test_no_use_case_holds_sql() -> None:
    assert sql_texts(ROOT) == []


@pytest.mark.parametrize(
    "source",
    [
        '_LOBBY = """\nselect table_id from lobby where status <> \'closed\'\n"""\n',
        "Q = 'INSERT INTO timers (game_id) VALUES ($1)'\n",
        "async def f(pool):\n    await pool.execute('delete from sign_ups where key = $1', 1)\n",
        "def f(t):\n    return f'update {t} set a = 1' if t else 'update lobby set a = 1'\n",
        "Q = 'with gone as (delete from x) select 1'\n",
        "Q = 'select require_token($1, $2, $3)'\n",
    ],
)
def test_sql_text_in_a_use_case_is_reported(tmp_path: Path, source: str) -> None:
    root = _tree(tmp_path, {"service/usecases/money.py": source})
    found = sql_texts(root)
    assert found and all(f.startswith("service/usecases/money.py") for f in found), found


def test_prose_docstrings_and_the_store_are_not_sql(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "service/usecases/tables.py": (
                '"""Select a seat from the lobby; insert into it; delete from the list."""\n'
                "def f() -> str:\n"
                '    """select x from y"""\n'
                '    return "Choose a seat; we update the lobby as you join."\n'
            ),
            "service/store/reads.py": "Q = 'select table_id from lobby'\n",
        },
    )
    assert sql_texts(root) == []
