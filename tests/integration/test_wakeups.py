"""The LISTEN connection: appends wake subscribers of that stream, and a dropped connection is
re-established (waking everyone, since notifications may have been missed meanwhile)."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg

from service.store.events import EventStore, NewEvent, StreamAppend
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
