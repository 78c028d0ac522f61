"""A person's moves in a game (seed §3–§5): tap a bee (changeable), confirm it (final), take a
stem when their bee is too low. Every move carries a `move_id` of the client's choosing, so a
move sent twice is applied once and answered the same both times. A `move_id` sent again with a
*different* body is refused (`MoveIdReused`), as payment APIs treat idempotency keys: a client
whose ids collide learns of it instead of getting another move's answer.

How a repeat is told from a reuse: the SHA-256 of the move's canonical JSON (its `digest`,
computed by the API, `service/api/moves.py`) is stored as `move_digest` in the metadata of the
events the move wrote (metadata is stored on every event of the append, so the event at the
command's recorded version carries it). Only a repeat pays for reading it back. Moves recorded
before this check existed have no digest: they are answered as repeats, as they were then.

Each move is loaded, decided with the bee players' answers (`service.domain.bee_answers`), and
appended at the version it was decided on; when the game ended, the same unit of work reveals
the deal, pays the pot and tells the table (`service.usecases.deals`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Literal, NamedTuple

import msgspec

from service.domain.bee_answers import seat_of
from service.domain.refusals import Refused
from service.domain.rules.commands import Command, ConfirmPick, TakeStem, TapBee
from service.domain.rules.engine import GameState
from service.domain.rules.errors import RuleViolation
from service.domain.rules.events import Event
from service.domain.views import GameView, game_view
from service.store.log import ConcurrencyConflict, DuplicateCommand, GuardRefused
from service.store.rows import TokenGuard
from service.usecases.bee_threads import decide_with_bees
from service.usecases.context import Context, stream
from service.usecases.deals import Deals
from service.usecases.errors import Conflict, Forbidden, NotFound, Unauthorized
from service.usecases.identity import TOKEN_REFUSED, Player, TokenCheck
from service.usecases.repository import Repository
from service.usecases.retry import StreamTurns, until_applied
from service.usecases.streams import hash_shown
from service.usecases.unit_of_work import UnitOfWork
from service.usecases.watching import viewer_seat


@dataclass(frozen=True, kw_only=True)
class PersonMove:
    """A person's move as this use case takes it (the API decodes the body,
    `service/api/moves.py`): `kind` and its bee or stem, the client's `move_id`, and `digest`,
    the fingerprint of the request, which tells a repeat of the move from another move sent
    with the same id."""

    move_id: str
    kind: Literal["tap", "confirm", "take_stem"]
    digest: str
    bee: int | None = None
    stem: int | None = None


class MoveIdReused(Conflict):
    """A `move_id` this player already used in this game, sent with a different body."""


# The refusals whose answer says something about the game (a 4xx with its reason): given to a
# caller only once the token is checked.
_ANSWERS = (Refused, NotFound, Forbidden, Conflict, ConcurrencyConflict)


class Decided(NamedTuple):
    """What `Play.decide` answers: the state after the command (after its first run, for a
    repeat), whether that is this call's own append, and whether the command was a repeat."""

    state: GameState
    appended: bool
    repeat: bool = False


class Moved(NamedTuple):
    """A move's answer: the mover's view after it, and whether the move was a repeat of one
    already applied (its `move_id` seen before: nothing was written this time)."""

    view: GameView
    replayed: bool


# The command to decide on a state of the game; None when the caller has no seat in it.
Intent = Callable[[GameState], Command | None]


@dataclass(slots=True)
class _Request:
    game_id: str
    intent: Intent
    command_id: str
    metadata: dict[str, Any]
    guard: Callable[[], TokenGuard] | None
    # The caller's token checked on its own (`TokenCheck.verify`), before a command is played
    # out (`plays_out`); None when it was checked already.
    verify: Callable[[], Awaitable[None]] | None = None
    # Whether the command id and the token were looked up before playing out (once a request).
    looked_up: bool = False
    # Decide on a fresh read, never on the cached state alone (`Play.decide`).
    fresh: bool = False

    @property
    def stream(self) -> str:
        return stream("game", self.game_id)


def plays_out(state: GameState, command: Command) -> bool:
    """Whether deciding `command` on `state` is the last pick of a turn with another person's
    pick still hidden: its decision goes on into the reveal and the flights, and pauses for that
    person's bee if it is too low, or else starts the next turn (the bee players think, tens of
    milliseconds) or ends the game. So its time says, before the reveal, whether another
    person's hidden pick is too low: such a decision is made only for a move that will be
    written (docs/fairness.md, "Hidden values": a decision oracle). Without another person
    (solo) nothing hidden can pause it: bee players' too-low bees take a stem by rule, and the
    flights are one event a pick whatever the picks; a choice (`take_stem`) comes after the
    reveal."""
    if type(command) is not ConfirmPick or state.phase != "picking":
        return False
    others = [s for s in state.seats if s.number != command.seat and not s.left]
    return all(s.confirmed is not None for s in others) and any(not s.is_bee for s in others)


