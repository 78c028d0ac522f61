"""The analyses' bound over HTTP, on PostgreSQL: an answer already made is kept, so asking
again costs nothing (timed here at the expert's real work); each player's decisions are
bounded (`SWARM_ANALYSES_PER_HOUR`), past it 429 `too-many-analyses` with Retry-After, which
spends and changes nothing; a kept answer is still given, and other callers are not refused."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.settings import Settings
from tests.e2e.api_client import Api
from tests.e2e.test_solo_api import assert_problem


@pytest.fixture
async def client(database_url: str) -> AsyncIterator[AsyncTestClient[Any]]:
    # 60 decisions an hour: 10 in hand, one back a minute
    settings = Settings.from_env().with_(analyses_per_hour=60)
    async with AsyncTestClient(app=create_app(database_url, settings=settings)) as client:
        yield client


async def _finished(api: Api) -> str:
    game_id: str = (await api.solo_table(players=3))["game"]["game_id"]
    await api.play_to_the_end(game_id)
    return game_id


async def test_asked_again_an_analysis_costs_nothing_and_each_player_s_work_is_bounded(
    client: AsyncTestClient[Any],
) -> None:
    ada = await Api(client).guest("Ada")
    ada_id = (await client.get("/me", headers=ada.headers)).json()["player_id"]
    game_id = await _finished(ada)
    review = f"/games/{game_id}/review"

    started = time.perf_counter()
    first = await client.get(review, params={"seat": 1}, headers=ada.headers)
    first_s = time.perf_counter() - started
    assert first.status_code == 200, first.text
    started = time.perf_counter()
    again = await client.get(review, params={"seat": 1}, headers=ada.headers)
    again_s = time.perf_counter() - started
    assert again.status_code == 200 and again.json() == first.json()
    print(f"analyseGame, 3 seats, seat 1: first {first_s:.3f} s, again {again_s:.3f} s")
    assert again_s < first_s / 5  # ten expert decisions, then none
    exports = client.app.state.service.exports
    spent = exports.players.held(ada_id)
    assert spent < 0.5  # the ten decisions spent the ten in hand (a minute refills one)

    # past the bound: 429 with Retry-After, nothing spent or done; kept answers still given
    turn = f"/games/{game_id}/analysis"
    # when enough is back: one decision a minute, so a turn's 1 minute, a seat's game 10
    for url, params, most in ((turn, {"seat": 2, "turn": 1}, 60), (review, {"seat": 3}, 600)):
        refused = await client.get(url, params=params, headers=ada.headers)
        problem = assert_problem(refused, 429, "too-many-analyses")
        assert "this player" in problem["detail"].lower()
        assert most - 10 <= int(refused.headers["retry-after"]) <= most
    assert (game_id, 2, 1) not in exports._analyses and exports._analysing == 0
    assert exports.players.held(ada_id) < spent + 0.1  # only the minute's refill
    kept = await client.get(turn, params={"seat": 1, "turn": 3}, headers=ada.headers)
    assert kept.status_code == 200 and kept.json()["pick"] == first.json()["turns"][2]["pick"]
    # a running game is 409, not 429: the bound says nothing of a game not over
    running = (await ada.solo_table(players=3))["game"]["game_id"]
    early = await client.get(
        f"/games/{running}/analysis", params={"seat": 1, "turn": 1}, headers=ada.headers
    )
    assert_problem(early, 409, "game-not-over")

    # another player, from the same address, is not refused
    bo = await Api(client).guest("Bo")
    other = await _finished(bo)
    theirs = await client.get(
        f"/games/{other}/analysis", params={"seat": 1, "turn": 1}, headers=bo.headers
    )
    assert theirs.status_code == 200, theirs.text
