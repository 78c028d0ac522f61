"""How late the turn clock fires while the request loop is saturated (issue 28):
``python -m tests.bench.clock_thread [--games 20] [--saturators 128] [--in-flight 256]
[--loop-lag 0] [--service-tree DIR]``.

One ``python -m service serve`` process (from ``--service-tree``, a *before*, or this
checkout) on a fresh database, dropped afterwards. ``--games`` timed games of two people and
two bees (1-second turns) whose people only tap, never confirm, so every turn is the clock's
(`loadgen.clock_run`'s games: each person follows the game's stream and taps when a turn
starts). Meanwhile ``--saturators`` keep-alive connections ask for the lobby flat out
(``GET /tables?limit=50``), with admission's limit raised to ``--in-flight``
(``SWARM_MAX_IN_FLIGHT``) and the lag-driven limit off (``--loop-lag``,
``SWARM_MAX_LOOP_LAG``), so the request loop always has more work than it can do, as past
capacity. Reported: each expiry's lateness from the log (``recorded_at`` of what it wrote
minus the deadline in its command id: p50, p99, max), the mean of the service's own
``swarm_timer_lateness_seconds`` (taken when a claimed timer starts firing), and what the
saturators were answered.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import msgspec
import psycopg

from service.store.database import drop_database, ensure_database, provide_database_url
from service.store.migrate import migrate
from tests.bench import loadgen
from tests.bench.bench import RawHttp, Server, percentile, say


async def _ok(http: RawHttp, method: str, path: str, body: Any = None) -> Any:
    """A setup request, asked again while the service sheds it."""
    while True:
        status, data = await http.request(method, path, body)
        if status in (200, 201):
            return msgspec.json.decode(data)
        await asyncio.sleep((http.retry_after or 0.2) * random.random())


async def saturate(port: int, stop: asyncio.Event, answers: Counter[int]) -> None:
    http = RawHttp(port)
    try:
        http.token = (await _ok(http, "POST", "/guests", {"name": "Busy"}))["token"]
        while not stop.is_set():
            status, _ = await http.request("GET", "/tables?limit=50")
            answers[status] += 1
    finally:
        await http.close()


def _metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def run(args: argparse.Namespace) -> dict[str, Any]:
    server_url = provide_database_url(args.database_url)
    database = f"swarm_bench_clock_{uuid.uuid4().hex[:8]}"
    url = ensure_database(server_url, database)
    server: Server | None = None
    try:
        migrate(url)
        # Admission bounds the requests in flight (16); raised, nothing bounds the work the
        # request loop has on its plate, and it lags as it did past capacity (issue 28).
        os.environ["SWARM_MAX_IN_FLIGHT"] = str(args.in_flight)
        os.environ["SWARM_MAX_LOOP_LAG"] = str(args.loop_lag)
        server = Server(url, "service", "serve", cwd=args.service_tree)
        await server.wait_healthy()
        m = loadgen.Metrics()
        async with loadgen.client_for(server.base_url) as client:
            opened = await asyncio.gather(
                *(loadgen.open_game(client, m, 1.0, 1.0) for _ in range(args.games))
            )
            stop = asyncio.Event()
            answers: Counter[int] = Counter()
            busy = [
                asyncio.create_task(saturate(server.port, stop, answers))
                for _ in range(args.saturators)
            ]
            started = time.perf_counter()
            ends = await asyncio.gather(
                *(
                    loadgen.follow(
                        client,
                        p,
                        gid,
                        m,
                        random.Random(i),
                        moves=False,
                        stop_at=[float("inf")],
                        tap_only=True,
                    )
                    for i, (_, gid, people) in enumerate(opened)
                    for p in people
                )
            )
            wall = time.perf_counter() - started
            stop.set()
            await asyncio.gather(*busy, return_exceptions=True)
            metrics = (await client.get("/metrics")).text
        streams = [f"game-{g}" for _, g, _ in opened]
        with psycopg.connect(url) as conn:
            late_s, twice = loadgen.clock_log(conn, streams)
        late = [s * 1000 for s in late_s]
        fired = _metric(metrics, "swarm_timer_lateness_seconds_count")
        return {
            "tree": args.service_tree or ".",
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "games": args.games,
            "saturators": args.saturators,
            "in_flight": args.in_flight,
            "loop_lag": args.loop_lag,
            "wall_s": round(wall, 1),
            "games_seen_ending": sum(ends) // 2,
            "expiries": len(late),
            "late_ms": {f"p{p}": round(percentile(late, p), 1) for p in (50, 99)}
            | {"max": round(max(late, default=0.0), 1)},
            "fired_late_mean_ms": round(
                _metric(metrics, "swarm_timer_lateness_seconds_sum") / fired * 1000, 1
            )
            if fired
            else None,
            "turns_revealed_twice": twice,
            "saturators_answers_per_s": {str(k): round(v / wall) for k, v in answers.items()},
            "errors": dict(m.errors.most_common(5)),
        }
    finally:
        if server is not None:
            server.stop()
        drop_database(server_url, database)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--saturators", type=int, default=128)
    parser.add_argument("--in-flight", type=int, default=256, help="SWARM_MAX_IN_FLIGHT")
    parser.add_argument(
        "--loop-lag", type=float, default=0.0, help="SWARM_MAX_LOOP_LAG (0: off, the default)"
    )
    parser.add_argument("--service-tree", help="run the service from this checkout (a before)")
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    result = asyncio.run(run(args))
    say(json.dumps(result))


if __name__ == "__main__":
    main()
