"""HTTP handlers of a game's history: its state right after any version, and its steps by turn
(the replay, issue 26). Thin: each calls one use case (`service.usecases.history`)."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from litestar import Controller, get
from litestar.params import FromPath, Parameter

from service.api.dependencies import AUTH, VIEWER, Caller, Service, strict_body
from service.api.problems import refuses
from service.usecases.errors import Forbidden, NotFound, VersionNotFound
from service.usecases.history import GameStateAt, GameSteps


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
        game_id: FromPath[UUID],
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
        return await service.history.state_at(player, str(game_id), version)

    @get(
        "/{game_id:uuid}/steps",
        operation_id="listGameSteps",
        summary="Every step of a game, and where each turn is",
    )
    @refuses(NotFound, Forbidden)
    async def list_game_steps(
        self, game_id: FromPath[UUID], service: Service, player: Caller
    ) -> GameSteps:
        """Every event of the game as a step (in words and in fields), redacted as
        getGameState redacts it, and each turn's versions: where it starts, where its picks
        are revealed, each bee's flight (a landing, a sixth bee's take, a too-low bee and the
        stem it took), and its last version. Step through a game by event with getGameState
        at version 1, 2, …; by turn with the versions listed here."""
        return await service.history.steps(player, str(game_id))
