"""Issue 28, point 4: refusals at the edge reach the client.

Against a real `swarm serve` process, over raw sockets:

* a body *declared* larger than the limit is refused with 413 at once, unread (before: held
  until the body deadline and then answered 408);
* a client that writes its whole request (a body or headers over the limit) before reading
  gets the whole 413 or 431 answer and then a clean end of stream, not a reset: the server
  closes in stages (its FIN after the answer, then it reads and drops the rest).
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Any

import pytest

pytestmark = pytest.mark.slow

BIG = 8 * 1024 * 1024  # far beyond the socket buffers on both sides, so the server must read


def _write_then_read(
    port: int, request: bytes, *, pause_after: int = 0, pause: float = 0.0
) -> tuple[bytes, list[str]]:
    """Write the whole request (in a thread, as a client that reads only afterwards; with a
    `pause` after its first `pause_after` bytes), then read until the server closes. Returns
    what was read and any socket error on either side."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    errors: list[str] = []

    def write() -> None:
        try:
            sock.sendall(request[:pause_after])
            time.sleep(pause)
            sock.sendall(request[pause_after:])
        except OSError as exc:
            errors.append(f"write: {exc!r}")

    writer = threading.Thread(target=write)
    writer.start()
    writer.join(30)
    assert not writer.is_alive(), "the server never read the request"
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except OSError as exc:
        errors.append(f"read: {exc!r}")
    finally:
        sock.close()
    return b"".join(chunks), errors


def _problem(answer: bytes) -> dict[str, Any]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"application/problem+json" in head.lower(), head
    problem: dict[str, Any] = json.loads(body)
    return problem


def test_refusals_before_the_request_is_read_reach_the_client(swarm: Any) -> None:
    # A long body deadline: a declared-too-large body held for it would be answered 408.
    server = swarm(SWARM_BODY_TIMEOUT="60").start()

    # Declared over the limit (16 KiB), nothing sent after the headers: 413 at once.
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    sock.sendall(
        b"POST /guests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000000\r\n\r\n"
    )
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    sock.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert _problem(answer)["code"] == "body-too-large"

    # The same, with the whole body written before reading.
    body = b'{"name": "' + b"a" * BIG + b'"}'
    answer, errors = _write_then_read(
        server.port,
        b"POST /guests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body,
    )
    assert not errors, errors
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert _problem(answer)["code"] == "body-too-large"

    # A chunked body (no length declared) that passes the limit while it is read.
    piece = b"a" * 65536
    chunked = (b"%x\r\n" % len(piece) + piece + b"\r\n") * (BIG // len(piece)) + b"0\r\n\r\n"
    answer, errors = _write_then_read(
        server.port,
        b"POST /guests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + chunked,
    )
    assert not errors, errors
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert _problem(answer)["code"] == "body-too-large"

    # Headers over their limit (16 KiB), written whole: 431, read in full.
    answer, errors = _write_then_read(
        server.port, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * BIG + b"\r\n\r\n"
    )
    assert not errors, errors
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    assert answer.endswith(b"Headers too large."), answer[-200:]

    # A body within the limit on a kept-alive connection is still answered as ever.
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    for _ in range(2):
        connection.request(
            "POST", "/guests", body=b'{"name": "Bo"}', headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        assert response.status == 201, response.read()
        assert "token" in json.loads(response.read())
    connection.close()
    assert "Traceback" not in server.log_text()


def test_a_header_written_with_a_pause_still_gets_its_431(swarm: Any) -> None:
    """Issue 44, item 14: a client writing a 32 MB header that pauses for 1.5 s on the way (as
    a process on a loaded machine is descheduled) still reads its whole 431 and a clean end, not
    a reset: the staged close waits for a quiet client as long as nginx does (5 s)."""
    server = swarm().start()
    header = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (32 * 1024 * 1024) + b"\r\n\r\n"
    # Past the 16 KiB limit after the first MiB: refused by then, while the rest is unsent.
    answer, errors = _write_then_read(server.port, header, pause_after=1024 * 1024, pause=1.5)
    assert not errors, errors
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    assert answer.endswith(b"Headers too large."), answer[-200:]
