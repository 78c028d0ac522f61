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

import msgspec

from service.domain.history import Moment, Step, moment, states, steps_of
from service.domain.rules.engine import GameState, initial_state
from service.domain.rules.events import Event, decode_event
from service.store.events import RecordedEvent
from service.usecases.context import Context, stream
from service.usecases.errors import VersionNotFound
from service.usecases.identity import Player
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


class TurnSteps(msgspec.Struct, frozen=True, kw_only=True):
    """Where one turn is in the log, by version: ask `getGameState` for any of them.

    Attributes:
        turn: The turn, 1 to 10.
        start: The version of its `turn_started`.
        reveal: The version of its `picks_revealed`; null if the turn was not revealed (yet).
        flights: The versions where a bee of this turn landed, took a stem as the sixth bee,
            was too low, or took a stem, in the order they happened.
        last: The last version of the turn: the one before the next turn starts (the end of
            the game and the revealed deal belong to no turn).
    """

    turn: int
    start: int
    reveal: int | None
    flights: tuple[int, ...]
    last: int


class GameSteps(msgspec.Struct, frozen=True, kw_only=True):
    """Every step of a game, and its turns by version (`listGameSteps`).

    Attributes:
        game_id: The game.
        latest: The game's version now; `steps` has one entry a version, 1 to `latest`.
        over: The game has ended: every step shows its bees.
        steps: Every event as a step, as the caller may see it, version 1 first.
        turns: Each turn's start, reveal, flights and last version, turn 1 first.
    """

    game_id: str
    latest: int
    over: bool
    steps: tuple[Step, ...]
    turns: tuple[TurnSteps, ...]


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

    async def steps(self, player: Player, game_id: str) -> GameSteps:
        """Every step of the game as `player` may see it, and where each turn is."""
        now = await self.repository.game(game_id)
        seat = await viewer_seat(self.repository, now, player)
        known = await self._known(game_id, now.version)
        over = now.phase == "ended"
        listed = steps_of(known.events[: now.version], known.after, seat, over)
        return GameSteps(
            game_id=game_id, latest=now.version, over=over, steps=listed, turns=turns_of(listed)
        )

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


def turns_of(listed: tuple[Step, ...]) -> tuple[TurnSteps, ...]:
    """Each turn's versions, from the steps of a whole log."""
    turns: list[TurnSteps] = []
    for step in listed:
        if step.kind == "turn":
            turns.append(
                TurnSteps(
                    turn=step.turn, start=step.version, reveal=None, flights=(), last=step.version
                )
            )
            continue
        if not turns or step.kind in ("end", "deal_revealed"):
            continue
        current = turns[-1]
        if step.kind == "reveal":
            current = msgspec.structs.replace(current, reveal=step.version)
        elif step.kind in ("landing", "sixth_bee", "too_low", "take"):
            current = msgspec.structs.replace(current, flights=(*current.flights, step.version))
        turns[-1] = msgspec.structs.replace(current, last=step.version)
    return tuple(turns)


__all__ = [
    "GameSteps",
    "Histories",
    "History",
    "StateAt",
    "TurnSteps",
    "VersionNotFound",
    "turns_of",
]
