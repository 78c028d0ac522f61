"""HTTP handlers of guests and health: parse, call one use case, return its view. No rules and
no SQL here; the tables' handlers are in `table_routes`, the games' in `game_routes`.

Each handler has a stable `operation_id`: clients and the contract tests use these names."""

from __future__ import annotations

from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.params import JSONBody

from service.api.bodies import NO_STORE, GuestIn, GuestOut, Health
from service.api.dependencies import BODY, Service, strict_body
from service.api.limits import client_address
from service.api.problems import refuses
from service.domain.names import InvalidName
from service.store.pool import ping
from service.usecases.identity import TooManySignUps


class GuestController(Controller):
    path = "/guests"
    before_request = staticmethod(strict_body)
    tags = ["players"]

    @post(
        "/",
        operation_id="createGuest",
        summary="Create a guest",
        status_code=201,
        cache_control=NO_STORE,
        opt={BODY: "The name to show at tables."},
    )
    @refuses(InvalidName, TooManySignUps)
    async def create_guest(
        self, data: JSONBody[GuestIn], service: Service, request: Request[object, object, State]
    ) -> GuestOut:
        """A guest identity to play with: no account needed for solo play."""
        player, token, expires_at = await service.identity.create_guest_session(
            data.name, client_address(request)
        )
        return GuestOut(
            player_id=player.player_id, name=player.name, token=token, expires_at=expires_at
        )


@get(
    "/health",
    operation_id="health",
    summary="Liveness and database readiness",
    tags=["operations"],
    before_request=strict_body,
)
@refuses()
async def health(state: State) -> Health:
    """Liveness and database readiness."""
    await ping(state.pool)
    return Health(status="ok", database="ok")
