"""The service's logs: every line one JSON object on stdout, structlog's and the standard
library's alike (uvicorn, asyncpg, the embedded PostgreSQL), so a log shipper reads one format.

`swarm serve` applies it before the app starts, and uvicorn in every worker process. The app
leaves the standard library's logging as the process set it: Litestar's structlog plugin would
replace it with its own, whose formatter cannot render a record's exception (asyncpg's "Failed
to restore the pool connection floor" while PostgreSQL shuts down was dropped, with a "Logging
error" traceback on stderr), and it gives structlog these same settings.
"""

from __future__ import annotations

import logging
import logging.config
from typing import Any

import structlog


def json_formatter() -> logging.Formatter:
    """The standard library's records rendered as the same JSON objects as structlog's own
    lines, a record's exception as its traceback text."""
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
        "formatters": {"json": {"()": "service.logs.json_formatter"}},
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
            # Litestar's own records go to the root's handler like every other library's.
            "litestar": {"handlers": [], "propagate": True},
        },
    }


def structlog_settings() -> dict[str, Any]:
    """structlog's own lines (`structlog.configure`'s arguments): the request's context, the
    level, the time, a traceback as text, one JSON object written with its newline in one
    write (two writes, as `print` makes them, let another thread's or worker's line in
    between)."""
    return {
        "processors": [
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        "logger_factory": structlog.WriteLoggerFactory(),
        "cache_logger_on_first_use": False,
    }


def configure_logging(level: str) -> None:
    """Both halves: the standard library's (`log_config`) and structlog's own lines."""
    logging.config.dictConfig(log_config(level))
    structlog.configure(**structlog_settings())
