"""Sessions a database has open, besides the one asking (for tests that check a process closed
every connection it opened: `own_database`)."""

from __future__ import annotations

import psycopg


def open_sessions(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "select count(*) from pg_stat_activity "
            "where datname = current_database() and pid <> pg_backend_pid()"
        ).fetchone()
        assert row is not None
        return int(row[0])
