"""The turn clock survives its service: kill the process mid-turn, start it again, and the
turn resolves (late, but once). A real process and a real clock with 1-second turns."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.live_server import free_port


class Server:
    def __init__(self, database_url: str, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "DATABASE_URL": database_url}
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "service", "run", "--port", str(self.port)],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"the service did not start: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()  # SIGKILL: no shutdown hooks, timers left as they were
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[Server]:
    server = Server(database_url, tmp_path / "service.log")
    yield server
    server.kill()


def post(server: Server, path: str, token: str | None = None, **body: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.post(f"{server.url}{path}", json=body, headers=headers, timeout=10)
    assert response.status_code in (200, 201), response.text
    return response.json()


@pytest.mark.slow
def test_a_turn_resolves_after_the_service_is_killed_and_restarted(server: Server) -> None:
    server.start()
    hana = post(server, "/guests", name="Hana")["token"]
    bob = post(server, "/guests", name="Bob")["token"]
    table = post(server, "/tables", hana, seats=2, turn_seconds=1, choice_seconds=1)
    game = post(server, f"/tables/{table['table_id']}/seats", bob)["game"]
    gid = game["game_id"]

    server.kill()  # mid-turn 1, with its timer stored and no instance to fire it
    time.sleep(1.5)  # the deadline passes while nothing runs
    server.start()

    headers = {"Authorization": f"Bearer {hana}"}
    deadline = time.monotonic() + 20
    view: dict[str, Any] = {}
    while time.monotonic() < deadline:
        view = httpx.get(f"{server.url}/games/{gid}", headers=headers, timeout=10).json()
        if view["turn"] >= 2 or view["phase"] != "picking":
            break
        time.sleep(0.1)
    assert view["turn"] >= 2 or view["phase"] != "picking", view
    log = httpx.get(
        f"{server.url}/games/{gid}/events", params={"limit": 1000}, headers=headers, timeout=10
    ).json()
    reveals = [e["data"]["turn"] for e in log["events"] if e["type"] == "picks_revealed"]
    assert reveals[0] == 1 and reveals == sorted(set(reveals)), reveals  # each turn once
    first_turn = [e for e in log["events"] if e["type"] == "pick_confirmed"][:2]
    assert {e["data"]["seat"] for e in first_turn} == {1, 2}
