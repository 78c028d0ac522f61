"""Each prepared game's server seed in PostgreSQL (`deal_secrets`, written with the events that
prepare the game), read through the `port.DealSecrets` port."""

from __future__ import annotations

from service.store import citus
from service.store.pool import Pool

_SERVER_SEED = "select server_seed from deal_secrets where game_id = $1"
# On Citus the table is distributed by the game's id (`shard_key`, migration 0020): named, the
# read is one shard's (a router query) instead of one on every shard, and it is answered while
# another worker is away.
_SERVER_SEED_ON_CITUS = "select server_seed from deal_secrets where shard_key = $1 and game_id = $1"


class StoredDealSecrets:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def server_seed(self, game_id: str) -> bytes | None:
        sql = _SERVER_SEED_ON_CITUS if await citus.detect(self._pool) else _SERVER_SEED
        seed = await self._pool.fetchval(sql, game_id)
        return None if seed is None else bytes(seed)
