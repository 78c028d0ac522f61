"""Rewards cannot be farmed (issue 13, item 6): two accounts of one person playing each other
all day earn at most the daily reward cap each (README "Accounts, coins, XP and badges"); the
next day the rewards come back. XP and the record still count every game."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.domain.ledger import DAILY_REWARD_COINS, FINISH_COINS, SIGN_UP_COINS, WIN_COINS
from tests.e2e.api_client import Api, play_online_to_the_end

GAMES = 1 + DAILY_REWARD_COINS // FINISH_COINS  # enough for each to pass the cap uncapped


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2031, 5, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def farm(database_url: str) -> AsyncIterator[tuple[Clock, Api, Api]]:
    clock = Clock()
    app = create_app(database_url, clock=clock, run_clock=False, rate_limit_per_second=0)
    async with AsyncTestClient(app=app) as client:
        made = []
        for who in ("farmer", "alt"):
            body = {"name": who + uuid.uuid4().hex[:8], "password": "long enough"}
            answer = await client.post("/accounts", json=body)
            assert answer.status_code == 201, answer.text
            made.append(Api(client, answer.json()["token"]))
        yield clock, made[0], made[1]


async def me(api: Api) -> dict[str, Any]:
    answer = await api.client.get("/me", headers=api.headers)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


async def play_games(one: Api, two: Api, games: int) -> None:
    table = await one.create_table(seats=2, turn_seconds=600, choice_seconds=600)
    joined = await two.ok_table_action(table["table_id"], "seats")  # full: the first deal
    game_id = joined["games"][-1]
    for n in range(games):
        await play_online_to_the_end({1: one, 2: two}, game_id)
        if n + 1 < games:
            again = await one.ok_table_action(table["table_id"], "games")
            game_id = again["games"][-1]


async def test_two_accounts_of_one_person_cannot_farm_past_the_daily_cap(
    farm: tuple[Clock, Api, Api],
) -> None:
    clock, farmer, alt = farm
    await play_games(farmer, alt, GAMES)
    for api in (farmer, alt):
        profile = await me(api)
        assert profile["games_played"] == GAMES  # every game still counts for XP and badges
        earned = profile["coins"]["balance"] - SIGN_UP_COINS
        assert 0 < earned <= DAILY_REWARD_COINS, earned

    clock.now += timedelta(days=1)  # a new (UTC) day: rewards again, up to the cap
    before = [(await me(api))["coins"]["balance"] for api in (farmer, alt)]
    await play_games(farmer, alt, 1)
    after = [(await me(api))["coins"]["balance"] for api in (farmer, alt)]
    gains = sorted(b - a for a, b in zip(before, after, strict=True))
    assert gains in ([FINISH_COINS, FINISH_COINS + WIN_COINS], [FINISH_COINS + WIN_COINS] * 2)
