"""Each game's fair deal (docs/fairness.md) and its lifecycle at the table: a game is prepared
(the server's commitment published) before anyone can contribute a seed, dealt from the server
seed and every seat's seed, and when it ends its deal is revealed, its pot paid and the next
game prepared, all in the unit of work that ended it."""

from __future__ import annotations

from service.domain import fairness
from service.domain.rules.bees import decision_seeds
from service.domain.rules.commands import StartGame
from service.domain.rules.engine import initial_state
from service.domain.rules.events import DealCommitted, DealProof, DealRevealed
from service.domain.table_events import GameFinished, GameOpened, GamePrepared
from service.usecases.bee_threads import decide_with_bees
from service.usecases.context import Context
from service.usecases.money import Money
from service.usecases.unit_of_work import UnitOfWork


class Deals:
    def __init__(self, ctx: Context, money: Money) -> None:
        self.ctx = ctx
        self.money = money

    async def prepare(self, uow: UnitOfWork) -> None:
        """Commit to the next game's deal: a fresh secret seed, kept out of the log until the
        game ends, and its commitment published now, before anyone can contribute a seed. The
        game's id is drawn beside its table's (`EventLog.colocated_id`: on Citus, its shard)."""
        game_id = await self.ctx.store.colocated_id(uow.table.table_id)
        seed = self.ctx.server_seeds(game_id)
        commitment = fairness.commitment(game_id, seed).hex()
        uow.table_event(GamePrepared(game_id=game_id, commitment=commitment))
        committed = DealCommitted(
            game_id=game_id, table_id=uow.table.table_id, commitment=commitment
        )
        uow.game_events(initial_state, [committed])
        uow.keep_secret(game_id, seed)

    async def deal(self, uow: UnitOfWork) -> bool:
        """Deal the prepared game to the seats at the table, from the server seed and every
        seat's contributed seed; a buy-in table's stakes go into the pot at its first deal.
        False, adding nothing, when it was dealt meanwhile (by another instance): the table
        this was decided on is stale, to be decided again on the fresh one (not refused)."""
        table = uow.table
        game_id, commitment = table.next_game, table.next_commitment
        assert game_id is not None and commitment is not None
        base = await uow.game(game_id)
        if base.phase != "not_started":
            return False
        seats = table.seat_infos()
        seeds = [table.seed_of(s.player_id) if s.kind == "person" else None for s in seats]
        server_seed = await uow.server_seed(game_id)
        published = fairness.derive(
            game_id,
            server_seed,
            [bytes.fromhex(seed) if seed is not None else None for seed in seeds],
        )
        assert published.commitment.hex() == commitment
        proof = DealProof(
            commitment=commitment,
            client_seeds=tuple(seeds),
            transcript=published.transcript.hex(),
            fingerprint=published.fingerprint.hex(),
        )
        self.money.form_pot(uow, game_id)
        follows = table.games[-1] if table.games else None  # Play again: spectators follow
        uow.table_event(GameOpened(game_id=game_id, number=len(table.games) + 1, follows=follows))
        start = StartGame(
            game_id=game_id,
            table_id=table.table_id,
            seats=seats,
            deck_order=published.deck_order,
            clock=table.clock,
            proof=proof,
            at=self.ctx.clock(),
        )
        bee_seeds = decision_seeds(server_seed, game_id)
        uow.game_events(base, (await decide_with_bees(base, start, bee_seeds))[1])
        return True

    async def conclude(self, uow: UnitOfWork, game_id: str, *, prepare: bool) -> None:
        """The end of a game, as one step of the unit of work that ended it: publish its deal,
        pay its pot and rewards, tell the table, and prepare the next game (so people can
        contribute seeds to it before play again). Nothing if the game has not ended, or was
        concluded already."""
        game = uow.game_state(game_id)
        if game is None or game.phase != "ended" or game.server_seed is not None:
            return
        if game.commitment is not None and game.proof is not None:
            seed = await uow.server_seed(game_id)
            order = fairness.deck_order(seed, bytes.fromhex(game.proof.transcript), len(game.seats))
            uow.game_events(game, [DealRevealed(server_seed=seed.hex(), deck_order=order)])
        self.money.settle_pot(uow, game)
        await self.money.reward(uow, game)
        assert game.end_reason is not None
        uow.table_event(GameFinished(game_id=game_id, reason=game.end_reason))
        if prepare and not uow.table.closed:
            await self.prepare(uow)
