"""A move's bearer token is checked inside the move's append once an instance knows whose token
it is (migration 0014, `require_token`): one round trip fewer, and exactly as strict. A token
revoked on one instance fails at once on the other, whatever the move would have been
answered with: an applied move, a repeat (the view it gave), or a refusal for a rule."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.store.pool import Pool
from tests.e2e.api_client import Api, without_server_time


@pytest.fixture(scope="module")
async def instance_a(database_url: str) -> AsyncIterator[AsyncTestClient[Any]]:
    async with AsyncTestClient(app=create_app(database_url, run_clock=False)) as client:
        yield client


@pytest.fixture(scope="module")
async def instance_b(database_url: str) -> AsyncIterator[AsyncTestClient[Any]]:
    async with AsyncTestClient(app=create_app(database_url, run_clock=False)) as client:
        yield client


@pytest.fixture(scope="module")
async def instance_c(database_url: str) -> AsyncIterator[AsyncTestClient[Any]]:
    async with AsyncTestClient(app=create_app(database_url, run_clock=False)) as client:
        yield client


async def _version(pool: Pool, game_id: str) -> int:
    return int(
        await pool.fetchval(
            "select coalesce(max(version), 0) from events where stream = $1", f"game-{game_id}"
        )
    )


async def test_a_token_revoked_on_one_instance_moves_nothing_on_another(
    instance_a: AsyncTestClient[Any],
    instance_b: AsyncTestClient[Any],
    instance_c: AsyncTestClient[Any],
    pool: Pool,
) -> None:
    on_a = await Api(instance_a).guest("Rey")
    on_b, on_c = Api(instance_b, on_a.token), Api(instance_c, on_a.token)
    table = await on_a.solo_table()
    game_id = table["game"]["game_id"]
    hand = table["game"]["hand"]

    # Both instances learn whose token it is (the first move on each checks it on its own);
    # from then on the check rides in the append.
    await on_a.ok_move(game_id, type="confirm", bee=hand[0], move_id="first")
    view = await on_b.game(game_id)
    if view["phase"] == "choosing":
        view = await on_b.ok_move(game_id, type="take_stem", stem=view["choice"]["cheapest"])
    second_bee = view["hand"][0]
    second = await on_b.ok_move(game_id, type="confirm", bee=second_bee, move_id="second")
    view = await on_b.ok_move(game_id, **_next_move(second), move_id="third")
    view = await on_c.ok_move(game_id, **_next_move(view), move_id="fourth")
    before = await _version(pool, game_id)
    assert before == view["version"]
    # (a repeat is answered with the view it gave, before the logout)
    again = await on_b.ok_move(game_id, type="confirm", bee=second_bee, move_id="second")
    assert without_server_time(again) == without_server_time(second)

    out = await instance_a.delete("/sessions/current", headers=on_a.headers)
    assert out.status_code == 204, out.text

    # Every instance knows whose token it is. A valid move, a repeat of an applied one (same
    # id, same body) and a move the rules refuse are all 401, with nothing in them; each kind
    # is the first an instance gets (a refused token is forgotten, so what follows on that
    # instance is checked on its own anyway).
    valid = _next_move(view) | {"move_id": "after-logout"}
    repeat = {"type": "confirm", "bee": second_bee, "move_id": "second"}
    refused = {"type": "take_stem", "stem": 1, "move_id": "refused"}
    for client, attempts in (
        (instance_c, [valid, repeat, refused]),
        (instance_b, [repeat, valid, refused]),
        (instance_a, [refused, valid, repeat]),
    ):
        for move in attempts:
            response = await client.post(f"/games/{game_id}/moves", json=move, headers=on_a.headers)
            assert response.status_code == 401, (move, response.text)
            assert response.json()["code"] == "unauthorized"
            assert "hand" not in response.text
    assert await _version(pool, game_id) == before  # nothing was appended


def _next_move(view: dict[str, Any]) -> dict[str, Any]:
    if view["phase"] == "choosing" and view["choice"] and view["choice"]["yours"]:
        return {"type": "take_stem", "stem": view["choice"]["cheapest"]}
    return {"type": "confirm", "bee": view["hand"][0]}
