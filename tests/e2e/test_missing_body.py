"""A request that needs a body and sends none is told which body: not Litestar's `'data'`."""

from __future__ import annotations

import uuid

import pytest

from tests.e2e.api_client import Api
from tests.e2e.test_solo_api import assert_problem


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("/guests", ["GuestIn", "name (required)"]),
        ("/solo-tables", ["SoloTableIn", "players (optional)", "send {}"]),
        ("/tables", ["TableIn", "seats (optional)"]),
        ("/accounts", ["RegisterIn", "name (required)", "password (required)"]),
    ],
)
@pytest.mark.parametrize("sent", ["no body", "empty json body"])
async def test_a_missing_body_names_the_expected_body(
    ada: Api, path: str, named: list[str], sent: str
) -> None:
    headers = dict(ada.headers)
    if sent == "empty json body":
        headers["content-type"] = "application/json"
    response = await ada.client.post(path, content=b"", headers=headers)
    body = assert_problem(response, 400, "body-required")
    assert body["type"] == "urn:swarm:problem:body-required"
    assert f"POST {path} expects a JSON body" in body["detail"]
    for words in named:
        assert words in body["detail"], body["detail"]
    assert "'data'" not in response.text


async def test_a_move_without_a_body_lists_the_moves(ada: Api) -> None:
    game = (await ada.solo_table())["game"]
    response = await ada.client.post(f"/games/{game['game_id']}/moves", headers=ada.headers)
    body = assert_problem(response, 400, "body-required")
    for words in ['type = "tap"', 'type = "confirm"', 'type = "take_stem"', "move_id (required)"]:
        assert words in body["detail"], body["detail"]


async def test_other_validation_errors_keep_their_messages(ada: Api) -> None:
    response = await ada.client.post("/guests", json={})
    body = assert_problem(response, 400, "bad-request")
    assert "name" in response.text and body["extra"]
    seed = await ada.client.post(
        f"/tables/{uuid.uuid4()}/seed", json={"client_seed": 7}, headers=ada.headers
    )
    assert_problem(seed, 400, "bad-request")


async def test_an_optional_body_may_still_be_left_out(ada: Api) -> None:
    table = await ada.create_table(seats=2)
    bob = await Api(ada.client).guest("Bob")
    joined = await bob.table_action(table["table_id"], "seats")
    assert joined.status_code == 200, joined.text
