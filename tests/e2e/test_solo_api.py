"""The solo API as a client sees it: views, hidden information, idempotency, refusals."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.api.problems import retryable
from tests.deals import seeds_where
from tests.e2e.api_client import Api, first_of, without_server_time


def assert_problem(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["title"]
    # Whether to resend it as is, by category (issue 44, item 11): every problem says so.
    assert body["retryable"] is retryable(body["code"]), body
    if code is not None:
        assert body["code"] == code, body
    return body


async def test_create_solo_table_seats_bees_in_the_seed_order(ada: Api) -> None:
    table = await ada.solo_table(players=8)
    names = [s["name"] for s in table["seats"]]
    assert names == ["Ada", "Buzz", "Bumble", "Honey", "Clover", "Pollen", "Nectar", "Waggle"]
    assert [s["kind"] for s in table["seats"]] == ["person"] + ["bee"] * 7
    game = table["game"]
    assert [s["seat"] for s in game["seats"]] == list(range(1, 9))
    assert [s["stem"] for s in game["stems"]] == [1, 2, 3, 4]
    # Bees pick at once: only the person is still picking.
    assert [s["status"] for s in game["seats"]] == ["picking"] + ["confirmed"] * 7


async def test_default_table_has_four_players(ada: Api) -> None:
    response = await ada.client.post("/solo-tables", json={}, headers=ada.headers)
    assert response.status_code == 201
    assert len(response.json()["seats"]) == 4


async def test_view_shows_forecast_for_each_bee_in_hand(ada: Api) -> None:
    game = (await ada.solo_table())["game"]
    assert [f["bee"] for f in game["forecast"]] == game["hand"]
    tops = [stem["bees"][-1] for stem in game["stems"]]
    for f in game["forecast"]:
        below = [t for t in tops if t < f["bee"]]
        assert f["too_low"] == (not below)
        if below:
            assert game["stems"][f["stem"] - 1]["bees"][-1] == max(below)


async def test_view_never_shows_another_hand_or_an_unrevealed_pick(ada: Api) -> None:
    game = (await ada.solo_table())["game"]
    gid = game["game_id"]
    log = await ada.events(gid)
    started = first_of(log, "game_started")
    assert started["type"] == "game_started"
    hands = started["data"]["hands"]
    assert hands[0] == sorted(hands[0]) or sorted(hands[0]) == game["hand"]
    assert sorted(hands[0]) == game["hand"] and hands[1:] == [None, None, None]
    confirmed = [e for e in log["events"] if e["type"] == "pick_confirmed"]
    assert len(confirmed) == 3 and all(e["data"]["bee"] is None for e in confirmed)
    # After the game, everything is published.
    await ada.play_to_the_end(gid)
    final_log = await ada.events(gid)
    assert all(h is not None for h in first_of(final_log, "game_started")["data"]["hands"])


@pytest.fixture
async def second_lowest_lands(database_url: str) -> AsyncIterator[Api]:
    """Ada at an app whose 4-seat deals give her a second-lowest bee that lands on a stem."""
    wanted = seeds_where(4, lambda hands, stems: sorted(hands[0])[1] > min(stems))
    async with AsyncTestClient(app=create_app(database_url, server_seeds=wanted)) as client:
        yield await Api(client).guest("Ada")


async def test_tap_is_changeable_and_confirm_is_final(second_lowest_lands: Api) -> None:
    ada = second_lowest_lands
    game = (await ada.solo_table())["game"]
    gid, hand = game["game_id"], game["hand"]
    view = await ada.ok_move(gid, type="tap", bee=hand[0])
    assert view["tapped"] == hand[0] and view["seats"][0]["status"] == "tapped"
    view = await ada.ok_move(gid, type="tap", bee=hand[1])
    assert view["tapped"] == hand[1]
    view = await ada.ok_move(gid, type="confirm")
    assert view["phase"] == "picking" and view["turn"] == 2  # hand[1] was not too low
    response = await ada.move(gid, type="take_stem", stem=1)
    assert_problem(response, 409, "not-your-decision")


async def test_the_same_move_sent_twice_writes_once(ada: Api) -> None:
    game = (await ada.solo_table())["game"]
    gid = game["game_id"]
    first = await ada.ok_move(gid, type="confirm", bee=game["hand"][0], move_id="once")
    again = await ada.ok_move(gid, type="confirm", bee=game["hand"][0], move_id="once")
    assert without_server_time(again) == without_server_time(first)
    log = await ada.events(gid)
    assert log["game_version"] == first["version"]


async def test_play_again_deals_a_new_game_at_the_same_table(ada: Api) -> None:
    table = await ada.solo_table(players=3)
    tid, gid = table["table_id"], table["game"]["game_id"]
    refused = await ada.client.post(f"/tables/{tid}/games", headers=ada.headers)
    assert_problem(refused, 409, "game-in-progress")
    await ada.play_to_the_end(gid)
    again = await ada.client.post(f"/tables/{tid}/games", headers=ada.headers)
    assert again.status_code == 201, again.text
    body = again.json()
    assert body["games"][0] == gid and body["game"]["game_id"] == body["games"][1] != gid
    assert body["game"]["turn"] == 1
    assert (await ada.client.get(f"/tables/{tid}", headers=ada.headers)).json()["games"] == body[
        "games"
    ]


async def test_health(client: AsyncTestClient[Any]) -> None:
    response = await client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}


# --- bad input: a clear 4xx problem, and nothing changes -------------------------------------


async def test_missing_or_unknown_token_is_401(anon: Api, ada: Api) -> None:
    game = (await ada.solo_table())["game"]
    assert_problem(await anon.client.get(f"/games/{game['game_id']}"), 401, "unauthorized")
    stranger = Api(ada.client, "not-a-token")
    assert_problem(
        await stranger.client.get(f"/games/{game['game_id']}", headers=stranger.headers), 401
    )


async def test_someone_elses_token_is_403_and_changes_nothing(ada: Api, anon: Api) -> None:
    game = (await ada.solo_table())["game"]
    gid = game["game_id"]
    bob = await anon.guest("Bob")
    assert_problem(await bob.move(gid, type="confirm", bee=game["hand"][0]), 403, "forbidden")
    assert_problem(await bob.client.get(f"/games/{gid}", headers=bob.headers), 403)
    assert_problem(await bob.client.get(f"/tables/{game['table_id']}", headers=bob.headers), 403)
    assert (await ada.game(gid))["version"] == game["version"]


async def test_unknown_ids_are_404(ada: Api) -> None:
    missing = uuid.uuid4()
    assert_problem(await ada.client.get(f"/games/{missing}", headers=ada.headers), 404, "not-found")
    assert_problem(await ada.client.get(f"/tables/{missing}", headers=ada.headers), 404)
    assert_problem(await ada.move(str(missing), type="tap", bee=1), 404)
    assert_problem(await ada.client.get("/games/not-a-uuid", headers=ada.headers), 404)


async def test_malformed_moves_are_400_and_change_nothing(ada: Api) -> None:
    game = (await ada.solo_table())["game"]
    gid = game["game_id"]
    bad_bodies: list[Any] = [
        {"type": "tap", "bee": "twelve", "move_id": "a"},
        {"type": "tap", "bee": 3, "move_id": "a", "extra": 1},
        {"type": "fly", "bee": 3, "move_id": "a"},
        {"type": "tap", "bee": 3},
        {"type": "tap", "bee": 3, "move_id": ""},
        [],
        "tap",
    ]
    for body in bad_bodies:
        assert_problem(
            await ada.client.post(f"/games/{gid}/moves", json=body, headers=ada.headers), 400
        )
    not_json = await ada.client.post(
        f"/games/{gid}/moves",
        content=b"{not json",
        headers={**ada.headers, "Content-Type": "application/json"},
    )
    assert_problem(not_json, 400)
    assert (await ada.game(gid))["version"] == game["version"]


async def test_oversized_body_is_413(ada: Api) -> None:
    game = (await ada.solo_table())["game"]
    big = {"type": "tap", "bee": 1, "move_id": "x" * 20, "pad": "y" * 100_000}
    response = await ada.client.post(
        f"/games/{game['game_id']}/moves", json=big, headers=ada.headers
    )
    assert_problem(response, 413)


async def test_rule_violations_are_409_or_400_with_their_code(ada: Api) -> None:
    game = (await ada.solo_table())["game"]
    gid, hand = game["game_id"], game["hand"]
    not_mine = next(b for b in range(1, 45) if b not in hand)
    assert_problem(await ada.move(gid, type="tap", bee=not_mine), 409, "bee-not-in-hand")
    assert_problem(await ada.move(gid, type="confirm"), 409, "nothing-tapped")
    # A stem outside 1-4 has one answer, the rules' (docs/rules.md, docs/errors.md, issue 27).
    assert_problem(await ada.move(gid, type="take_stem", stem=9), 422, "stem-out-of-range")
    assert_problem(await ada.move(gid, type="tap", bee=0), 400, "bad-request")
    assert_problem(await ada.move(gid, type="take_stem", stem=2), 409, "not-your-decision")
    assert (await ada.game(gid))["version"] == game["version"]


async def test_moves_after_the_end_are_refused(ada: Api) -> None:
    game = (await ada.solo_table(players=2))["game"]
    final = await ada.play_to_the_end(game["game_id"])
    response = await ada.move(game["game_id"], type="tap", bee=1)
    assert_problem(response, 409, "game-over")
    assert (await ada.game(game["game_id"]))["version"] == final["version"]


async def test_bad_guest_names_and_player_counts_are_400(anon: Api, ada: Api) -> None:
    for body in [{}, {"name": ""}, {"name": "x" * 41}, {"name": 3}]:
        assert_problem(await anon.client.post("/guests", json=body), 400)
    for players in [1, 9, "four"]:
        response = await ada.client.post(
            "/solo-tables", json={"players": players}, headers=ada.headers
        )
        assert_problem(response, 400)


async def test_every_response_carries_a_request_id(ada: Api) -> None:
    response = await ada.client.get("/health", headers={"X-Request-ID": "trace-me"})
    assert response.headers["x-request-id"] == "trace-me"


@pytest.mark.parametrize("after", [2147482648, 2147483647])
async def test_the_last_pages_of_the_log_are_empty_not_an_error(ada: Api, after: int) -> None:
    """`after + limit` past the largest version a log can hold (int4) is an empty page, not a
    500 (issue 27)."""
    game = (await ada.solo_table())["game"]
    response = await ada.client.get(
        f"/games/{game['game_id']}/events",
        params={"after": after, "limit": 1000},
        headers=ada.headers,
    )
    assert response.status_code == 200, response.text
    assert response.json()["events"] == []
