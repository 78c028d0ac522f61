"""Issue 13, point 1: half-open requests must not take capacity from real players.

Against a real `swarm serve` process: hundreds of connections send the headers of a
`submitMove` (any bearer string, a `Content-Length`) and never the body, more send headers
that never end; meanwhile a real move is answered as usual (before: 503 `overloaded` while
they were held). Then each half-open connection is answered 408 and closed by its deadline,
a 64 KiB header is refused with 431 without being read whole, and the service still plays.
"""

from __future__ import annotations

import select
import socket
import statistics
import time
from typing import Any

import pytest

from tests.ops.players import Person

pytestmark = pytest.mark.slow

HALF_OPEN_BODIES = 300
HALF_OPEN_HEADERS = 100


def _open(port: int, payload: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(payload)
    return sock


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    sock.settimeout(10)
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_half_open_requests_hold_no_capacity(swarm: Any) -> None:
    # A small in-flight limit, so the half-open connections would fill it many times over.
    server = swarm(SWARM_MAX_IN_FLIGHT="16", SWARM_BODY_TIMEOUT="6", SWARM_HEADER_TIMEOUT="6")
    server.start()
    ada = Person(server.url)
    game = ada.solo_game()
    quiet = []
    for _ in range(5):
        started = time.perf_counter()
        assert ada.tap(game).status_code == 200
        quiet.append(time.perf_counter() - started)

    head = (
        f"POST /games/{game}/moves HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer junk\r\n"
        "Content-Type: application/json\r\nContent-Length: 64\r\n\r\n"
    ).encode()
    bodies = [_open(server.port, head) for _ in range(HALF_OPEN_BODIES)]
    headers = [
        _open(server.port, b"POST /guests HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        for _ in range(HALF_OPEN_HEADERS)
    ]
    held_since = time.monotonic()
    time.sleep(0.5)

    loaded = []
    for _ in range(5):
        started = time.perf_counter()
        tapped = ada.tap(game)
        loaded.append(time.perf_counter() - started)
        assert tapped.status_code == 200, tapped.text
    # Still held while the moves were served: none answered or closed yet (deadline 6 s).
    poll = select.poll()  # not select(): it cannot watch descriptors above 1024
    for sock in (*bodies, *headers):
        poll.register(sock, select.POLLIN)
    answered = poll.poll(0)
    assert not answered, f"{len(answered)} half-open connections were already let go"
    print(
        f"move latency, median: {statistics.median(quiet) * 1000:.1f} ms quiet, "
        f"{statistics.median(loaded) * 1000:.1f} ms with {HALF_OPEN_BODIES + HALF_OPEN_HEADERS}"
        " half-open connections held"
    )

    # Each is answered and closed by its deadline: body 408 (problem+json), headers 408.
    for sock in bodies:
        answer = _answer(sock)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"request-timeout" in answer
        sock.close()
    for sock in headers:
        answer = _answer(sock)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        sock.close()
    assert time.monotonic() - held_since < 20

    # A 64 KiB header is refused once the limit (16 KiB) is passed, not read whole.
    big = _open(server.port, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 65536)
    answer = _answer(big)
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    big.close()

    # A body sent slowly but within its deadline is fine; the service still plays.
    slow = _open(
        server.port,
        b"POST /guests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b'Content-Length: 14\r\nConnection: close\r\n\r\n{"name":',
    )
    time.sleep(1)
    slow.sendall(b' "Bo"}')
    assert _answer(slow).startswith(b"HTTP/1.1 201")
    slow.close()
    assert ada.tap(game).status_code == 200
    assert "Traceback" not in server.log_text()