def command_for(move: PersonMove, seat: int, at: datetime) -> Command:
    match move.kind:
        case "tap":
            assert move.bee is not None
            return TapBee(seat=seat, bee=move.bee, at=at)
        case "confirm":
            return ConfirmPick(seat=seat, bee=move.bee, at=at)
        case "take_stem":
            assert move.stem is not None
            return TakeStem(seat=seat, stem=move.stem, at=at)
    raise AssertionError(f"unknown move {move!r}")  # pragma: no cover


def move_intent(player_id: str, move: PersonMove, clock: Callable[[], datetime]) -> Intent:
    """A person's move as an `Intent`: the command of their seat in the state decided on."""
    return partial(_move_command, player_id, move, clock)


def _move_command(
    player_id: str, move: PersonMove, clock: Callable[[], datetime], state: GameState
) -> Command | None:
    seat = seat_of(state, player_id)
    return None if seat is None else command_for(move, seat, clock())


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
        head = await self.ctx.store.head_link(stream("game", game_id), state.version)
        view = await self._view(state, seat)
        shown = hash_shown(*head, over=state.phase == "ended") if head is not None else None
        return msgspec.structs.replace(view, head_hash=shown)

    async def _view(self, state: GameState, seat: int | None) -> GameView:
        """The view from `seat`, and once an online game has ended, what it paid (the pot, and
        the reward of the person in `seat`: their own, the caller's)."""
        view = game_view(state, seat, self.ctx.clock())
        if state.phase != "ended":
            return view
        pot, reward = await self.deals.money.paid(state, seat)
        return msgspec.structs.replace(view, pot=pot, reward=reward)

    async def submit_move(
        self, player: Player, game_id: str, move: PersonMove, *, check: TokenCheck | None = None
    ) -> Moved:
        """`check`: the caller's bearer token not yet checked for this request (the instance
        knows whose it is): checked inside the move's append, or on its own before any other
        answer (a repeat, a refusal) is given, so a revoked token never gets one."""
        if check is None:
            decided = await self._move(player, game_id, move, guard=None)
        else:
            decided = await self._checked_move(player, game_id, move, check)
        seat = seat_of(decided.state, player.player_id)
        return Moved(await self._view(decided.state, seat), replayed=decided.repeat)

    async def _checked_move(
        self, player: Player, game_id: str, move: PersonMove, check: TokenCheck
    ) -> Decided:
        try:
            decided = await self._move(
                player, game_id, move, guard=check.guard, verify=check.verify
            )
        except GuardRefused:
            check.identity.forget(check.token)
            raise Unauthorized(TOKEN_REFUSED) from None
        except _ANSWERS:
            await check.verify()
            raise
        # Anything else is a 503 (the database) or a 500 (a bug), which say nothing about the
        # game; checking the token first would only make a struggling database wait twice.
        if not decided.appended:
            await check.verify()
        return decided

    async def _move(
        self,
        player: Player,
        game_id: str,
        move: PersonMove,
        guard: Callable[[], TokenGuard] | None,
        verify: Callable[[], Awaitable[None]] | None = None,
    ) -> Decided:
        return await self.decide(
            game_id,
            move_intent(player.player_id, move, self.ctx.clock),
            command_id=f"{player.player_id}:{move.move_id}",
            metadata={
                "causation": move.kind,
                "actor": player.player_id,
                "move_digest": move.digest,
            },
            guard=guard,
            verify=verify,
        )

    async def decide(
        self,
        game_id: str,
        intent: Intent,
        *,
        command_id: str,
        metadata: dict[str, Any],
        guard: Callable[[], TokenGuard] | None = None,
        verify: Callable[[], Awaitable[None]] | None = None,
        fresh: bool = False,
    ) -> Decided:
        """Load → decide (and let the bee players pick) → append, decided again when someone
        else moved first (`retry.until_applied`); decisions about one game take turns on this
        instance (`retry.StreamTurns`). A repeat (the same `command_id`) is answered with the
        state after its first run, or refused with `MoveIdReused` if its
        `metadata["move_digest"]` differs. `guard` gives the check the append must pass
        (`EventLog.append`), `verify` the same check made on its own before a command is played
        out (`plays_out`). `fresh`: decide on a fresh read only, for a caller whose instance's
        cached state is likely behind (the turn clock, `usecases/clock.py`)."""
        request = _Request(game_id, intent, command_id, metadata, guard, verify, fresh=fresh)
        async with self.turns.turn(request.stream):
            return await until_applied(partial(self._attempt, request), what="game")

    async def _attempt(self, request: _Request) -> Decided:
        """This instance's last state of the game is current unless another instance wrote
        since (moves of one stream take turns here): decide on it without a read, and read only
        when that does not end in an append."""
        cached = None if request.fresh else self.repository.cached_game(request.game_id)
        if cached is not None:
            decided = await self._decide_on_cached(cached, request)
            if decided is not None:
                return decided
        return await self._decide_on_fresh(await self.repository.game(request.game_id), request)

    async def _not_yet_written(
        self, request: _Request, state: GameState, command: Command
    ) -> Decided | None:
        """Before a command that `plays_out` is played out: the answer it gets without that,
        when it will not be written (a repeated command id: its first answer; a token revoked
        meanwhile: `Unauthorized`), else None. Two lookups, once a request, for the last pick of
        an online turn only: every other move's decision depends on the mover's own hand and
        what is public (and on the bee players' hands only through how long they think, which
        is the same work whatever their hands)."""
        if request.looked_up or not plays_out(state, command):
            return None
        request.looked_up = True
        if request.verify is not None:
            await request.verify()
        done = await self.ctx.store.command_version(request.stream, request.command_id)
        return None if done is None else await self._repeat(request, done)

    async def _decide_on_cached(self, state: GameState, request: _Request) -> Decided | None:
        """On a cached state (not read for this decision, so possibly behind) only an append
        is final: None for anything else (no seat, a refusal, nothing to do, a conflict), to be
        decided again on a fresh read before it is answered."""
        command = request.intent(state)
        if command is None:
            return None
        unwritten = await self._not_yet_written(request, state, command)
        if unwritten is not None:
            return unwritten
        try:
            after, events = await self._play(state, command)
        except RuleViolation:
            return None
        if not events:
            return None
        try:
            return await self._append(request, state, events, after)
        except ConcurrencyConflict:
            return None

    async def _decide_on_fresh(self, state: GameState, request: _Request) -> Decided:
        command = request.intent(state)
        if command is None:
            raise Forbidden("You do not sit at this game.")
        unwritten = await self._not_yet_written(request, state, command)
        if unwritten is not None:
            return unwritten
        try:
            after, events = await self._play(state, command)
        except RuleViolation:
            # A repeated move is decided on the state after its first run, where it may break
            # a rule (a second confirm): answer it as the repeat it is. Looked up only on this
            # slow path; otherwise the append checks the command id itself.
            done = await self.ctx.store.command_version(request.stream, request.command_id)
            if done is None:
                raise
            return await self._repeat(request, done)
        if not events:
            return Decided(state, appended=False)  # a clock that fired after the game moved on
        return await self._append(request, state, events, after)

    async def _play(self, state: GameState, command: Command) -> tuple[GameState, list[Event]]:
        """The command decided, and the bee players' answers."""
        return await decide_with_bees(state, command, await self.repository.bee_seeds(state))

    async def _append(
        self, request: _Request, state: GameState, events: list[Event], after: GameState
    ) -> Decided:
        """Write the game's events in one unit of work with the command id (and, when they end
        the game, the end of the game: `Deals.conclude`), then deliver what it paid."""
        if after.phase == "ended":
            # The table learns in the same transaction, so play again sees it at once.
            uow = UnitOfWork(self.repository, await self.repository.table(after.table_id))
            uow.game_events(state, events, after)
            await self.deals.conclude(uow, request.game_id, prepare=True)
        else:
            uow = UnitOfWork(self.repository)
            uow.game_events(state, events, after)
        try:
            await uow.commit(
                {"command_id": request.command_id, **request.metadata},
                command=(request.stream, request.command_id),
                guard=request.guard() if request.guard is not None else None,
            )
        except DuplicateCommand as duplicate:
            return await self._repeat(request, duplicate.version)
        await self.deals.money.deliver(uow.transfers)  # the pot and rewards, if it ended
        final = uow.game_state(request.game_id)
        assert final is not None
        return Decided(final, appended=True)

    async def _repeat(self, request: _Request, version: int) -> Decided:
        """The answer to a command already applied at `version`: the state it produced, unless
        its body differs from the first run's (`MoveIdReused`)."""
        digest = request.metadata.get("move_digest")
        if digest is not None:
            recorded = await self.ctx.store.read_stream(
                request.stream, after_version=version - 1, up_to_version=version
            )
            first = recorded[0].metadata.get("move_digest") if recorded else None
            if first is not None and first != digest:
                raise MoveIdReused(
                    "This move_id was already used in this game for a different move; "
                    "send each new move with a new move_id."
                )
        state = await self.repository.game_at(request.game_id, version)
        return Decided(state, appended=False, repeat=True)
