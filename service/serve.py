"""`swarm serve`: the HTTP server (uvicorn, httptools parser) with the limits a public service
needs, one or several worker processes, JSON logs and a clean shutdown.

Why uvicorn: it is what the tests and benchmarks already run, it has a supervisor for several
workers on one socket, and its httptools protocol is small enough to add the two limits it
lacks: a cap on the size of the request line and headers (431) and a deadline to receive them
(408, connection closed), and a staged close, so a refusal sent before the request was read
whole (431, 413) reaches a client that writes its whole request before it reads. The other
slow-client limits are in the app's edge layer (service/api/edge.py): the body deadline, 413 at
once for a declared body over the limit, and body-first admission.
"""

from __future__ import annotations

import asyncio
import gc
import os
import struct
import tempfile
from typing import Any

import structlog
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service.logs import configure_logging, log_config
from service.settings import Settings

log = structlog.get_logger(__name__)


def _refusal(status: bytes, detail: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: " + str(len(detail)).encode() + b"\r\nconnection: close\r\n\r\n" + detail
    )


# A staged close (below) lasts until the client closes its side, at most LINGER_MAX seconds,
# and ends sooner once the client has sent nothing for LINGER_IDLE seconds: nginx's defaults
# (lingering_timeout 5 s, lingering_time 30 s). At 1 s and 5 s, a client that paused for over
# a second while writing a 32 MB header (a process descheduled on a loaded machine) or wrote it
# slower than 6.4 MB/s met a reset instead of its 431 (issue 44, item 14).
LINGER_IDLE = 5.0
LINGER_MAX = 30.0


# Writes of one loop iteration are sent together (`_StagedClose.write`) up to this many bytes.
COALESCE_MAX = 64 * 1024

OPEN_FILES_MAX = 1 << 20  # the soft limit on open files `swarm serve` asks for, at most
# A timer (the keep-alive's, the header deadline) that finds a request's bytes waiting unread
# looks again this much later, once the loop has read them (`GuardedHttpToolsProtocol._waiting`).
LAG_GRACE = 1.0


