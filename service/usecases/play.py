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

from collections.abc import Callable
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
from service.store.port import EventLog
from service.usecases.bee_threads import decide_with_bees
from service.usecases.context import Context, stream
from service.usecases.deals import Deals
from service.usecases.errors import Conflict, Forbidden, NotFound, Unauthorized
from service.usecases.identity import TOKEN_REFUSED, Player, TokenCheck
from service.usecases.ratings import seat_ratings
from service.usecases.repository import Repository
from service.usecases.retry import STALE, Stale, StreamTurns, until_applied
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


class Outcome(NamedTuple):
    """What deciding a command on a game came to (`Play.decide`): the state after it (after its
    first run, for a repeat), whether that is this call's own append, and whether the command
    was a repeat."""

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


@dataclass(frozen=True, slots=True)
class _Request:
    """What `Play.decide` was asked: the command (as an `Intent`), its id and metadata, the
    caller's token when it is still to be checked, and whether to decide on a fresh read only."""

    game_id: str
    intent: Intent
    command_id: str
    metadata: dict[str, Any]
    token: TokenCheck | None
    fresh: bool

    @property
    def stream(self) -> str:
        return stream("game", self.game_id)


class _Lookups:
    """What a request looks up at most once, however often its decision is made again: the
    caller's token on its own (`TokenCheck.verify`), and, before a command that `plays_out`
    is played out, whether its command id was applied already (two lookups, for the last pick
    of an online turn only: every other move's decision depends on the mover's own hand and
    what is public, and on the bee players' hands only through how long they think, which is
    the same work whatever their hands)."""

    def __init__(self, store: EventLog, request: _Request) -> None:
        self._store = store
        self._request = request
        self._token_checked = request.token is None
        self._before_playing_out = False

    async def token(self) -> None:
        """The caller's token checked on its own (`Unauthorized` if it fails), once."""
        if not self._token_checked:
            assert self._request.token is not None
            await self._request.token.verify()
            self._token_checked = True

    async def applied_at(self) -> int | None:
        """Before a command is played out: the version its command id was applied at, if it
        was (the token checked first); None, too, once this request has asked."""
        if self._before_playing_out:
            return None
        self._before_playing_out = True
        await self.token()
        return await self._store.command_version(self._request.stream, self._request.command_id)


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
        ratings = await seat_ratings(self.ctx, self.repository, state)
        return msgspec.structs.replace(view, pot=pot, reward=reward, ratings=ratings)

    async def submit_move(
        self, player: Player, game_id: str, move: PersonMove, *, check: TokenCheck | None = None
    ) -> Moved:
        """`check`: the caller's bearer token not yet checked for this request (the instance
        knows whose it is): checked inside the move's append, or on its own before any other
        answer (a repeat, a refusal) is given, so a revoked token never gets one."""
        outcome = await self.decide(
            game_id,
            move_intent(player.player_id, move, self.ctx.clock),
            command_id=f"{player.player_id}:{move.move_id}",
            metadata={
                "causation": move.kind,
                "actor": player.player_id,
                "move_digest": move.digest,
            },
            token=check,
        )
        seat = seat_of(outcome.state, player.player_id)
        return Moved(await self._view(outcome.state, seat), replayed=outcome.repeat)

    async def decide(
        self,
        game_id: str,
        intent: Intent,
        *,
        command_id: str,
        metadata: dict[str, Any],
        token: TokenCheck | None = None,
        fresh: bool = False,
    ) -> Outcome:
        """Load → decide (and let the bee players pick) → append → answer, decided again when
        someone else moved first (`retry.until_applied`, over `_attempt`'s `Stale`); decisions
        about one game take turns on this instance (`retry.StreamTurns`). A repeat (the same
        `command_id`) is answered with the state after its first run, or refused with
        `MoveIdReused` if its `metadata["move_digest"]` differs. `token`: the caller's token,
        checked inside the append (its `guard`) or, for any other answer, on its own first
        (`_Lookups.token`). `fresh`: decide on a fresh read only, for a caller whose instance's
        cached state is likely behind (the turn clock, `usecases/clock.py`)."""
        request = _Request(game_id, intent, command_id, metadata, token, fresh)
        lookups = _Lookups(self.ctx.store, request)
        try:
            async with self.turns.turn(request.stream):
                outcome = await until_applied(partial(self._attempt, request, lookups), what="game")
        except GuardRefused:
            assert token is not None
            token.identity.forget(token.token)
            raise Unauthorized(TOKEN_REFUSED) from None
        except _ANSWERS:
            await lookups.token()
            raise
        # Anything else is a 503 (the database) or a 500 (a bug), which say nothing about the
        # game; checking the token first would only make a struggling database wait twice.
        if not outcome.appended:
            await lookups.token()
        return outcome

    async def _attempt(self, request: _Request, lookups: _Lookups) -> Outcome | Stale:
        """One decision. This instance's last state of the game is current unless another
        instance wrote since (moves of one stream take turns here): decided on it without a
        read, and on a fresh read when that does not end in an append."""
        cached = None if request.fresh else self.repository.cached_game(request.game_id)
        if cached is not None:
            outcome = await self._decide_on(cached, request, lookups, cached=True)
            if not isinstance(outcome, Stale):
                return outcome
        fresh = await self.repository.game(request.game_id)
        return await self._decide_on(fresh, request, lookups, cached=False)

    async def _decide_on(
        self, state: GameState, request: _Request, lookups: _Lookups, *, cached: bool
    ) -> Outcome | Stale:
        """Decide the command on `state` and append it. On a `cached` state (not read for this
        decision, so possibly behind) only an append is final: anything else (no seat, a
        refusal, nothing to do, a conflict) is `Stale`, decided again on a fresh read before
        it is answered. On a fresh read, a conflict is `Stale` too (someone else moved first)."""
        command = request.intent(state)
        if command is None:
            if cached:
                return STALE
            raise Forbidden("You do not sit at this game.")
        if plays_out(state, command):
            done = await lookups.applied_at()
            if done is not None:
                return await self._repeat(request, done)
        try:
            after, events = await decide_with_bees(
                state, command, await self.repository.bee_seeds(state)
            )
        except RuleViolation:
            if cached:
                return STALE
            # A repeated move is decided on the state after its first run, where it may break
            # a rule (a second confirm): answer it as the repeat it is. Looked up only on this
            # slow path; otherwise the append checks the command id itself.
            done = await self.ctx.store.command_version(request.stream, request.command_id)
            if done is None:
                raise
            return await self._repeat(request, done)
        if not events:
            # On a fresh read: a clock that fired after the game moved on.
            return STALE if cached else Outcome(state, appended=False)
        try:
            return await self._append(request, state, events, after)
        except ConcurrencyConflict:
            return STALE

    async def _append(
        self, request: _Request, state: GameState, events: list[Event], after: GameState
    ) -> Outcome:
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
                guard=request.token.guard() if request.token is not None else None,
            )
        except DuplicateCommand as duplicate:
            return await self._repeat(request, duplicate.version)
        await self.deals.money.deliver(uow.transfers)  # the pot and rewards, if it ended
        final = uow.game_state(request.game_id)
        assert final is not None
        return Outcome(final, appended=True)

    async def _repeat(self, request: _Request, version: int) -> Outcome:
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
        return Outcome(state, appended=False, repeat=True)
