"""`swarm serve`: the HTTP server (uvicorn, httptools parser) with the limits a public service
needs, one or several worker processes, JSON logs and a clean shutdown.

Why uvicorn: it is what the tests and benchmarks already run, it has a supervisor for several
workers on one socket, and its httptools protocol is small enough to add the two limits it
lacks: a cap on the size of the request line and headers (431) and a deadline to receive them
(408, connection closed). The other slow-client limits are in the app's edge layer
(service/api/edge.py): the body deadline and body-first admission to the in-flight limit.
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


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a limit on header bytes and a header deadline.

    The deadline runs from the connection (or the end of the previous response) to the end of
    the headers, so a client that trickles its headers, or sends none, is cut off; it does not
    run while a response (a long stream, say) is being sent. uvicorn builds protocols itself,
    so the limits ride on its config (which worker processes receive pickled).
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

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        super().connection_lost(exc)

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
        if not self.transport.is_closing():
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
