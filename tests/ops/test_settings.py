"""The settings object: read once, typed, validated with one clear message, documented in one
README table whose defaults are the code's."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from service.settings import ENV, Settings, SettingsError, parse_value

README = Path(__file__).resolve().parents[2] / "README.md"


def test_defaults_without_environment() -> None:
    settings = Settings.from_env({})
    assert settings == Settings()
    assert settings.host == "127.0.0.1" and settings.port == 8000
    assert settings.database_url is None


def test_every_field_is_read_from_its_variable() -> None:
    env = {
        "DATABASE_URL": "postgresql://u@db/swarm",
        "SWARM_HOST": "0.0.0.0",
        "SWARM_PORT": "9000",
        "SWARM_WORKERS": "4",
        "SWARM_POOL_SIZE": "20",
        "SWARM_DB_ACQUIRE_TIMEOUT": "1.5",
        "SWARM_RATE_LIMIT": "0",
        "SWARM_RUN_CLOCK": "off",
        "SWARM_LOG_LEVEL": "debug",
        "SWARM_DB_STATEMENT_TIMEOUT": "500ms",
    }
    settings = Settings.from_env(env)
    assert settings.database_url == "postgresql://u@db/swarm"
    assert (settings.host, settings.port, settings.workers) == ("0.0.0.0", 9000, 4)
    assert settings.pool_size == 20 and settings.db_acquire_timeout == 1.5
    assert settings.rate_limit == 0 and settings.run_clock is False
    assert settings.log_level == "DEBUG"
    assert settings.server_settings["statement_timeout"] == "500ms"


def test_command_line_overrides_win() -> None:
    settings = Settings.from_env({"SWARM_PORT": "9000"}, port=9100, host=None)
    assert settings.port == 9100 and settings.host == "127.0.0.1"


def test_all_problems_in_one_clear_message() -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(
            {
                "SWARM_PORT": "eighty",
                "SWARM_POOL_SIZE": "0",
                "SWARM_DB_LOCK_TIMEOUT": "soon",
                "SWARM_TRACING": "jaeger",
                "DATABASE_URL": "mysql://x",
            }
        )
    message = str(caught.value)
    assert "SWARM_PORT='eighty': expected a whole number" in message
    assert "SWARM_POOL_SIZE=0: 1-1000 connections" in message
    assert "SWARM_DB_LOCK_TIMEOUT='soon'" in message
    assert "SWARM_TRACING='jaeger': one of off, otlp, console" in message
    assert "DATABASE_URL='mysql://x': a postgresql:// URL" in message


def test_a_bad_setting_stops_swarm_serve_with_the_message() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "service", "serve"],
        env={"SWARM_PORT": "99999", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "SWARM_PORT=99999: a TCP port, 1-65535" in result.stderr
    assert "Traceback" not in result.stderr


def _readme_table() -> dict[str, tuple[str, str]]:
    """variable → (field, default) from the README's configuration table."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1].strip("`"), cells[2])
    return rows


def test_the_readme_table_lists_every_setting_with_its_default() -> None:
    rows = _readme_table()
    defaults = Settings()
    for field in fields(Settings):
        variable = ENV[field.name]
        assert variable in rows, f"{variable} is missing from the README's configuration table"
        name, cell = rows[variable]
        assert name == field.name
        default = getattr(defaults, field.name)
        shown = re.sub(r"`([^`]*)`.*", r"\1", cell).strip() if "`" in cell else cell.split()[0]
        if default is None:
            assert cell.startswith("unset"), (variable, cell)
        else:
            assert parse_value(field.name, shown.replace(",", "")) == default, (variable, cell)
    assert len(rows) == len(fields(Settings))


def test_an_unreachable_database_is_one_line_not_a_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "service", "migrate"],
        env={"DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("swarm: connection failed")
    assert "Traceback" not in result.stderr
