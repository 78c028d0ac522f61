"""Each prepared game's server seed in PostgreSQL (`deal_secrets`, written with the events that
prepare the game), read through the `port.DealSecrets` port."""

from __future__ import annotations

from service.store.pool import Pool

_SERVER_SEED = "select server_seed from deal_secrets where game_id = $1"


class StoredDealSecrets:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def server_seed(self, game_id: str) -> bytes | None:
        seed = await self._pool.fetchval(_SERVER_SEED, game_id)
        return None if seed is None else bytes(seed)
