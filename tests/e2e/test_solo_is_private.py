"""A solo game is its player's alone, ended or not (review 4): getGame, its log, steps, states
and streams were 403 for anyone else, but exportGame, verifyGame and analyseTurn (analyseGame
since, tested here too) opened a stranger's finished solo game (every hand and pick of it)
and, before its end, answered 409 `game-not-over`, telling a stranger that the game was still
running. Now each is 403 `forbidden` for anyone but its player, before and after the end; its
player, and anyone for an online game, are answered as before."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.domain.rules import expert
from tests.e2e.api_client import Api, play_online_to_the_end

OPENINGS = ("/export", "/verification", "/analysis?seat=2&turn=1", "/review?seat=2")


@pytest.fixture(autouse=True)
def small_analyses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server runs in this process: its analyses on a small budget (the same code)."""
    monkeypatch.setattr(expert, "WORK", 20_000)


@pytest.fixture(scope="module")
async def client(database_url: str) -> AsyncIterator[AsyncTestClient[Any]]:
    app = create_app(database_url, run_clock=False, rate_limit_per_second=0)
    async with AsyncTestClient(app=app) as client:
        yield client


async def test_a_stranger_opens_no_solo_game_running_or_ended(
    client: AsyncTestClient[Any],
) -> None:
    owner = await Api(client).guest("Ada")
    stranger = await Api(client).guest("Mallory")
    game_id = (await owner.solo_table(players=2))["game"]["game_id"]
    for opening in OPENINGS:
        running = await client.get(f"/games/{game_id}{opening}", headers=stranger.headers)
        assert running.status_code == 403, (opening, running.text)
        assert running.json()["code"] == "forbidden"
        assert running.headers["content-type"] == "application/problem+json"
    await owner.play_to_the_end(game_id)
    for opening in OPENINGS:
        ended = await client.get(f"/games/{game_id}{opening}", headers=stranger.headers)
        assert ended.status_code == 403, (opening, ended.text)
        assert ended.json()["code"] == "forbidden" and "hands" not in ended.text
        own = await client.get(f"/games/{game_id}{opening}", headers=owner.headers)
        assert own.status_code == 200, (opening, own.text)
    export = (await client.get(f"/games/{game_id}/export", headers=owner.headers)).json()
    assert export["fairness"]["hands"][1]  # the owner sees the bee's hand after the end
    assert (await client.get(f"/games/{game_id}/verification", headers=owner.headers)).json()["ok"]


async def test_anyone_opens_an_online_game_once_it_has_ended(
    client: AsyncTestClient[Any],
) -> None:
    hana = await Api(client).guest("Hana")
    bob = await Api(client).guest("Bob")
    watcher = await Api(client).guest("Wendy")
    table = await hana.create_table(seats=2)
    await bob.ok_table_action(table["table_id"], "seats")
    game_id = (await hana.table(table["table_id"]))["games"][-1]
    running = await client.get(f"/games/{game_id}/export", headers=watcher.headers)
    assert running.status_code == 409 and running.json()["code"] == "game-not-over"
    await play_online_to_the_end({1: hana, 2: bob}, game_id)
    for opening in OPENINGS:
        ended = await client.get(f"/games/{game_id}{opening}", headers=watcher.headers)
        assert ended.status_code == 200, (opening, ended.text)


async def test_joining_a_solo_table_says_why_not(client: AsyncTestClient[Any]) -> None:
    """Its player already sits there (409 `already-seated`); anyone else may not (403
    `not-permitted`). Both were 403 `not-seated`, whose remedy is to join the table."""
    owner = await Api(client).guest("Ada")
    stranger = await Api(client).guest("Mallory")
    table = await owner.solo_table(players=2)
    before = await owner.table(table["table_id"])
    own = await owner.table_action(table["table_id"], "seats")
    assert own.status_code == 409 and own.json()["code"] == "already-seated", own.text
    other = await stranger.table_action(table["table_id"], "seats")
    assert other.status_code == 403 and other.json()["code"] == "not-permitted", other.text
    after = await owner.table(table["table_id"])
    assert (
        after["seats"] == before["seats"] and after["game"]["version"] == before["game"]["version"]
    )
