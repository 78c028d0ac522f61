"""Input is decoded strictly (issue 11): no coercion of strings or fractions to integers (a whole
number written `4.0` is JSON Schema's integer 4, issue 27), JSON bodies only, and a move_id reused
with a different body is refused without changing anything."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.api_client import Api


def assert_problem(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code, response.text


@pytest.mark.parametrize(
    "move",
    [
        {"type": "tap", "bee": "21"},
        {"type": "tap", "bee": 21.5},
        {"type": "tap", "bee": True},
        {"type": "take_stem", "stem": "1"},
        {"type": "confirm", "bee": "3"},
    ],
    ids=["string-bee", "float-bee", "bool-bee", "string-stem", "string-confirm"],
)
async def test_numbers_are_not_coerced(ada: Api, move: dict[str, Any]) -> None:
    game = (await ada.solo_table())["game"]
    before = await ada.events(game["game_id"])
    response = await ada.move(game["game_id"], **move)
    assert_problem(response, 400, "bad-request")
    assert (await ada.events(game["game_id"]))["game_version"] == before["game_version"]


async def test_a_whole_number_written_with_a_fraction_is_an_integer(ada: Api) -> None:
    """JSON Schema's `integer` is any number without a fraction, so the document cannot refuse
    `4.0`; the server takes it as the document says."""
    table = await ada.client.post("/solo-tables", json={"players": 3.0}, headers=ada.headers)
    assert table.status_code == 201, table.text
    game = table.json()["game"]
    assert len(game["seats"]) == 3
    moved = await ada.move(game["game_id"], type="tap", bee=float(game["hand"][0]))
    assert moved.status_code == 200, moved.text
    assert moved.json()["tapped"] == game["hand"][0]


@pytest.mark.parametrize("stem", [0, 5, -1, 1000])
async def test_a_stem_out_of_range_is_one_answer(ada: Api, stem: int) -> None:
    game = (await ada.solo_table())["game"]
    response = await ada.move(game["game_id"], type="take_stem", stem=stem)
    assert_problem(response, 422, "stem-out-of-range")


async def test_table_sizes_are_not_coerced(ada: Api) -> None:
    for body in ({"players": "4"}, {"players": 4.5}):
        response = await ada.client.post("/solo-tables", json=body, headers=ada.headers)
        assert_problem(response, 400, "bad-request")
    response = await ada.client.post("/tables", json={"seats": "3"}, headers=ada.headers)
    assert_problem(response, 400, "bad-request")


async def test_a_body_that_is_not_json_is_a_415(ada: Api) -> None:
    game = (await ada.solo_table())["game"]
    bee = game["hand"][0]
    response = await ada.client.post(
        f"/games/{game['game_id']}/moves",
        content=f'{{"type": "tap", "bee": {bee}, "move_id": "plain"}}',
        headers={**ada.headers, "Content-Type": "text/plain"},
    )
    assert_problem(response, 415, "unsupported-media-type")
    response = await ada.client.post(
        "/guests", content='{"name": "Bo"}', headers={"Content-Type": "text/plain"}
    )
    assert_problem(response, 415, "unsupported-media-type")
    assert (await ada.game(game["game_id"]))["tapped"] is None


async def test_a_body_of_another_json_type_or_two_types_is_refused(ada: Api) -> None:
    """README: bodies must be `application/json`, anything else a 415; a `+json` type was taken
    as JSON (review 4). Two Content-Type headers, which readers resolve differently, are a 400."""
    game = (await ada.solo_table())["game"]
    move = f'{{"type": "tap", "bee": {game["hand"][0]}, "move_id": "typed"}}'
    for kind in ("application/problem+json", "application/vnd.swarm+json", "text/json"):
        response = await ada.client.post(
            f"/games/{game['game_id']}/moves",
            content=move,
            headers={**ada.headers, "Content-Type": kind},
        )
        assert_problem(response, 415, "unsupported-media-type")
    response = await ada.client.post(
        f"/games/{game['game_id']}/moves",
        content=move,
        headers=[
            ("authorization", ada.headers["Authorization"]),
            ("content-type", "application/json"),
            ("content-type", "text/plain"),
        ],
    )
    assert_problem(response, 400, "bad-request")
    assert (await ada.game(game["game_id"]))["tapped"] is None
    response = await ada.client.post(
        f"/games/{game['game_id']}/moves",
        content=move,
        headers={**ada.headers, "Content-Type": "application/json; charset=utf-8"},
    )
    assert response.status_code == 200, response.text


async def test_an_optional_body_may_be_left_out(ada: Api, anon: Api) -> None:
    table = await ada.create_table(seats=2)
    bob = await anon.guest("Bob")
    joined = await bob.client.post(f"/tables/{table['table_id']}/seats", headers=bob.headers)
    assert joined.status_code == 200, joined.text


async def test_a_move_id_reused_for_another_move_is_refused_and_changes_nothing(ada: Api) -> None:
    game = (await ada.solo_table())["game"]
    gid, hand = game["game_id"], game["hand"]
    first = await ada.ok_move(gid, type="tap", bee=hand[0], move_id="same")
    assert first["tapped"] == hand[0]
    response = await ada.move(gid, type="tap", bee=hand[1], move_id="same")
    assert_problem(response, 409, "move-id-reused")
    response = await ada.move(gid, type="confirm", bee=hand[0], move_id="same")
    assert_problem(response, 409, "move-id-reused")
    after = await ada.game(gid)
    assert after["tapped"] == hand[0] and after["confirmed"] is None
    assert after["version"] == first["version"]
    # The very same body again is a repeat: the first answer, nothing written.
    again = await ada.ok_move(gid, type="tap", bee=hand[0], move_id="same")
    assert again["version"] == first["version"] and again["tapped"] == hand[0]
    # Key order and spacing are not part of the move.
    raw = await ada.client.post(
        f"/games/{gid}/moves",
        content=f'{{ "move_id":"same",  "bee": {hand[0]}, "type": "tap"}}',
        headers={**ada.headers, "Content-Type": "application/json"},
    )
    assert raw.status_code == 200, raw.text
