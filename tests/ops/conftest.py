"""`swarm serve` as a real process (signals, workers, raw sockets), on the test database."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.live_server import free_port

# httpx logs every request at INFO; from the follower threads here, after pytest has closed
# the stream a handler was given, that only prints "Logging error" noise.
logging.getLogger("httpx").setLevel(logging.WARNING)


class Swarm:
    def __init__(self, log: Path, env: dict[str, str], args: list[str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.env = {**os.environ, **env}
        self.args = args
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> Swarm:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "service", "serve", "--port", str(self.port), *self.args],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, like a terminal's job
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"swarm serve exited: {self.log_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/health/ready", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"swarm serve did not start: {self.log_text()[-3000:]}")

    def signal(self, sig: int, group: bool = False) -> None:
        assert self.process is not None
        if group:
            os.killpg(self.process.pid, sig)
        else:
            self.process.send_signal(sig)

    def wait(self, timeout: float) -> int:
        assert self.process is not None
        return self.process.wait(timeout=timeout)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with_group = True
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                with_group = False
            if not with_group:
                self.process.kill()
            self.process.wait(timeout=10)

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@pytest.fixture
def swarm(tmp_path: Path, database_url: str) -> Iterator[Any]:
    started: list[Swarm] = []

    def make(*args: str, database: str | None = database_url, **env: str) -> Swarm:
        environment = {"SWARM_RATE_LIMIT": "0", **env}
        environment["DATABASE_URL"] = database or ""  # "": unset, an embedded server
        process = Swarm(tmp_path / f"swarm-{len(started)}.log", environment, list(args))
        started.append(process)
        return process

    yield make
    for process in started:
        process.kill()
