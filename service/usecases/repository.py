"""Loading state: every stream is folded from its events through the pure domain. Game states
are cached per instance, so a move folds only the events it has not seen yet.

The cache is safe with several instances: a cached state is only a starting point, the store is
asked for what came after it (`game`), or, when a move is decided on the cached state alone
(`cached_game`, see `service.usecases.play`), the append checks the version it was decided on
and a stale state fails there (`ConcurrencyConflict`), so nothing is ever written on it."""

from __future__ import annotations

from collections import OrderedDict

import msgspec

from service.domain.chain import seal_key
from service.domain.ledger import WalletState, decode_wallet_event, evolve_wallet
from service.domain.players import PlayerRecord, player_record
from service.domain.rules.bees import SeedFor, decision_seeds, needs_decision_seeds
from service.domain.rules.engine import GameState, fold, initial_state
from service.domain.rules.events import decode_events
from service.domain.table_events import decode_table_event
from service.domain.tables import TableState, fold_table
from service.usecases.context import Context, stream
from service.usecases.errors import NotFound


class GameStates:
    """Recently used game states, least recently used dropped first."""

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._states: OrderedDict[str, GameState] = OrderedDict()

    def get(self, game_id: str) -> GameState | None:
        state = self._states.get(game_id)
        if state is not None:
            self._states.move_to_end(game_id)
        return state

    def put(self, game_id: str, state: GameState) -> None:
        """Keep `state` unless a later one of the same game is kept already (a read that
        started before a commit may finish after it: its state is older, not wrong)."""
        known = self._states.get(game_id)
        if known is None or known.version <= state.version:
            self._states[game_id] = state
        self._states.move_to_end(game_id)
        while len(self._states) > self.capacity:
            self._states.popitem(last=False)


class TableStates:
    """Recently read table states, least recently used dropped first: a table's log grows with
    every game played at it, so it is read from where this instance last left it."""

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._states: OrderedDict[str, TableState] = OrderedDict()

    def get(self, table_id: str) -> TableState | None:
        state = self._states.get(table_id)
        if state is not None:
            self._states.move_to_end(table_id)
        return state

    def put(self, table_id: str, state: TableState) -> None:
        known = self._states.get(table_id)
        if known is None or known.version <= state.version:
            self._states[table_id] = state
        self._states.move_to_end(table_id)
        while len(self._states) > self.capacity:
            self._states.popitem(last=False)


class Repository:
    def __init__(self, ctx: Context, games: GameStates | None = None) -> None:
        self.ctx = ctx
        self.games = games or GameStates()
        self.tables = TableStates()
        # Each game's seal key (`chain.seal_key`): a game's every event needs it (chain v2), and
        # it never changes, so it is read once an instance; as secret as the server seed.
        self._seal_keys: OrderedDict[str, bytes | None] = OrderedDict()

    async def game(self, game_id: str) -> GameState:
        state = self.games.get(game_id) or initial_state
        events = await self.ctx.store.read_events(
            stream("game", game_id), decode_events, after_version=state.version
        )
        if not events and state.version == 0:
            raise NotFound(f"No game {game_id}.")
        state = fold(events, state)
        self.games.put(game_id, state)
        return state

    def cached_game(self, game_id: str) -> GameState | None:
        """The game as this instance last saw it, without asking the store: possibly behind
        (another instance appended since), so only for a decision whose append checks the
        version (`Play.decide`)."""
        return self.games.get(game_id)

    async def game_at(self, game_id: str, version: int) -> GameState:
        """The game as it was right after `version` (what a repeated command answers with)."""
        return fold(
            await self.ctx.store.read_events(
                stream("game", game_id), decode_events, up_to_version=version
            )
        )

    async def table(self, table_id: str, *, unopened: bool = False) -> TableState:
        """The table as stored now (this instance's last state of it plus the events after);
        NotFound if it was never opened, unless `unopened`: then also the stream of a table
        whose opening was cut short, where only a hold was given back."""
        known = self.tables.get(table_id)
        recorded = await self.ctx.store.read_stream(
            stream("table", table_id), after_version=known.version if known is not None else 0
        )
        state = fold_table((decode_table_event(r.data) for r in recorded), known)
        if state.opened:
            self.tables.put(table_id, state)
            return state
        if not unopened:
            raise NotFound(f"No table {table_id}.")
        return msgspec.structs.replace(state, table_id=table_id)

    async def wallet(self, player_id: str) -> WalletState:
        wallet = WalletState()
        for r in await self.ctx.store.read_stream(stream("wallet", player_id)):
            wallet = evolve_wallet(wallet, decode_wallet_event(r.data))
        return wallet

    async def player_record(self, player_id: str) -> PlayerRecord:
        recorded = await self.ctx.store.read_stream(stream("player", player_id))
        return player_record((r.type, r.data) for r in recorded)

    async def bee_seeds(self, state: GameState) -> SeedFor | None:
        """The seeds the game's seeded bees (`Level.seeded`: the strong level) decide from
        (`bees.bee_decision_seed`, derived from its server seed), or None when no seat needs
        one: then no query is made."""
        if not needs_decision_seeds(state):
            return None
        return decision_seeds(await self.server_seed(state.game_id), state.game_id)

    async def server_seed(self, game_id: str) -> bytes:
        """The secret seed a prepared game is dealt from; published only when it ends."""
        seed = await self.ctx.secrets.server_seed(game_id)
        assert seed is not None, f"no server seed for game {game_id}"
        return seed

    async def seal_key(self, game_id: str, server_seed: bytes | None = None) -> bytes | None:
        """The key that seals the game's hidden values in the hash chain (v2), from its server
        seed (given, when the caller holds it); None for a game dealt before fair deals, which
        has no seed and whose stream is chained under v1."""
        if server_seed is not None:  # not committed yet: nothing to cache until it is
            return seal_key(game_id, server_seed)
        if game_id in self._seal_keys:
            self._seal_keys.move_to_end(game_id)
            return self._seal_keys[game_id]
        stored = await self.ctx.secrets.server_seed(game_id)
        key = None if stored is None else seal_key(game_id, stored)
        self._seal_keys[game_id] = key
        while len(self._seal_keys) > 20_000:
            self._seal_keys.popitem(last=False)
        return key
