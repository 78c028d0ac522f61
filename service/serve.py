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
import logging
import logging.config
import os
import tempfile
from typing import Any

import structlog
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service.settings import Settings

log = structlog.get_logger(__name__)


def _refusal(status: bytes, detail: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: " + str(len(detail)).encode() + b"\r\nconnection: close\r\n\r\n" + detail
    )


# A staged close (below) lasts until the client closes its side, at most LINGER_MAX seconds,
# and ends sooner once the client has sent nothing for LINGER_IDLE seconds.
LINGER_IDLE = 1.0
LINGER_MAX = 5.0


# Writes of one loop iteration are sent together (`_StagedClose.write`) up to this many bytes.
COALESCE_MAX = 64 * 1024


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
    """uvicorn's httptools protocol with a limit on header bytes, a header deadline and a
    staged close.

    The deadline runs from the connection (or the end of the previous response) to the end of
    the headers, so a client that trickles its headers, or sends none, is cut off; it does not
    run while a response (a long stream, say) is being sent. uvicorn builds protocols itself,
    so the limits ride on its config (which worker processes receive pickled).

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
        self._lingering = False
        self._lost = False
        self._linger_timer: asyncio.TimerHandle | None = None
        self._linger_last = self._linger_end = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._real_transport = transport
        self.transport = _StagedClose(transport, self)  # type: ignore[assignment]
        self._await_headers()

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
        if now >= self._linger_end or now - self._linger_last >= LINGER_IDLE:
            self._linger_timer = None
            self._real_transport.close()
            return
        wake = min(self._linger_end, self._linger_last + LINGER_IDLE)
        self._linger_timer = self.loop.call_at(wake, self._linger_check)

    def on_message_begin(self) -> None:
        self._mid_message = True
        super().on_message_begin()

    def on_message_complete(self) -> None:
        self._mid_message = False
        super().on_message_complete()
        if self.cycle.response_complete and not self.transport.is_closing():
            # Answered before its body was read whole: the headers' limits start again now.
            self._await_headers()

    def _await_headers(self) -> None:
        self._cancel_deadline()
        self._in_headers = True
        self._header_bytes = 0
        self._header_deadline = self.loop.call_later(self.header_timeout, self._too_slow)

    def _cancel_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _too_slow(self) -> None:
        self._header_deadline = None
        if self._in_headers and not self.transport.is_closing():
            self.transport.write(_refusal(b"408 Request Timeout", b"Headers too slow."))
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            self._linger_last = self.loop.time()
            return  # the rest of a request already answered: read and dropped
        if self._in_headers:
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

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self._mid_message:
            self._await_headers()


def json_formatter() -> logging.Formatter:
    """The standard library's records (uvicorn, asyncpg, the embedded PostgreSQL) rendered as
    the same JSON objects as structlog's own lines."""
    return structlog.stdlib.ProcessorFormatter(
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        foreign_pre_chain=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
        ],
    )


def log_config(level: str) -> dict[str, Any]:
    """For `logging.config.dictConfig`; uvicorn applies it in every worker process too."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "service.serve.json_formatter"}},
        "handlers": {
            "stdout": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stdout",
            }
        },
        "root": {"handlers": ["stdout"], "level": level},
        "loggers": {
            "uvicorn": {"handlers": [], "propagate": True},
            "uvicorn.error": {"handlers": [], "propagate": True},
            # The edge layer writes the one access line per request.
            "uvicorn.access": {"handlers": [], "propagate": False, "level": "CRITICAL"},
        },
    }


def configure_logging(level: str) -> None:
    """Every line as one JSON object on stdout, structlog's and the standard library's alike,
    so a log shipper reads one format."""
    logging.config.dictConfig(log_config(level))
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        logger_factory=structlog.PrintLoggerFactory(),
        cache_logger_on_first_use=False,
    )


def uvicorn_config(settings: Settings) -> uvicorn.Config:
    config = uvicorn.Config(
        "service.api.app:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        http=GuardedHttpToolsProtocol,
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


def _version() -> str:
    from service import __version__

    return __version__
