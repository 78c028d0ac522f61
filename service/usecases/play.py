"""A person's moves in a game (seed §3–§5): tap a bee (changeable), confirm it (final), take a
stem when their bee is too low. Every move carries a `move_id` of the client's choosing, so a
move sent twice is applied once and answered the same both times. A `move_id` sent again with a
*different* body is refused (`MoveIdReused`), as payment APIs treat idempotency keys: a client
whose ids collide learns of it instead of getting another move's answer.

How a repeat is told from a reuse: the SHA-256 of the move's canonical JSON is stored as
`move_digest` in the metadata of the events the move wrote (metadata is stored on every event
of the append, so the event at the command's recorded version carries it). Only a repeat pays
for reading it back. Moves recorded before this check existed have no digest: they are
answered as repeats, as they were then.

Each move is loaded, decided with the bee players' answers (`service.domain.play`), and
appended at the version it was decided on; when the game ended, the same unit of work reveals
the deal, pays the pot and tells the table (`service.usecases.deals`)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

import msgspec

from service.domain.play import seat_of
from service.domain.rules.commands import Command, ConfirmPick, TakeStem, TapBee
from service.domain.rules.engine import GameState
from service.domain.rules.errors import RuleViolation
from service.domain.views import GameView, game_view
from service.store.events import ConcurrencyConflict, DuplicateCommand, GuardRefused
from service.store.projections import Statement
from service.usecases.bees import play_with_bees
from service.usecases.context import Context, stream
from service.usecases.deals import Deals
from service.usecases.errors import Conflict, Forbidden, NotFound, Unauthorized
from service.usecases.identity import TOKEN_REFUSED, Player, TokenCheck
from service.usecases.repository import Repository
from service.usecases.retry import StreamTurns, until_applied
from service.usecases.unit_of_work import UnitOfWork
from service.usecases.watching import viewer_seat


class Move(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True):
    """A move by the caller's own seat. `move_id` is chosen by the client: sending the same move
    again returns the same result and writes nothing."""

    move_id: Annotated[
        str, msgspec.Meta(min_length=1, max_length=64, pattern="^[^\\u0000\\ud800-\\udfff]*$")
    ]


# The bounds every game has (seed §1: bees 1 to 84 at most, 4 stems), so the document states
# them. A bee outside them is malformed (400) before any rule looks at it; a stem outside them
# is the rules' own 422 `stem-out-of-range` (docs/rules.md), one answer for every such stem.
BeeNumber = Annotated[int, msgspec.Meta(ge=1, le=84)]
StemNumber = Annotated[
    int,
    msgspec.Meta(
        extra_json_schema={"minimum": 1, "maximum": 4},
        description="1 to 4; another number is refused with 422 `stem-out-of-range`",
    ),
]


class Tap(Move, frozen=True, tag="tap"):
    bee: BeeNumber


class Confirm(Move, frozen=True, tag="confirm"):
    bee: BeeNumber | None = None


class ChooseStem(Move, frozen=True, tag="take_stem"):
    stem: StemNumber


AnyMove = Tap | Confirm | ChooseStem

_MOVE_ENCODER = msgspec.json.Encoder()


class MoveIdReused(Conflict):
    """A `move_id` this player already used in this game, sent with a different body."""


# The refusals whose answer says something about the game (a 4xx with its reason): given to a
# caller only once the token is checked.
_ANSWERS = (RuleViolation, NotFound, Forbidden, Conflict, ConcurrencyConflict)


class _Stale(Exception):
    """A decision on the cached game ended in something other than an append: decide again on
    a fresh read before answering."""


def move_digest(move: AnyMove) -> str:
    """The fingerprint of a move's body: its canonical JSON (the decoded struct, re-encoded, so
    key order and spacing do not matter), hashed."""
    return hashlib.sha256(_MOVE_ENCODER.encode(move)).hexdigest()


def command_for(move: AnyMove, seat: int, at: datetime) -> Command:
    match move:
        case Tap():
            return TapBee(seat=seat, bee=move.bee, at=at)
        case Confirm():
            return ConfirmPick(seat=seat, bee=move.bee, at=at)
        case ChooseStem():
            return TakeStem(seat=seat, stem=move.stem, at=at)
    raise AssertionError(f"unknown move {move!r}")  # pragma: no cover


class Play:
    def __init__(
        self, ctx: Context, repository: Repository, deals: Deals, turns: StreamTurns
    ) -> None:
        self.ctx = ctx
        self.repository = repository
        self.deals = deals
        self.turns = turns

    async def get_game(self, player: Player, game_id: str) -> GameView:
        """The caller's view of a game: their own hand, never another's (someone with no seat
        at an online table's game watches it as a spectator and sees no hand,
        `service.usecases.watching`); and the head of its hash chain, the hash of event
        `version`."""
        state = await self.repository.game(game_id)
        seat = await viewer_seat(self.repository, state, player)
        head = await self.ctx.store.read_stream(
            stream("game", game_id), after_version=state.version - 1, up_to_version=state.version
        )
        view = game_view(state, seat, self.ctx.clock())
        return msgspec.structs.replace(view, head_hash=head[-1].hash.hex() if head else None)

    async def submit_move(
        self, player: Player, game_id: str, move: AnyMove, *, check: TokenCheck | None = None
    ) -> GameView:
        """`check`: the caller's bearer token not yet checked for this request (the instance
        knows whose it is): checked inside the move's append, or on its own before any other
        answer (a repeat, a refusal) is given, so a revoked token never gets one."""
        if check is not None:
            appended: list[bool] = []
            try:
                view = await self._submit_move(player, game_id, move, check, appended)
            except GuardRefused:
                check.identity.forget(check.token)
                raise Unauthorized(TOKEN_REFUSED) from None
            except _ANSWERS:
                await check.verify()
                raise
            # Anything else is a 503 (the database) or a 500 (a bug), which say nothing about
            # the game; checking the token first would only make a struggling database wait
            # twice.
            if not appended:
                await check.verify()
            return view
        return await self._submit_move(player, game_id, move, None, [])

    async def _submit_move(
        self,
        player: Player,
        game_id: str,
        move: AnyMove,
        check: TokenCheck | None,
        appended: list[bool],
    ) -> GameView:
        seat: int | None = None

        def command(state: GameState) -> Command:
            nonlocal seat
            seat = seat_of(state, player.player_id)
            if seat is None:
                raise Forbidden("You do not sit at this game.")
            return command_for(move, seat, self.ctx.clock())

        digest = move_digest(move)
        state = await self.decide(
            game_id,
            command,
            command_id=f"{player.player_id}:{move.move_id}",
            metadata={
                "causation": move.__struct_config__.tag,
                "actor": player.player_id,
                "move_digest": digest,
            },
            guard=check.guard if check is not None else None,
            appended=appended,
        )
        return game_view(state, seat, self.ctx.clock())

    async def decide(
        self,
        game_id: str,
        command_for: Callable[[GameState], Command],
        *,
        command_id: str,
        metadata: dict[str, Any],
        guard: Callable[[], Statement] | None = None,
        appended: list[bool] | None = None,
    ) -> GameState:
        """Load → decide (and let bee players pick) → append, decided again when someone else
        moved first. Returns the state after the command, or after its first run if it was a
        repeat; a repeat whose `metadata["move_digest"]` differs from the first run's raises
        `MoveIdReused`. `guard` gives a statement the append must pass (`EventStore.append`);
        `appended` gets `True` when the answer is this call's own append."""
        game_stream = stream("game", game_id)
        digest = metadata.get("move_digest")

        async def repeat(version: int) -> GameState:
            if digest is not None:
                recorded = await self.ctx.store.read_stream(
                    game_stream, after_version=version - 1, up_to_version=version
                )
                first = recorded[0].metadata.get("move_digest") if recorded else None
                if first is not None and first != digest:
                    raise MoveIdReused(
                        "This move_id was already used in this game for a different move; "
                        "send each new move with a new move_id."
                    )
            return await self.repository.game_at(game_id, version)

        async def decide_on(state: GameState, *, cached: bool) -> GameState:
            """Decide on `state` and append at its version. On a `cached` state (not read from
            the store for this decision, so possibly behind) only an append is final: any
            other outcome (a refusal, nothing to do) raises `_Stale`, and so does a conflict,
            so that it is decided again on a fresh read before it is answered."""
            try:
                command = command_for(state)
            except Forbidden:
                if cached:
                    raise _Stale from None
                raise
            try:
                new_state, events = await play_with_bees(
                    state, command, await self.repository.bee_seeds(state)
                )
            except RuleViolation:
                if cached:
                    raise _Stale from None
                # A repeated move is decided on the state after its first run, where it may
                # break a rule (a second confirm): answer it as the repeat it is. Looked up only
                # on this slow path; otherwise the append checks the move id itself.
                done = await self.ctx.store.command_version(game_stream, command_id)
                if done is not None:
                    return await repeat(done)
                raise
            if not events:
                if cached:
                    raise _Stale
                return state  # nothing happens (a clock that fired after the game moved on)
            uow = UnitOfWork(self.repository)
            if new_state.phase == "ended":
                # The table learns in the same transaction, so play again sees it at once.
                uow = UnitOfWork(self.repository, await self.repository.table(new_state.table_id))
            uow.game_events(state, events, new_state)
            await self.deals.conclude_if_ended(uow, game_id, prepare=True)
            try:
                await uow.commit(
                    {"command_id": command_id, **metadata},
                    command=(game_stream, command_id),
                    guard=guard() if guard is not None else None,
                )
            except DuplicateCommand as duplicate:
                return await repeat(duplicate.version)
            except ConcurrencyConflict:
                if cached:
                    raise _Stale from None
                raise
            await self.deals.money.deliver(uow.transfers)  # the pot and rewards, if it ended
            final = uow.game_state(game_id)
            assert final is not None
            if appended is not None:
                appended.append(True)
            return final

        async def attempt() -> GameState:
            # This instance's last state of the game is current unless another instance wrote
            # since (moves of one stream take turns here): decide on it without a read, and
            # read only when that does not end in an append.
            cached = self.repository.cached_game(game_id)
            if cached is not None:
                try:
                    return await decide_on(cached, cached=True)
                except _Stale:
                    pass
            return await decide_on(await self.repository.game(game_id), cached=False)

        async with self.turns.turn(game_stream):
            return await until_applied(attempt, what="game")
