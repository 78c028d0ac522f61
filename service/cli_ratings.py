"""`swarm ratings`: recompute every rating from the log and compare it with the stored one.

Reads the database of `DATABASE_URL` (the service's own); the check itself is
`service.usecases.ratings.recompute`, over `service.domain.ratings.check_ratings`. Prints how
many people, changes and games it read and every change that does not hold. Exit status: 0
when every change holds, 1 when one does not, 2 when the database could not be read.
"""

from __future__ import annotations

import asyncio
import sys

from service.usecases.ratings import RatingsCheck


async def check(url: str) -> RatingsCheck:
    from service.bootstrap import bootstrap
    from service.store.pool import open_pool
    from service.store.postgres import postgres_ports
    from service.usecases.ratings import recompute

    pool = await open_pool(url, min_size=1, max_size=2)
    try:
        swarm = bootstrap(postgres_ports(pool))
        return await recompute(swarm.ctx, swarm.repository)
    finally:
        await pool.close()


def run(url: str) -> int:
    try:
        found = asyncio.run(check(url))
    except OSError as exc:
        print(f"swarm ratings: {exc}", file=sys.stderr)
        return 2
    print(
        f"{found.people} people, {found.changes} rating changes, {found.games} rated games "
        "recomputed from the log"
    )
    for m in found.mismatches:
        who = f"player {m.player_id} v{m.version}" if m.player_id else "game"
        print(f"MISMATCH {who} game {m.game_id}: {m.problem}")
    print("every rating is the one the games give" if not found.mismatches else "FAILED")
    return 1 if found.mismatches else 0
