"""SIGKILL the service while it delivers a rated game's rating changes (issue 43: "rating
updates are idempotent and exactly-once across SIGKILLs, the money relay's guarantees").

A rated game's end commits, with the table's events, one outbox row per rated person
(`rate_game`); each is then delivered as a `rating_changed` on the person's record, and the row
deleted. The service is killed at the two places a crash can fall:

1. **Before a delivery**: the end has committed, a person's record is waited on, the
   service dies. Restarted, the relay delivers the change: late, but once.
2. **Between a delivery and its row's delete**: the change is on the record, the outbox row
   is not yet gone. Restarted, the relay delivers it again as a duplicate that changes
   nothing, and deletes the row.

After each restart every rated person has exactly one change for each game, and `swarm
ratings` recomputes every change from the log and finds the stored numbers.

Each crash is placed, not hoped for: row locks the test holds make the service wait at that
step (`pg_stat_activity` shows it waiting) before it is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from typing import Any

import httpx
import psycopg
import pytest

from tests.e2e.api_client import Api, play_online_to_the_end
from tests.faults.conftest import Service, summary
from tests.faults.test_money_sigkill import (
    account,
    end_orphaned_waits,
    service_waits_on_a_lock,
    wait_for,
)

pytestmark = [pytest.mark.fault, pytest.mark.slow]


def changes_of(conn: psycopg.Connection, people: list[str], game_id: str) -> dict[str, int]:
    """How many `rating_changed` each person's record holds for the game."""
    rows = conn.execute(
        "select stream, count(*) from events where type = 'rating_changed'"
        " and stream = any(%s) and data->>'game_id' = %s group by stream",
        ([f"player-{p}" for p in people], game_id),
    ).fetchall()
    found = {stream.removeprefix("player-"): n for stream, n in rows}
    return {p: found.get(p, 0) for p in people}


def outbox_rows(conn: psycopg.Connection, table_id: str) -> int:
    row = conn.execute(
        "select count(*) from money_outbox where table_id = %s", (table_id,)
    ).fetchone()
    assert row is not None
    return int(row[0])


def swarm_ratings(database_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service", "ratings"],
        env={**os.environ, "DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def rated_game(host: Api, guest: Api) -> tuple[str, str]:
    """A rated two-seat table filled by `host` and `guest`: its id and its first game's."""
    table = await host.create_table(seats=2, rated=True, turn_seconds=600)
    assert table["rated"] is True
    await guest.ok_table_action(table["table_id"], "seats")
    games = (await host.table(table["table_id"]))["games"]
    assert games, "a full table deals its first game"
    return table["table_id"], games[-1]


def test_rating_changes_land_once_when_the_service_dies_delivering_them(
    database_url: str, service_factory: Any
) -> None:
    service: Service = service_factory(database_url, SWARM_ACCOUNTS_PER_HOUR="0")
    service.start()
    observed: dict[str, Any] = {}

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=service.url, timeout=30) as client:
            (ann, ann_id), (ben, ben_id) = [await account(client, n) for n in ("Ann", "Ben")]
            people = [ann_id, ben_id]

            # A first rated game, undisturbed: it gives both people a record row to lock.
            _, first = await rated_game(ann, ben)
            await play_online_to_the_end({1: ann, 2: ben}, first)
            with psycopg.connect(database_url, autocommit=True) as watch:
                await asyncio.to_thread(
                    wait_for,
                    "the first game's changes",
                    lambda: changes_of(watch, people, first) == {ann_id: 1, ben_id: 1},
                )

                # 1. The second game's end commits; delivering Ann's change waits on her
                # record row, and the service dies there.
                t2, second = await rated_game(ann, ben)
                with psycopg.connect(database_url) as lock:
                    lock.execute(
                        "select 1 from player_stats where player_id = %s for update", (ann_id,)
                    )
                    end = asyncio.ensure_future(play_online_to_the_end({1: ann, 2: ben}, second))
                    await asyncio.to_thread(
                        wait_for,
                        "Ann's delivery to wait",
                        lambda: service_waits_on_a_lock(watch, "player_stats"),
                        60,
                    )
                    service.kill()
                    end_orphaned_waits(watch)
                    with contextlib.suppress(httpx.HTTPError, AssertionError):
                        await end
                    lock.rollback()
                killed = changes_of(watch, people, second)
                assert killed[ann_id] == 0, killed  # the crash fell before her change
                assert outbox_rows(watch, t2) > 0  # and it is owed, in the table's outbox
                observed["owed_after_kill_1"] = outbox_rows(watch, t2)

                service.start()
                await asyncio.to_thread(
                    wait_for, "the relay", lambda: outbox_rows(watch, t2) == 0, 60
                )
                assert changes_of(watch, people, second) == {ann_id: 1, ben_id: 1}

                # 2. A third game: Ann's change commits while the test holds the table's
                # outbox rows, so the delete after it waits, and the service dies there.
                t3, third = await rated_game(ann, ben)
                with (
                    psycopg.connect(database_url) as hold_record,
                    psycopg.connect(database_url) as hold_outbox,
                ):
                    hold_record.execute(
                        "select 1 from player_stats where player_id = %s for update", (ann_id,)
                    )
                    end = asyncio.ensure_future(play_online_to_the_end({1: ann, 2: ben}, third))
                    await asyncio.to_thread(
                        wait_for,
                        "Ann's delivery to wait",
                        lambda: service_waits_on_a_lock(watch, "player_stats"),
                        60,
                    )
                    # The end has committed its outbox rows; hold them, then let the
                    # delivery through: its delete waits.
                    locked = hold_outbox.execute(
                        "select transfer_id from money_outbox where table_id = %s for update",
                        (t3,),
                    ).fetchall()
                    assert locked
                    hold_record.rollback()
                    await asyncio.to_thread(
                        wait_for,
                        "the outbox delete to wait",
                        lambda: service_waits_on_a_lock(watch, "money_outbox"),
                    )
                    delivered = changes_of(watch, people, third)
                    assert delivered[ann_id] == 1, delivered  # on the record, row not deleted
                    service.kill()
                    end_orphaned_waits(watch)
                    with contextlib.suppress(httpx.HTTPError, AssertionError):
                        await end
                    hold_outbox.rollback()
                assert outbox_rows(watch, t3) > 0
                observed["owed_after_kill_2"] = outbox_rows(watch, t3)

                service.start()
                await asyncio.to_thread(
                    wait_for, "the relay", lambda: outbox_rows(watch, t3) == 0, 60
                )
                observed["changes"] = {
                    game: changes_of(watch, people, game) for game in (first, second, third)
                }

    try:
        asyncio.run(scenario())
    finally:
        service.kill()
    for game, counted in observed["changes"].items():
        assert set(counted.values()) == {1}, (game, counted)  # once each, never twice
    recomputed = swarm_ratings(database_url)
    assert recomputed.returncode == 0, recomputed.stdout + recomputed.stderr
    assert "every rating is the one the games give" in recomputed.stdout, recomputed.stdout
    summary(
        "ratings_sigkill",
        kills=2,
        owed_after_kills=(observed["owed_after_kill_1"], observed["owed_after_kill_2"]),
        changes_per_person_per_game=1,
        recomputed="0 mismatches",
    )
