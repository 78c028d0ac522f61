"""SIGKILL the service between the steps of a buy-in (docs/scaling.md, "Buy-ins across
shards"): no transaction writes both a table and a wallet, so a crash can fall between them.
Coins must add up at every moment, counting what is in flight (`tests/coins.py`), and the
service started again must finish what was cut short:

1. **Between the table and the wallet**: the table's deal put the stakes in the pot and its
   outbox holds the wallets' `commit_stake`, and the service dies delivering them. Restarted,
   the relay delivers them once.
2. **Between the wallet and the table**: a wallet held the stake for a sit-down, and the
   service dies before the table seats the person. Restarted, the sweeper gives the hold back
   (after `SWARM_HOLD_EXPIRY`), and the table never seats them.
3. **At the end of the game**: the pot is settled and the service dies delivering the
   payouts and rewards. Restarted, the relay pays them once.

Each crash is placed, not hoped for: a row lock the test holds in PostgreSQL makes the service
wait at exactly that step (`pg_stat_activity` shows it waiting) before it is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import psycopg
import pytest

from tests.coins import count, tables, wallets
from tests.e2e.api_client import Api, play_online_to_the_end
from tests.faults.conftest import Service, summary

pytestmark = [pytest.mark.fault, pytest.mark.slow]

STAKE = 10


def wait_for(what: str, check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def service_waits_on_a_lock(conn: psycopg.Connection, table: str) -> bool:
    """Some session of the service is waiting for a row lock while writing `table`."""
    row = conn.execute(
        "select count(*) from pg_stat_activity"
        " where wait_event_type = 'Lock' and query ilike %s and pid <> pg_backend_pid()"
        " and datname = current_database()",
        (f"%{table}%",),
    ).fetchone()
    return row is not None and row[0] > 0


def end_orphaned_waits(conn: psycopg.Connection) -> None:
    """After the kill: a statement the dead service had sent still waits for the test's lock,
    and would commit once it is released, as if the crash had come after it. Ending those
    sessions places the crash before it, where this test wants it."""
    conn.execute(
        "select pg_terminate_backend(pid) from pg_stat_activity"
        " where wait_event_type = 'Lock' and pid <> pg_backend_pid()"
        " and datname = current_database()"
    )


async def account(client: httpx.AsyncClient, name: str) -> tuple[Api, str]:
    r = await client.post(
        "/accounts", json={"name": f"{name}{uuid.uuid4().hex[:8]}", "password": "correct horse"}
    )
    assert r.status_code == 201, r.text
    body = r.json()
    me = await client.get("/me", headers={"Authorization": f"Bearer {body['token']}"})
    assert me.status_code == 200, me.text
    return Api(client, body["token"]), me.json()["player_id"]  # type: ignore[arg-type]


async def cut_short(request: Any) -> None:
    """A request the kill interrupts: its answer, if any, does not matter."""
    with contextlib.suppress(httpx.HTTPError):
        await request


def test_coins_add_up_when_the_service_dies_between_the_steps(
    database_url: str, service_factory: Any
) -> None:
    service: Service = service_factory(
        database_url, SWARM_HOLD_EXPIRY="1", SWARM_ACCOUNTS_PER_HOUR="0"
    )
    service.start()
    observed: dict[str, Any] = {}

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=service.url, timeout=30) as client:
            (ann, ann_id), (ben, ben_id), (cy, cy_id) = [
                await account(client, n) for n in ("Ann", "Ben", "Cy")
            ]
            people = [ann_id, ben_id, cy_id]
            t1 = (await ann.create_table(seats=2, stake=STAKE, turn_seconds=600))["table_id"]
            t2 = (await ann.create_table(seats=3, stake=STAKE, turn_seconds=600))["table_id"]
            table_ids = [t1, t2]
            observed["ids"] = (people, table_ids)

            with psycopg.connect(database_url, autocommit=True) as watch:

                def check(step: str) -> None:
                    counted = count(watch, people, table_ids)
                    events = watch.execute(
                        "select stream, type, data::text from events where stream = any(%s)"
                        " order by position",
                        ([f"wallet-{p}" for p in people],),
                    ).fetchall()
                    assert counted.conserved, (step, counted, events)
                    observed.setdefault("counts", []).append((step, counted))

                check("two tables open")

                # 1. The deal commits the pot; delivering Ann's commit_stake waits on her
                # wallet row, and the service dies there.
                with psycopg.connect(database_url) as lock:
                    lock.execute("select 1 from wallets where player_id = %s for update", (ann_id,))
                    join = asyncio.ensure_future(ben.table_action(t1, "seats"))
                    await asyncio.to_thread(
                        wait_for,
                        "the delivery to wait",
                        lambda: service_waits_on_a_lock(watch, "wallets"),
                    )
                    service.kill()
                    end_orphaned_waits(watch)
                    await cut_short(join)
                    lock.rollback()
                after_kill = count(watch, people, table_ids)
                assert after_kill.committed_in_flight > 0, after_kill  # the crash fell between
                check("killed delivering the stakes into the pot")

                # 2. Cy's wallet holds the stake for t2, and the table's append waits on its
                # lobby row: the service dies between the hold and the seat.
                service.start()
                with psycopg.connect(database_url) as lock:
                    lock.execute("select 1 from lobby where table_id = %s for update", (t2,))
                    join = asyncio.ensure_future(cy.table_action(t2, "seats"))
                    await asyncio.to_thread(
                        wait_for,
                        "the seat to wait",
                        lambda: service_waits_on_a_lock(watch, "lobby"),
                    )
                    service.kill()
                    end_orphaned_waits(watch)
                    await cut_short(join)
                    lock.rollback()
                assert wallets(watch, [cy_id])[cy_id].held == STAKE  # held, not seated
                assert tables(watch, [t2])[t2].seat_of(cy_id) is None
                check("killed between Cy's hold and her seat")

                # Restarted: the relay finishes the pot, the sweeper gives Cy's hold back.
                service.start()
                await asyncio.to_thread(
                    wait_for,
                    "the relay and the sweeper",
                    lambda: (
                        count(watch, people, table_ids).outbox_rows == 0
                        and wallets(watch, [cy_id])[cy_id].held == 0
                        and wallets(watch, [ann_id])[ann_id].held == STAKE
                    ),  # Ann's hold for t2
                )
                check("restarted: the pot delivered, Cy's hold back")
                held = wallets(watch, people)
                assert held[ben_id].held == 0 and held[ben_id].balance == 1000 - STAKE
                assert held[cy_id].balance == 1000
                assert tables(watch, [t1])[t1].pot  # the pot holds both stakes

                # 3. The game is played out; the end's payouts wait on both wallet rows.
                game_id = (await ann.table(t1))["games"][-1]
                with psycopg.connect(database_url) as lock:
                    lock.execute(
                        "select 1 from wallets where player_id = any(%s) for update",
                        ([ann_id, ben_id],),
                    )
                    end = asyncio.ensure_future(play_online_to_the_end({1: ann, 2: ben}, game_id))
                    await asyncio.to_thread(
                        wait_for,
                        "the payouts to wait",
                        lambda: service_waits_on_a_lock(watch, "wallets"),
                        60,
                    )
                    service.kill()
                    end_orphaned_waits(watch)
                    with contextlib.suppress(httpx.HTTPError, AssertionError):
                        await end
                    lock.rollback()
                ending = count(watch, people, table_ids)
                assert ending.paid_in_flight == 2 * STAKE, ending  # settled, not yet paid
                check("killed paying the pot")

                service.start()
                await asyncio.to_thread(
                    wait_for,
                    "the payouts",
                    lambda: count(watch, people, table_ids).outbox_rows == 0,
                )
                check("restarted: the pot paid")
                final = wallets(watch, people)
                # Each coin of the pot is paid once; the finishers' rewards are granted once.
                paid = watch.execute(
                    "select count(*), sum((data->>'amount')::int) from events"
                    " where type = 'pot_paid' and stream = any(%s)",
                    ([f"wallet-{p}" for p in (ann_id, ben_id)],),
                ).fetchone()
                assert paid is not None
                observed["pot_paid_events"], observed["pot_paid_coins"] = paid
                observed["final"] = {p: (w.balance, w.held) for p, w in final.items()}

    asyncio.run(scenario())
    counts = observed["counts"]
    assert all(c.conserved for _, c in counts)
    assert 1 <= observed["pot_paid_events"] <= 2  # one winner, or a tie split in two
    assert observed["pot_paid_coins"] == 2 * STAKE  # the pot, paid once
    _people, _ = observed["ids"]
    summary(
        "money_sigkill",
        kills=3,
        checks=len(counts),
        conserved=sum(c.conserved for _, c in counts),
        final_balances=observed["final"],
    )
