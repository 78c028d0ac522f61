"""The LISTEN connection: appends wake subscribers of that stream, and a dropped connection is
re-established (waking everyone, since notifications may have been missed meanwhile)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from unittest import mock

import asyncpg
import pytest

from service.store.events import EventStore
from service.store.log import ConcurrencyConflict, NewEvent, StreamAppend
from service.store.pool import Pool
from service.store.wakeups import Wakeups


async def test_append_wakes_subscribers_of_that_stream_only(
    database_url: str, event_store: EventStore
) -> None:
    wakeups = Wakeups(database_url)
    await wakeups.start()
    try:
        mine, other = f"test-{uuid.uuid4()}", f"test-{uuid.uuid4()}"
        with wakeups.subscribe(mine) as woken, wakeups.subscribe(other) as not_woken:
            await event_store.append(StreamAppend(mine, 0, [NewEvent("x", b"{}")]))
            await asyncio.wait_for(woken.wait(), 5)
            await asyncio.sleep(0.1)
            assert not not_woken.is_set()
    finally:
        await wakeups.close()


async def test_listener_reconnects_after_its_connection_is_killed(
    database_url: str, event_store: EventStore
) -> None:
    wakeups = Wakeups(database_url)
    await wakeups.start()
    try:
        stream = f"test-{uuid.uuid4()}"
        with wakeups.subscribe(stream) as woken:
            admin = await asyncpg.connect(database_url)
            try:
                killed = await admin.fetchval(
                    "select count(pg_terminate_backend(pid)) from pg_stat_activity"
                    " where query like 'LISTEN %' and pid <> pg_backend_pid()"
                    " and datname = current_database()"
                )
            finally:
                await admin.close()
            assert killed >= 1
            await asyncio.wait_for(woken.wait(), 5)  # the reconnect wakes everyone
            woken.clear()
            for _ in range(100):  # wait for the new LISTEN to be in place
                if wakeups._connected.is_set():
                    break
                await asyncio.sleep(0.05)
            await event_store.append(StreamAppend(stream, 0, [NewEvent("x", b"{}")]))
            await asyncio.wait_for(woken.wait(), 5)
    finally:
        await wakeups.close()


async def test_the_append_notifies_after_its_commit_once_for_a_burst(
    database_url: str, pool: Pool
) -> None:
    """The appending statement itself notifies nobody (a notifying transaction holds the
    server-wide notify lock through its commit); the store's wakener does, once the append has
    committed, and a burst of appends shares its notifying statements."""
    quiet = await pool.fetchval("select prosrc from pg_proc where proname = 'append_events_quiet'")
    assert quiet is not None and "pg_notify" not in quiet and "insert into events" in quiet

    store = EventStore(pool)
    sent: list[list[str]] = []
    real_execute = pool.execute

    async def counted(sql: str, *args: object) -> str:
        if "pg_notify" in sql:
            sent.append(list(args[1]))  # type: ignore[call-overload]
        return await real_execute(sql, *args)

    streams = [f"test-{uuid.uuid4()}" for _ in range(40)]
    wakeups = Wakeups(database_url)
    await wakeups.start()
    try:
        with contextlib.ExitStack() as stack:
            woken = [stack.enter_context(wakeups.subscribe(s)) for s in streams]
            with mock.patch.object(pool, "execute", counted):
                await asyncio.gather(
                    *(store.append(StreamAppend(s, 0, [NewEvent("x", b"{}")])) for s in streams)
                )
                await asyncio.wait_for(asyncio.gather(*(w.wait() for w in woken)), 5)
    finally:
        await wakeups.close()
    assert sorted(s for batch in sent for s in batch) == sorted(streams)
    assert len(sent) < len(streams), sent


async def test_a_refused_append_wakes_nobody(database_url: str, event_store: EventStore) -> None:
    stream = f"test-{uuid.uuid4()}"
    wakeups = Wakeups(database_url)
    await wakeups.start()
    try:
        with wakeups.subscribe(stream) as woken:
            await event_store.append(StreamAppend(stream, 0, [NewEvent("x", b"{}")]))
            await asyncio.wait_for(woken.wait(), 5)
            woken.clear()
            with pytest.raises(ConcurrencyConflict):
                await event_store.append(StreamAppend(stream, 0, [NewEvent("x", b"{}")]))
            await asyncio.sleep(0.3)
            assert not woken.is_set()
    finally:
        await wakeups.close()
