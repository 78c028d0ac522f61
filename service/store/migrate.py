"""Apply the plain SQL files in ``migrations/`` in filename order.

Each file runs in its own transaction and is recorded in ``schema_migrations`` with a checksum.
A session-level advisory lock makes concurrent runs (two processes starting at once) safe: the
second waits, then finds everything applied. Editing an already-applied file is an error.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from pathlib import Path

import psycopg

from service.store.pool import Pool

log = logging.getLogger(__name__)

# In a checkout, the repository's migrations/; in an installed wheel, the copy inside the
# package (pyproject.toml force-includes it as service/migrations).
_PACKAGED = Path(__file__).resolve().parents[1] / "migrations"
MIGRATIONS_DIR = (
    _PACKAGED if _PACKAGED.is_dir() else Path(__file__).resolve().parents[2] / "migrations"
)

# Fixed advisory lock key for migrations ("swarm-mi" as ASCII, fits a signed bigint).
MIGRATION_LOCK_KEY = 0x737761726D2D6D69


class MigrationError(RuntimeError):
    """A migration file no longer matches what was applied, or cannot be applied."""


def _checksum(sql: str) -> str:
    return hashlib.sha256(sql.encode("utf-8")).hexdigest()


_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")


def split_statements(sql: str) -> list[str]:
    """``sql`` cut into its statements at each top-level ``;`` (outside quotes, dollar quotes
    and comments), each kept as written. On Citus a file runs one statement at a time: Citus
    sends a distributed table's ALTER to the workers as the whole query string it came in, and
    a string of several statements cannot be sent that way."""
    out: list[str] = []
    start = i = 0
    n = len(sql)
    while i < n:
        ch = sql[i]
        if ch == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end + 1
        elif ch == "/" and sql.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if sql.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif sql.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif ch in "'\"":
            backslash = ch == "'" and i > 0 and sql[i - 1] in "eE"
            i += 1
            while i < n:
                if backslash and sql[i] == "\\":
                    i += 2
                elif sql[i] == ch:
                    if i + 1 < n and sql[i + 1] == ch:  # a doubled quote
                        i += 2
                    else:
                        i += 1
                        break
                else:
                    i += 1
        elif (
            ch == "$"
            and (match := _DOLLAR.match(sql, i))
            and not (i > 0 and (sql[i - 1].isalnum() or sql[i - 1] == "_"))
        ):
            end = sql.find(match[0], match.end())
            i = n if end < 0 else end + len(match[0])
        elif ch == ";":
            out.append(sql[start : i + 1])
            start = i = i + 1
        else:
            i += 1
    tail = sql[start:]
    if tail.strip() and _has_code(tail):
        out.append(tail)
    return [each for each in out if _has_code(each)]


def _has_code(text: str) -> bool:
    """Whether ``text`` holds more than blanks and comments."""
    stripped = re.sub(r"(?s)/\*.*?\*/", "", re.sub(r"--[^\n]*", "", text))
    return bool(stripped.strip(" \t\r\n;"))


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[Path]:
    return sorted(directory.glob("*.sql"), key=lambda path: path.name)


async def applied_count(pool: Pool, names: Sequence[str]) -> int:
    """How many of the migrations `names` the database has applied (`/health/ready`)."""
    return int(
        await pool.fetchval(
            "select count(*) from schema_migrations where name = any($1::text[])", list(names)
        )
    )


def migrate(url: str, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply pending migrations to the database at ``url``; return the names applied."""
    files = migration_files(directory)
    applied_now: list[str] = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("select pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
        try:
            conn.execute(
                """
                create table if not exists schema_migrations (
                    name       text primary key,
                    checksum   text not null,
                    applied_at timestamptz not null default now()
                )
                """
            )
            rows = conn.execute("select name, checksum from schema_migrations").fetchall()
            on_citus = bool(
                conn.execute(
                    "select exists (select 1 from pg_extension where extname = 'citus')"
                ).fetchone()[0]  # type: ignore[index]
            )
            done: dict[str, str] = {name: checksum for name, checksum in rows}
            for path in files:
                sql = path.read_text(encoding="utf-8")
                checksum = _checksum(sql)
                if path.name in done:
                    if done[path.name] != checksum:
                        raise MigrationError(
                            f"migration {path.name} was changed after it was applied "
                            f"(checksum {done[path.name]} in the database, {checksum} on disk); "
                            "add a new migration instead of editing an applied one"
                        )
                    continue
                log.info("applying migration %s", path.name)
                try:
                    with conn.transaction():
                        for each in split_statements(sql) if on_citus else [sql]:
                            # bytes: a file is not a LiteralString
                            conn.execute(each.encode("utf-8"))
                        conn.execute(
                            "insert into schema_migrations (name, checksum) values (%s, %s)",
                            (path.name, checksum),
                        )
                except psycopg.Error as exc:
                    raise MigrationError(f"migration {path.name} failed: {exc}") from exc
                applied_now.append(path.name)
            # Files recorded in the database but missing on disk are suspicious, not fatal.
            missing = sorted(set(done) - {path.name for path in files})
            if missing:
                log.warning("applied migrations missing on disk: %s", ", ".join(missing))
        finally:
            conn.execute("select pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
    return applied_now
