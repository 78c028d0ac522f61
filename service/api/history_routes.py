"""HTTP handlers of a game's history: its state right after any version, and its steps by turn
(the replay, issue 26). Thin: each calls one use case (`service.usecases.history`)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, get
from litestar.params import Parameter

from service.api.dependencies import AUTH, VIEWER, Caller, GameId, Service, strict_body
from service.api.envelopes import VisibleEvent, entry
from service.api.problems import refuses
from service.domain.history import Changes, SeatAt, Step, TurnSteps
from service.domain.views import GameView, PickView, SeatRatingView
from service.usecases.errors import Forbidden, NotFound, VersionNotFound
from service.usecases.history import StateAt, StepsSeen


class GameStateAt(msgspec.Struct, frozen=True, kw_only=True):
    """A game right after one version, as the caller may see it (`getGameState`).

    Attributes:
        game_id: The game.
        version: The version asked for: the state is the one right after this event.
        latest: The game's version now (its last event); versions run from 1 to this.
        over: The game has ended: every hand, tap and pick of every version is shown. While
            it runs, only what the caller's seat saw at `version` is (a spectator sees no
            hand and no unrevealed pick), and `event.hash` is empty.
        event: The event applied last (the one at `version`), as `listGameEvents` shows it
            to the caller.
        step: What that event did, in words and in fields.
        changes: What differs from the answer at `version` − 1 (nothing, at version 1).
        view: The game at `version`, as `getGame` would have shown it to the caller then
            (`server_time` and `head_hash` null; between a reveal and the last landing, while
            the bees fly, `phase` reads `picking` and `in_flight` holds the bees to come).
        seats: Every seat's hand, tap and pick at `version`; null where hidden from the
            caller.
        in_flight: The revealed picks that have not landed yet, lowest first (the ones still
            to fly; empty outside a reveal).
    """

    game_id: str
    version: int
    latest: int
    over: bool
    event: VisibleEvent
    step: Step
    changes: Changes
    view: GameView
    seats: tuple[SeatAt, ...]
    in_flight: tuple[PickView, ...]


def game_state_at(at: StateAt) -> GameStateAt:
    """The use case's answer on the wire, its event in its envelope."""
    shown = at.shown
    return GameStateAt(
        game_id=at.game_id,
        version=at.version,
        latest=at.latest,
        over=at.over,
        event=entry(at.item),  # type: ignore[arg-type]
        step=shown.step,
        changes=shown.changes,
        view=shown.view,
        seats=shown.seats,
        in_flight=shown.in_flight,
    )


class GameSteps(msgspec.Struct, frozen=True, kw_only=True):
    """Every step of a game, and its turns by version (`listGameSteps`).

    Attributes:
        game_id: The game.
        latest: The game's version now; `steps` has one entry a version, 1 to `latest`.
        over: The game has ended: every step shows its bees.
        steps: Every event as a step, as the caller may see it, version 1 first.
        turns: Each turn's start, reveal, flights and last version, turn 1 first.
        ratings: Once a rated game has ended, what it did to each rated person's rating, seat
            by seat (before, after, change), as `getGame`'s `ratings`: `pending` while a change
            is on its way. Null for a casual game, one abandoned, or one still running.
    """

    game_id: str
    latest: int
    over: bool
    steps: tuple[Step, ...]
    turns: tuple[TurnSteps, ...]
    ratings: tuple[SeatRatingView, ...] | None = None


def game_steps(seen: StepsSeen) -> GameSteps:
    """The use case's answer on the wire."""
    return GameSteps(
        game_id=seen.game_id,
        latest=seen.latest,
        over=seen.over,
        steps=seen.steps,
        turns=seen.turns,
        ratings=seen.ratings,
    )


class HistoryController(Controller):
    path = "/games"
    dependencies = VIEWER
    before_request = staticmethod(strict_body)
    tags = ["games"]
    security = AUTH

    @get(
        "/{game_id:uuid}/states/{version:int}",
        operation_id="getGameState",
        summary="The game right after one version (replay)",
    )
    @refuses(NotFound, VersionNotFound, Forbidden)
    async def get_game_state(
        self,
        game_id: GameId,
        version: Annotated[
            int,
            Parameter(
                ge=1,
                le=2**31 - 1,
                description=(
                    "The version to show the game right after: 1 (its first event) to the "
                    "game's `version` now (`latest` in the answer, `version` in getGame)"
                ),
            ),
        ],
        service: Service,
        player: Caller,
    ) -> GameStateAt:
        """The game as it was right after event `version`: the caller's view then, every seat's
        hand and pick as far as the caller may see them, the bees of the reveal still to fly,
        the event applied last (as listGameEvents shows it), what it did in words, and what
        changed since the version before. Once the game has ended everything is public: every
        hand, tap and pick of every version, and each event's hash. While it runs, the caller
        sees only what their seat saw at that version (a spectator of an online table: no hand
        and no unrevealed pick) and no hash. Who may ask: whoever may see the game (a seat,
        anyone at an online table, a solo game's player). A version outside 1 to the game's
        version now is 404 `version-not-found`. Steps by turn (the start, the reveal, each
        bee's flight) are listed by listGameSteps."""
        return game_state_at(await service.history.state_at(player, str(game_id), version))

    @get(
        "/{game_id:uuid}/steps",
        operation_id="listGameSteps",
        summary="Every step of a game, and where each turn is",
    )
    @refuses(NotFound, Forbidden)
    async def list_game_steps(self, game_id: GameId, service: Service, player: Caller) -> GameSteps:
        """Every event of the game as a step (in words and in fields), redacted as
        getGameState redacts it, and each turn's versions: where it starts, where its picks
        are revealed, each bee's flight (a landing, a sixth bee's take, a too-low bee and the
        stem it took), and its last version. Step through a game by event with getGameState
        at version 1, 2, …; by turn with the versions listed here."""
        return game_steps(await service.history.steps(player, str(game_id)))
