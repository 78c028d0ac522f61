"""The rules' two comparisons of ``make bench`` alone: ``python -m tests.bench.rules [--quick]``.

Engine ÷ plain loop (4 and 8 players, random play and bees on every seat) and cold rebuild ÷
bare SELECT, measured by the same functions and settings as ``tests/bench/bench.py`` (against a
fresh ``swarm_bench_<random>`` database, dropped afterwards), without starting the servers: a
minute instead of four, for work on the engine or the fold. Prints the figures (median and
min–max over the rounds).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid
from typing import Any

from service.store.database import drop_database, ensure_database, provide_database_url
from service.store.events import EventStore
from service.store.migrate import migrate
from service.store.pool import open_pool
from tests.bench import bench


async def _rebuild(url: str, settings: bench.Settings) -> dict[str, Any]:
    pool = await open_pool(url, min_size=1, max_size=4)
    try:
        return await bench.bench_rebuild(pool, EventStore(pool), settings)
    finally:
        await pool.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2 rounds of short slices")
    args = parser.parse_args(argv)
    settings = bench.QUICK if args.quick else bench.FULL
    server_url = provide_database_url(os.environ.get("DATABASE_URL"))
    name = f"swarm_bench_{uuid.uuid4().hex[:12]}"
    url = ensure_database(server_url, name)
    try:
        migrate(url)
        results: dict[str, Any] = {"engine": bench.bench_engine(settings)}
        results["rebuild"] = asyncio.run(_rebuild(url, settings))
    finally:
        drop_database(server_url, name)
    for e in results["engine"]:
        print(
            f"engine ÷ plain loop, {e['players']} players, {e['play']:<6} "
            f"{bench._fmt(e['ratio'], 3)}   engine {e['engine_games_per_s']['median']:.0f}/s, "
            f"plain {e['plain_games_per_s']['median']:.0f}/s"
        )
    rb = results["rebuild"]
    print(
        f"cold rebuild ÷ bare SELECT            {bench._fmt(rb['ratio'], 3)}   "
        f"rebuild {rb['rebuild_games_per_s']['median']:.0f}/s, "
        f"SELECT {rb['select_per_s']['median']:.0f}/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
