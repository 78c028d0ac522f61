"""A game as it was right after any version (`getGameState`), and its steps by turn
(`listGameSteps`): the replay of issue 26.

Each answer is folded from the game's log through the rules engine (`domain/history.py`) and
redacted as the live views are: once the game has ended everything is public; while it runs, a
caller sees at version V only what their seat saw then (a spectator: no hand, no unrevealed
pick), and no hash at all (`hash` is empty), so nothing hidden can be tried against one.

Who may ask: whoever may see the game now (`watching.viewer_seat`): a seat, anyone at an online
table as a spectator, a solo game's player alone.

The log is append-only and a stored event never changes, so each instance keeps, for recently
replayed games, the events read so far and the state after each (`Histories`, least recently
used dropped first) and only ever reads what came after.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from service.domain.history import Moment, Step, TurnSteps, moment, states, steps_of, turns_of
from service.domain.rules.engine import GameState, initial_state
from service.domain.rules.events import Event, decode_event
from service.domain.views import SeatRatingView
from service.store.log import RecordedEvent
from service.usecases.context import Context, stream
from service.usecases.errors import VersionNotFound
from service.usecases.identity import Player
from service.usecases.ratings import seat_ratings
from service.usecases.repository import Repository
from service.usecases.streams import LogItem, visible_events
from service.usecases.watching import viewer_seat


@dataclass(frozen=True)
class StateAt:
    """`state_at`'s answer: the game right after `version`, as the caller may see it (`shown`),
    with the event at `version` (`item`, its hash empty while the game runs). The API's
    `GameStateAt` is this on the wire."""

    game_id: str
    version: int
    latest: int
    over: bool
    item: LogItem
    shown: Moment


@dataclass(frozen=True)
class StepsSeen:
    """`steps`' answer: every step of the game as the caller may see it (version 1 first), each
    turn's versions, and where the game is now; once a rated game has ended, what it did to
    each rated person's rating (`ratings`, as `getGame` gives it). The API's `GameSteps` is
    this on the wire."""

    game_id: str
    latest: int
    over: bool
    steps: tuple[Step, ...]
    turns: tuple[TurnSteps, ...]
    ratings: tuple[SeatRatingView, ...] | None = None


@dataclass
class _Known:
    """What this instance has read of one game's log: event i is at version i + 1, and
    `after[i]` is the state right after it."""

    recorded: list[RecordedEvent] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    after: list[GameState] = field(default_factory=list)

    def state(self, version: int) -> GameState:
        return self.after[version - 1] if version > 0 else initial_state


class Histories:
    """Recently replayed games' logs and states, least recently used dropped first."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._games: OrderedDict[str, _Known] = OrderedDict()

    def get(self, game_id: str) -> _Known:
        known = self._games.get(game_id)
        if known is None:
            known = self._games[game_id] = _Known()
        self._games.move_to_end(game_id)
        while len(self._games) > self.capacity:
            self._games.popitem(last=False)
        return known


class History:
    def __init__(
        self, ctx: Context, repository: Repository, cache: Histories | None = None
    ) -> None:
        self.ctx = ctx
        self.repository = repository
        self.cache = cache or Histories()

    async def state_at(self, player: Player, game_id: str, version: int) -> StateAt:
        """The game right after `version`, as `player` may see it (VersionNotFound outside
        1 to the game's version now)."""
        now = await self.repository.game(game_id)
        seat = await viewer_seat(self.repository, now, player)
        if not 1 <= version <= now.version:
            raise VersionNotFound(
                f"Game {game_id} has versions 1 to {now.version}; there is no version {version}."
            )
        known = await self._known(game_id, now.version)
        over = now.phase == "ended"
        event = known.events[version - 1]
        shown = moment(known.state(version - 1), known.state(version), event, seat, over)
        item = visible_events([known.recorded[version - 1]], seat, over)[0]
        if not over:
            item = item._replace(hash="")
        return StateAt(game_id, version, now.version, over, item, shown)

    async def steps(self, player: Player, game_id: str) -> StepsSeen:
        """Every step of the game as `player` may see it, and where each turn is."""
        now = await self.repository.game(game_id)
        seat = await viewer_seat(self.repository, now, player)
        known = await self._known(game_id, now.version)
        over = now.phase == "ended"
        listed = steps_of(known.events[: now.version], known.after, seat, over)
        ratings = await seat_ratings(self.ctx, self.repository, now) if over else None
        return StepsSeen(game_id, now.version, over, listed, turns_of(listed), ratings)

    async def _known(self, game_id: str, version: int) -> _Known:
        """The cached log of the game, read on to at least `version`."""
        known = self.cache.get(game_id)
        have = len(known.recorded)
        if have >= version:
            return known
        recorded = await self.ctx.store.read_stream(
            stream("game", game_id), after_version=have, up_to_version=version
        )
        # Another request may have read on meanwhile: keep only what follows what is known.
        fresh = [r for r in recorded if r.version > len(known.recorded)]
        if fresh and fresh[0].version == len(known.recorded) + 1:
            events = [decode_event(r.data) for r in fresh]
            known.after += states(events, known.state(len(known.recorded)))
            known.events += events
            known.recorded += fresh
        assert len(known.after) >= version, (game_id, version, len(known.after))
        return known


__all__ = ["Histories", "History", "StateAt", "StepsSeen", "VersionNotFound"]