def unread_bytes(transport: asyncio.BaseTransport) -> int:
    """The bytes the peer has sent that this process has not read yet (FIONREAD; 0 when it
    cannot say)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    try:
        import fcntl
        import termios

        answer = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
    except (ImportError, OSError, ValueError):
        return 0
    count: int = struct.unpack("i", answer)[0]
    return count


class _StagedClose:
    """The connection's transport as uvicorn sees it, with `close()` staged by the protocol
    (`GuardedHttpToolsProtocol._close`), and the writes of one loop iteration sent as one:
    uvicorn writes an answer's head and its body separately, two `send` system calls where one
    does (on loopback each also runs the receiver's TCP path; issue 28). They go out at the end
    of the iteration, or at once past `COALESCE_MAX` bytes, and always before a close or an
    EOF; everything else is the transport's own."""

    def __init__(self, transport: asyncio.Transport, protocol: GuardedHttpToolsProtocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._pending: list[bytes] | None = None
        self._size = 0

    def write(self, data: bytes) -> None:
        if self._pending is None:
            self._pending, self._size = [data], len(data)
            self._protocol.loop.call_soon(self.flush)
        else:
            self._pending.append(data)
            self._size += len(data)
        if self._size >= COALESCE_MAX:
            self.flush()

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        """Send what this iteration wrote (nothing if it was sent already)."""
        pending, self._pending = self._pending, None
        if pending and not self._transport.is_closing():
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._pending = None
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return (
            self._size + self._transport.get_write_buffer_size()
            if self._pending
            else (self._transport.get_write_buffer_size())
        )

    def close(self) -> None:
        self.flush()
        self._protocol._close()

    def is_closing(self) -> bool:
        return self._protocol._lingering or self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a limit on header bytes, a header deadline, a staged
    close, and no answer lost to a busy loop or a half-close.

    The deadline runs from the connection (or, on a connection kept alive, from the next
    request's first byte) to the end of the headers, so a client that trickles its headers, or
    opens a connection and sends none, is cut off; an idle connection between requests is the
    keep-alive timeout's to close, and the deadline does not run while a request is being
    answered (a long stream, say, or the next of pipelined requests). uvicorn builds protocols
    itself, so the limits ride on its config (which worker processes receive pickled).

    **A timer is not the client's word**: when the keep-alive timeout or the header deadline
    fires and a request's bytes are already waiting in the socket, unread, the client was not
    idle or slow: this process was (a loop behind its timers, a process short of CPU or
    stopped; the slow-database fault run showed it, issue 28). Closing then would reset the
    connection over a request that was sent in time, and the client would get no answer. So the
    timer looks again `LAG_GRACE` seconds later, after the loop has read them.

    **A half-close**: a client may end its side (`shutdown(SHUT_WR)`) once its request is sent.
    uvicorn then closed the connection at once and the answer, even to a move already applied,
    was lost; here a request read whole is still answered, and the connection closed after it.

    **Staged close**: closing a socket whose request is still arriving makes the kernel reset
    the connection, and a client that writes its whole request before reading (most do) then
    gets the reset instead of the answer (a 431, a 413). So when the server closes in the
    middle of a request, it sends the answer, then its FIN (`write_eof`), and reads and
    discards what the client still sends until the client closes, goes quiet for
    `LINGER_IDLE` seconds, or `LINGER_MAX` seconds have passed (nginx's `lingering_close`).
    A close between requests (keep-alive timeout, shutdown) is immediate.
    """

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        defaults = Settings()
        limits: tuple[int, float] = getattr(config, "swarm_header_limits", None) or (
            defaults.max_header_bytes,
            defaults.header_timeout,
        )
        self.max_header_bytes, self.header_timeout = limits
        self._header_bytes = 0
        self._in_headers = True
        self._header_deadline: asyncio.TimerHandle | None = None
        self._mid_message = False  # bytes of a request received, its end not yet
        self._held = b""  # the next request's bytes, sent before this answer went out
        self._peer_done = False  # the client ended its side (a half-close)
        self._lingering = False
        self._lost = False
        self._linger_timer: asyncio.TimerHandle | None = None
        self._linger_last = self._linger_end = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._real_transport = transport
        self.transport = _StagedClose(transport, self)  # type: ignore[assignment]
        self._await_headers()

    def eof_received(self) -> bool | None:  # type: ignore[override]
        """The client ended its side. What this iteration wrote goes out first; requests read
        whole whose answers have not begun are still answered, then the connection closes
        (True keeps it open for them). Otherwise it closes now, as uvicorn's does: an answer
        already going out (a stream) to a client that left, or a body that can never end."""
        self.transport.flush()  # type: ignore[attr-defined]
        waiting = bool(self.pipeline or self._held) or (
            self.cycle is not None and not self.cycle.response_started
        )
        if self._lingering or not waiting or (self._mid_message and not self._in_headers):
            return None
        self._peer_done = True
        self._cancel_deadline()
        self._unset_keepalive_if_required()
        return True

    def _waiting(self) -> bool:
        """A request's bytes wait unread: the loop is behind, not the client (see above)."""
        return not self.transport.is_closing() and unread_bytes(self._real_transport) > 0

    def timeout_keep_alive_handler(self) -> None:
        if self._waiting():
            self.timeout_keep_alive_task = self.loop.call_later(
                LAG_GRACE, self.timeout_keep_alive_handler
            )
            return
        super().timeout_keep_alive_handler()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._cancel_deadline()
        if self._linger_timer is not None:
            self._linger_timer.cancel()
        super().connection_lost(exc)

    def _close(self) -> None:
        real = self._real_transport
        if self._lingering:
            return
        if self._lost or not self._mid_message or real.is_closing() or not real.can_write_eof():
            real.close()
            return
        self._lingering = True
        self._cancel_deadline()
        real.write_eof()  # the answer, then FIN, once the write buffer has drained
        self.flow.resume_reading()
        self._linger_last = self.loop.time()
        self._linger_end = self._linger_last + LINGER_MAX
        self._linger_timer = self.loop.call_later(LINGER_IDLE, self._linger_check)

    def _linger_check(self) -> None:
        now = self.loop.time()
        if unread_bytes(self._real_transport) > 0:  # the client sends; the loop is behind
            self._linger_last = now
        if now >= self._linger_end or now - self._linger_last >= LINGER_IDLE:
            self._linger_timer = None
            self._real_transport.close()
            return
        wake = min(self._linger_end, self._linger_last + LINGER_IDLE)
        self._linger_timer = self.loop.call_at(wake, self._linger_check)

    def on_message_begin(self) -> None:
        self._mid_message = True
        if not self._in_headers:  # a request begins in the chunk that ended the one before
            self._in_headers = True
            self._header_bytes = 0
        super().on_message_begin()

    def on_message_complete(self) -> None:
        self._mid_message = False
        super().on_message_complete()
        if self.cycle.response_complete and not self.transport.is_closing():
            # Answered before its body was read whole: the headers' limits start again now.
            self._await_headers()

    def _answering(self) -> bool:
        """A request is being answered, or read and waiting its turn (pipelined)."""
        return bool(self.pipeline) or (self.cycle is not None and not self.cycle.response_complete)

    def _await_headers(self, *, idle: bool = False) -> None:
        """The next bytes are a request's headers: their deadline runs from now, or, on an
        `idle` connection between requests, from their first byte (`data_received`): until
        then the keep-alive timeout is what closes it, not a 408 to a request never sent."""
        self._in_headers = True
        self._header_bytes = 0
        if idle:
            self._cancel_deadline()
        else:
            self._start_deadline()

    def _start_deadline(self) -> None:
        self._cancel_deadline()
        self._header_deadline = self.loop.call_later(self.header_timeout, self._too_slow)

    def _cancel_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _too_slow(self) -> None:
        self._header_deadline = None
        if not self._in_headers or self.transport.is_closing():
            return
        if self._waiting():
            self._header_deadline = self.loop.call_later(LAG_GRACE, self._too_slow)
            return
        self.transport.write(_refusal(b"408 Request Timeout", b"Headers too slow."))
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            self._linger_last = self.loop.time()
            return  # the rest of a request already answered: read and dropped
        if self._answering() and (self._in_headers or not self._mid_message):
            # The next request, sent before this answer went out (pipelining): read once it
            # has, so nothing it does (a 431, a 408, a 400) can land in the middle of the
            # answer, and its headers count against the limit as any request's do.
            self._held += data
            self.flow.pause_reading()
            return
        if self._in_headers:
            if self._header_deadline is None:
                self._start_deadline()  # the first byte of the next request on this connection
            room = self.max_header_bytes - self._header_bytes
            if len(data) > room:
                # Feed what fits: if the headers end inside it, the rest is body (or the next
                # request) and goes on as usual; if not, the headers are too large.
                self._header_bytes = self.max_header_bytes
                super().data_received(data[:room])
                if self.transport.is_closing():
                    return
                if self._in_headers:
                    self.transport.write(
                        _refusal(b"431 Request Header Fields Too Large", b"Headers too large.")
                    )
                    self.transport.close()
                    return
                data = data[room:]
                if not data:
                    return
            else:
                self._header_bytes += len(data)
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._in_headers = False
        self._cancel_deadline()
        super().on_headers_complete()
        # How the app's edge drops a client that stopped reading a long answer (a stream,
        # an export): abort, so the bytes buffered for it go too (a close would wait for them
        # to be sent, for ever). service/api/edge.py, `Edge._read_by_client`.
        self.scope["swarm.abort"] = self.transport.abort  # type: ignore[typeddict-unknown-key]

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The header deadline waits for the answers of pipelined requests already read (it
        # used to start at the first answer, and could answer 408 over the next, running).
        if self.transport.is_closing() or self._answering():
            return
        if not self._mid_message:
            self._await_headers(idle=True)  # between requests
        elif self._in_headers:
            self._start_deadline()  # the next request's headers have begun
        # (else this request's body is still arriving: on_message_complete starts it)
        held, self._held = self._held, b""
        if held:
            self.data_received(held)
        elif self._peer_done:
            self.transport.close()  # the client half-closed: every answer has gone out


# The garbage collector's thresholds while serving (`settle_heap`): Python's defaults
# (700, 10, 10) run a collection of the youngest objects every 700 allocations, and a full one
# whenever the heap has grown by a quarter, which on a busy process was every 15-30 s.
GC_THRESHOLDS = (7000, 10, 100)


def settle_heap() -> None:
    """Once the app has started: collect, then freeze what is alive (the app, its routes, the
    OpenAPI document, every module: about 130,000 objects that live as long as the process) so
    that no collection traverses them again, and collect less often (`GC_THRESHOLDS`).

    Measured at 800 online games on the 2-core machine (issue 28, docs/benchmarks-history.md):
    a full collection stopped the event loop for 100-250 ms of CPU (0.2-0.95 s of wall time on a
    share of a core) every 15-30 s, and every request in flight and every refusal waited for it;
    the younger collections took 4-7 % of the time. After: no full collection in a 20-s
    window, 204-271 → 320-325 answered moves a second. A cycle among frozen objects is never
    collected: they are the app's own, alive until the process ends."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def serving_app() -> Any:
    """The app `swarm serve` runs (uvicorn's factory, in every worker): `create_app` with the
    heap settled once it has started (`settle_heap`). Tests build apps with `create_app` and
    keep Python's collector as it is."""
    from service.api.app import create_app

    app = create_app()
    app.on_startup.append(settle_heap)
    return app


def uvicorn_config(settings: Settings) -> uvicorn.Config:
    config = uvicorn.Config(
        "service.serve:serving_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        http=GuardedHttpToolsProtocol,
        # asyncio's loop, not uvloop: libuv accepts one connection per loop iteration (since
        # 1.45, libuv#3696), so on a busy process new connections waited seconds in the
        # kernel's accept queue (the first request on one: p50 1.7 s, p99 4.4 s at 800 games,
        # where one on an open connection took 37 ms); asyncio's accepts all that are waiting
        # at each wake-up (docs/benchmarks-history.md, "Past capacity, fifth pass").
        loop="asyncio",
        lifespan="on",
        access_log=False,
        log_config=log_config(settings.log_level),
        log_level=settings.log_level.lower(),
        timeout_keep_alive=int(max(1, settings.keep_alive_timeout)),
        # Streams are ended at the signal (service/api/edge.py); this bounds the rest.
        timeout_graceful_shutdown=max(1, int(settings.shutdown_timeout) - 2),
        proxy_headers=True,
        forwarded_allow_ips=settings.forwarded_allow_ips,
        server_header=False,
    )
    config.swarm_header_limits = (settings.max_header_bytes, settings.header_timeout)  # type: ignore[attr-defined]
    return config


def serve_http(settings: Settings) -> int:
    """Serve until SIGTERM or SIGINT. The caller has set DATABASE_URL (worker processes read
    their settings from the environment, once each)."""
    configure_logging(settings.log_level)
    config = uvicorn_config(settings)
    log.info(
        "serving",
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        version=_version(),
        open_files=raise_open_files_limit(),
    )
    if settings.workers == 1:
        uvicorn.Server(config).run()
        return 0
    # Several workers share one socket; /metrics adds up all of them through files here.
    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="swarm-metrics-"))
    from uvicorn.supervisors import Multiprocess

    sock = config.bind_socket()
    Multiprocess(config, sockets=[sock]).run()
    return 0


def raise_open_files_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit (workers inherit it):
    every connection kept alive is a file, and at a person's pace most of a table's players
    hold one between moves (`keep_alive_timeout`), where a common soft limit is 1,024. The
    limit now."""
    try:
        import resource
    except ImportError:  # not on this platform
        return -1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = OPEN_FILES_MAX if hard == resource.RLIM_INFINITY else min(hard, OPEN_FILES_MAX)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass  # not allowed here: the limit stays as the system set it
    return int(soft)


def _version() -> str:
    from service import __version__

    return __version__
