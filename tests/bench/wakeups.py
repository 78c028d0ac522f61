"""Appends with the wake-up inside the transaction against after the commit, interleaved in
one run: ``python -m tests.bench.wakeups [--clients 16] [--rounds 5] [--seconds 4]``.

`append_events` (migration 0015) runs `pg_notify` in the appending transaction, which then
holds PostgreSQL's server-wide notify lock through its commit; `append_events_quiet` (0017)
does not, and `EventStore` sends the wake-ups after the commit (`_Wakener`). Both functions
are in a migrated database, so one process times both: ``--clients`` tasks append a move's
worth of events (``--events``) each to streams of their own through one `EventStore` on one
pool, in slices of ``--seconds``, the order of the two turning each round. Per slice: appends
a second, p50 / p99 of an append, and this process's CPU per append; median (min–max) over
the rounds. PostgreSQL's CPU is not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from service.store import events as store_events
from service.store.database import drop_database, ensure_database, provide_database_url
from service.store.events import EventStore
from service.store.log import NewEvent, StreamAppend
from service.store.migrate import migrate
from service.store.pool import open_pool
from tests.bench.bench import say, spread

_IN_THE_TRANSACTION = store_events._APPEND.replace("append_events_quiet(", "append_events(")
_AFTER_THE_COMMIT = store_events._APPEND


async def _slice(
    store: EventStore, mode: str, clients: int, events: int, seconds: float
) -> dict[str, float]:
    store_events._APPEND = _IN_THE_TRANSACTION if mode == "in" else _AFTER_THE_COMMIT
    wake = store._wakener.wake
    if mode == "in":
        store._wakener.wake = lambda streams: None  # type: ignore[method-assign]
    latencies: list[float] = []
    stop = time.perf_counter() + seconds
    batch = [NewEvent("bench_event", b'{"n": 1, "seat": 2}') for _ in range(events)]

    async def client() -> None:
        stream, version = f"bench-{uuid.uuid4()}", 0
        while time.perf_counter() < stop:
            started = time.perf_counter()
            await store.append(StreamAppend(stream, version, batch), metadata={"by": "bench"})
            latencies.append(time.perf_counter() - started)
            version += events

    cpu, wall = time.process_time(), time.perf_counter()
    try:
        await asyncio.gather(*(client() for _ in range(clients)))
        await asyncio.sleep(0.05)  # the last wake-ups' statement, counted in this slice
    finally:
        store_events._APPEND = _AFTER_THE_COMMIT
        store._wakener.wake = wake  # type: ignore[method-assign]
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    latencies.sort()
    return {
        "appends_per_s": len(latencies) / wall,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))],
        "cpu_ms_per_append": 1000 * cpu / len(latencies),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    base = provide_database_url(args.database_url or os.environ.get("DATABASE_URL"))
    name = f"swarm_bench_{uuid.uuid4().hex[:12]}"
    url = ensure_database(base, name)
    try:
        migrate(url)
        pool = await open_pool(url, max_size=args.clients)
        try:
            store = EventStore(pool)
            await _slice(store, "after", args.clients, args.events, 1.0)  # warm up
            rounds: dict[str, list[dict[str, float]]] = {"in": [], "after": []}
            for r in range(args.rounds):
                order = ("in", "after") if r % 2 == 0 else ("after", "in")
                for mode in order:
                    rounds[mode].append(
                        await _slice(store, mode, args.clients, args.events, args.seconds)
                    )
                say(f"round {r + 1}/{args.rounds}")
        finally:
            await pool.close()
    finally:
        drop_database(base, name)
    figures = {
        mode: {key: spread([each[key] for each in slices]) for key in slices[0]}
        for mode, slices in rounds.items()
    }
    ratio = [
        after["appends_per_s"] / inside["appends_per_s"]
        for inside, after in zip(rounds["in"], rounds["after"], strict=True)
    ]
    return {
        "settings": vars(args) | {"json": str(args.json)},
        "load": os.getloadavg(),
        "figures": figures,
        "after_over_in_appends_per_s": spread(ratio),
    }


def _cell(s: dict[str, float]) -> str:
    return f"{s['median']:.2f} ({s['min']:.2f}–{s['max']:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--events", type=int, default=6, help="events an append")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--database-url")
    parser.add_argument("--json", type=Path, default=Path("bench-wakeups.json"))
    args = parser.parse_args()
    load = os.getloadavg()
    result = asyncio.run(run(args))
    args.json.write_text(json.dumps(result, indent=2))
    f = result["figures"]
    print(
        f"\n{args.clients} clients, {args.events} events an append (load {load} → {result['load']})"
    )
    print("| figure | notify in the transaction | after the commit |")
    print("|---|---|---|")
    for key, label in (
        ("appends_per_s", "appends a second"),
        ("p50_ms", "append p50, ms"),
        ("p99_ms", "append p99, ms"),
        ("cpu_ms_per_append", "this process's CPU per append, ms"),
    ):
        print(f"| {label} | {_cell(f['in'][key])} | {_cell(f['after'][key])} |")
    print(f"| after ÷ in, appends a second | | {_cell(result['after_over_in_appends_per_s'])} |")


if __name__ == "__main__":
    main()
