"""Migrations: idempotent, safe to run concurrently, and applied files may not change."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from service.store.database import drop_database, ensure_database
from service.store.migrate import MIGRATIONS_DIR, MigrationError, migrate, migration_files


@pytest.fixture
def fresh_database(database_url: str) -> Iterator[str]:
    """An empty database in the same server as the test database."""
    name = f"swarm_mig_{uuid.uuid4().hex[:12]}"
    url = ensure_database(database_url, name)
    try:
        yield url
    finally:
        drop_database(database_url, name)


def test_migrations_are_numbered_sql_files() -> None:
    names = [path.name for path in migration_files()]
    assert names, "no migrations found"
    assert names[0] == "0001_event_store.sql"
    assert all(name[:4].isdigit() and name[4] == "_" for name in names)


def test_migrate_twice_is_a_no_op(database_url: str) -> None:
    assert migrate(database_url) == []  # the session fixture applied everything already
    assert migrate(database_url) == []


def test_concurrent_migrations_both_succeed(fresh_database: str) -> None:
    with ThreadPoolExecutor(max_workers=2) as executor:
        results = list(executor.map(lambda _: migrate(fresh_database), range(2)))
    expected = [path.name for path in migration_files()]
    assert sorted(results, key=len) == [[], expected]
    with psycopg.connect(fresh_database) as conn:
        rows = conn.execute("select name from schema_migrations order by name").fetchall()
    assert [name for (name,) in rows] == expected


def test_changed_applied_migration_is_an_error(fresh_database: str, tmp_path: Path) -> None:
    directory = tmp_path / "migrations"
    directory.mkdir()
    shutil.copy(MIGRATIONS_DIR / "0001_event_store.sql", directory)
    assert migrate(fresh_database, directory) == ["0001_event_store.sql"]

    (directory / "9999_extra.sql").write_text("create table extra (id int);\n")
    assert migrate(fresh_database, directory) == ["9999_extra.sql"]

    with (directory / "0001_event_store.sql").open("a") as f:
        f.write("\n-- edited after the fact\n")
    with pytest.raises(MigrationError, match=r"0001_event_store\.sql was changed"):
        migrate(fresh_database, directory)


def test_failing_migration_is_rolled_back(fresh_database: str, tmp_path: Path) -> None:
    directory = tmp_path / "migrations"
    directory.mkdir()
    (directory / "0001_ok.sql").write_text("create table ok (id int);\n")
    (directory / "0002_broken.sql").write_text("create table half (id int);\nselect nonsense;\n")
    with pytest.raises(MigrationError, match=r"0002_broken\.sql failed"):
        migrate(fresh_database, directory)
    with psycopg.connect(fresh_database) as conn:
        assert conn.execute("select to_regclass('ok') is not null").fetchone() == (True,)
        assert conn.execute("select to_regclass('half') is null").fetchone() == (True,)
        names = conn.execute("select name from schema_migrations").fetchall()
    assert names == [("0001_ok.sql",)]
