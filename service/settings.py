"""Every knob of the service, in one typed object read once at start-up.

`Settings.from_env()` reads the environment (variables named in `ENV`), checks every value and
raises `SettingsError` naming each bad variable, what it holds and what it should hold, so a
typo stops the process at start-up with one clear message instead of a traceback mid-request.
The README's configuration table lists the same fields with their defaults; a test checks the
two agree.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

_DURATION = re.compile(r"^\d+(ms|s|min|h)?$")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
TRACING = ("off", "otlp", "console")


class SettingsError(ValueError):
    """One or more settings are invalid; the message lists each with what was expected."""


@dataclass(frozen=True, slots=True)
class Settings:
    # -- where --------------------------------------------------------------------------------
    database_url: str | None = None  # unset: `swarm serve` starts an embedded PostgreSQL
    data_dir: Path = Path(".pgdata")  # the embedded PostgreSQL's data (only without a URL)
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1  # processes on this host, each with its own pool, clock and listener
    # -- the database: every wait bounded -----------------------------------------------------
    pool_size: int = 10
    db_acquire_timeout: float = 3.0
    db_connect_timeout: float = 5.0
    db_command_timeout: float = 10.0
    db_statement_timeout: str = "10s"
    db_lock_timeout: str = "5s"
    db_idle_tx_timeout: str = "30s"
    # -- work admitted ------------------------------------------------------------------------
    # Requests being handled at once (streams apart), counted once read; past it a short queue
    # shed by its delay, moves first (service/api/admission.py).
    max_in_flight: int = 16
    # seconds the event loop may run late before fewer requests are admitted at once; 0: off
    max_loop_lag: float = 0.025
    max_streams: int = 10_000
    max_exports: int = 4  # players' games in bulk being sent at once (streams apart)
    max_body_bytes: int = 16 * 1024
    rate_limit: int = 200  # requests a second per bearer token (or address); 0: off
    guests_per_hour: int = 30  # new guests per client address in any hour; 0: off
    accounts_per_hour: int = 5  # new accounts per client address in any hour; 0: off
    # expert decisions made for one player's analyses in an hour, per process (kept answers
    # free; a client address: 10 players' worth); 0: off
    analyses_per_hour: int = 240
    # -- slow clients -------------------------------------------------------------------------
    max_header_bytes: int = 16 * 1024  # request line and headers together
    header_timeout: float = 10.0  # to receive the request line and all headers
    body_timeout: float = 10.0  # to receive the whole body once the headers are in
    # a stream or an export whose client takes none of its bytes for this long is dropped
    send_timeout: float = 30.0
    # idle time between requests on one connection: longer than a player's wait between two
    # moves, so a person's client keeps its connection (a new one costs the server far more)
    keep_alive_timeout: float = 75.0
    # -- lifecycle ----------------------------------------------------------------------------
    shutdown_timeout: float = 5.0  # SIGTERM to exit, streams ended and requests finished
    stream_heartbeat: float = 15.0
    run_clock: bool = True  # fire turn timers (and relay coins left in the outbox) here
    hold_expiry: float = 60.0  # a buy-in held by a sit-down that never finished goes back
    # -- observing ----------------------------------------------------------------------------
    log_level: str = "INFO"
    metrics: bool = True  # serve /metrics
    tracing: str = "off"  # off | otlp (OTEL_EXPORTER_OTLP_* variables) | console
    forwarded_allow_ips: str = "127.0.0.1"  # proxies whose X-Forwarded-For is believed
    # -- browsers -----------------------------------------------------------------------------
    cors_origins: str | None = None  # comma-separated origins whose pages may call the API

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read `environ` (default: the process environment); `overrides` win (command line)."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        problems: list[str] = []
        for field in fields(cls):
            variable = ENV[field.name]
            raw = env.get(variable)
            if raw is None or raw == "":
                continue
            try:
                values[field.name] = parse_value(field.name, raw.strip())
            except ValueError as exc:
                problems.append(f"{variable}={raw!r}: {exc}")
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        problems += settings.problems()
        if problems:
            raise SettingsError("invalid configuration:\n  " + "\n  ".join(problems))
        return settings

    def problems(self) -> list[str]:
        found: list[str] = []

        def need(ok: bool, name: str, what: str) -> None:
            if not ok:
                found.append(f"{ENV[name]}={getattr(self, name)!r}: {what}")

        need(1 <= self.port <= 65535, "port", "a TCP port, 1-65535")
        need(1 <= self.workers <= 64, "workers", "1-64 processes")
        need(1 <= self.pool_size <= 1000, "pool_size", "1-1000 connections")
        for name in (
            "max_in_flight",
            "max_streams",
            "max_exports",
            "max_body_bytes",
            "max_header_bytes",
        ):
            need(getattr(self, name) >= 1, name, "a whole number, at least 1")
        need(self.max_header_bytes >= 1024, "max_header_bytes", "at least 1024 bytes")
        need(self.rate_limit >= 0, "rate_limit", "0 (off) or more requests a second")
        need(self.analyses_per_hour >= 0, "analyses_per_hour", "0 (off) or more decisions")
        need(0 <= self.max_loop_lag <= 10, "max_loop_lag", "0 (off) to 10 seconds")
        for name in (
            "db_acquire_timeout",
            "db_connect_timeout",
            "db_command_timeout",
            "header_timeout",
            "body_timeout",
            "send_timeout",
            "keep_alive_timeout",
            "shutdown_timeout",
            "stream_heartbeat",
            "hold_expiry",
        ):
            need(getattr(self, name) > 0, name, "seconds, more than 0")
        for name in ("db_statement_timeout", "db_lock_timeout", "db_idle_tx_timeout"):
            need(bool(_DURATION.match(getattr(self, name))), name, "a duration like 10s or 500ms")
        need(self.log_level in LOG_LEVELS, "log_level", "one of " + ", ".join(LOG_LEVELS))
        need(self.tracing in TRACING, "tracing", "one of " + ", ".join(TRACING))
        if self.database_url is not None:
            need(
                self.database_url.startswith(("postgresql://", "postgres://")),
                "database_url",
                "a postgresql:// URL",
            )
        for item in self.forwarded_allow_ips.split(","):
            item = item.strip()
            if item != "*":
                try:
                    ipaddress.ip_network(item, strict=False)
                except ValueError:
                    found.append(f"{ENV['forwarded_allow_ips']}: {item!r} is not an address")
        for origin in self.cors_origin_list:
            if not re.fullmatch(r"https?://[^/\s]+", origin):
                found.append(
                    f"{ENV['cors_origins']}: {origin!r} is not an origin like https://host[:port]"
                )
        return found

    @property
    def cors_origin_list(self) -> list[str]:
        raw = self.cors_origins or ""
        return [o.strip().rstrip("/") for o in raw.split(",") if o.strip()]

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    @property
    def server_settings(self) -> dict[str, str]:
        """PostgreSQL session settings: the server itself gives up on a slow statement, a
        lock wait (the append lock too) or an idle transaction, even if the client is gone."""
        return {
            "statement_timeout": self.db_statement_timeout,
            "lock_timeout": self.db_lock_timeout,
            "idle_in_transaction_session_timeout": self.db_idle_tx_timeout,
        }


# The environment variable of each field. DATABASE_URL keeps its usual name.
ENV: dict[str, str] = {
    f.name: "DATABASE_URL" if f.name == "database_url" else "SWARM_" + f.name.upper()
    for f in fields(Settings)
}
# Old names kept working (docs/scaling.md used them before the settings object).
ENV["rate_limit"] = "SWARM_RATE_LIMIT"


def parse_value(name: str, raw: str) -> Any:
    kind = {f.name: f.type for f in fields(Settings)}[name]
    if kind == "int":
        if not re.fullmatch(r"-?\d+", raw.replace("_", "")):
            raise ValueError("expected a whole number")
        return int(raw.replace("_", ""))
    if kind == "float":
        try:
            return float(raw)
        except ValueError:
            raise ValueError("expected a number of seconds") from None
    if kind == "bool":
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected on/off (1/0, true/false)")
    if kind == "Path":
        return Path(raw)
    if name in ("log_level",):
        return raw.upper()
    return raw
