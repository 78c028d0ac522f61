"""Graceful shutdown (issue 17): SIGTERM or SIGINT with streams open and a request in flight.

Before: uvicorn waited for every connection to close, streams never do (heartbeats), so the
process stayed up until SIGKILL; a second Ctrl-C printed CancelledError tracebacks.
Now, within 5 seconds: every stream ends with a `retry:` hint, the request in flight is
answered, the clock, listener and pool are closed (no session left in PostgreSQL), the
process exits 0, and the log has no traceback.
"""

from __future__ import annotations

import signal
import socket
import threading
import time
from typing import Any

import httpx
import pytest

from tests.ops.players import Person
from tests.sessions import open_sessions

pytestmark = pytest.mark.slow

STREAMS = 6


def _follow(url: str, token: str, game: str, out: dict[str, Any]) -> None:
    lines: list[str] = []
    out["lines"] = lines
    with (
        httpx.Client(base_url=url, timeout=30) as client,
        client.stream(
            "GET", f"/games/{game}/stream", headers={"Authorization": f"Bearer {token}"}
        ) as response,
    ):
        out["status"] = response.status_code
        for line in response.iter_lines():
            lines.append(line)
    out["ended_at"] = time.monotonic()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_shutdown_ends_streams_and_finishes_requests(
    swarm: Any, own_database: str, sig: int
) -> None:
    server = swarm(database=own_database, SWARM_STREAM_HEARTBEAT="1").start()
    people = [Person(server.url, f"P{i}") for i in range(STREAMS)]
    games = [person.solo_game() for person in people]
    followers: list[dict[str, Any]] = [{} for _ in people]
    threads = [
        threading.Thread(target=_follow, args=(server.url, p.token, g, out), daemon=True)
        for p, g, out in zip(people, games, followers, strict=True)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(f.get("lines") for f in followers):
        time.sleep(0.05)
    assert all(f.get("status") == 200 for f in followers)

    # A request in flight at the signal: its headers are in, its body comes after.
    body = b'{"name": "Late"}'
    late = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    late.sendall(
        b"POST /guests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
    )
    time.sleep(0.2)

    signalled = time.monotonic()
    server.signal(sig, group=sig == signal.SIGINT)  # Ctrl-C reaches the whole group
    time.sleep(0.3)
    late.sendall(body)
    answer = b""
    while chunk := late.recv(65536):
        answer += chunk
    late.close()
    assert answer.startswith(b"HTTP/1.1 201"), answer[:300]

    code = server.wait(timeout=10)
    took = time.monotonic() - signalled
    for thread in threads:
        thread.join(timeout=5)
    log = server.log_text()
    assert code == 0, log[-3000:]
    assert took < 5, f"exit took {took:.1f} s"
    for follower in followers:
        assert "ended_at" in follower, "a stream was still open after the exit"
        assert follower["ended_at"] - signalled < 5
        assert "retry: 1000" in follower["lines"], follower["lines"][-5:]
    assert "Traceback" not in log and "CancelledError" not in log, log[-3000:]
    assert "stopped: clock, listener and pool closed" in log
    assert open_sessions(own_database) == 0  # pool and listener connections all closed
    print(f"{signal.Signals(sig).name}: exited in {took:.2f} s with {STREAMS} streams open")
