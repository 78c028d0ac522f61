"""Names over HTTP (issue 13, item 8): invisible, control and format names are refused for
guests and accounts; account names are unique by their TS #39 skeleton, case-folded in the app
(never by `lower()` in SQL), so every registered name can log in."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from tests.e2e.test_limits import from_address
from tests.unit.test_names import REFUSED

PASSWORD = "long enough"


def unique() -> str:
    # Letters only: digits and letters share skeletons (0/O, 1/l), which could collide.
    return "".join(chr(ord("a") + int(c, 16) % 26) for c in uuid.uuid4().hex[:10])


@pytest.mark.parametrize("raw", REFUSED.values(), ids=REFUSED.keys())
async def test_hidden_names_are_refused_for_guests_and_accounts(
    client: AsyncTestClient[Any], raw: str
) -> None:
    guest = await client.post("/guests", json={"name": raw})
    assert guest.status_code in (400, 422), guest.text
    account = await client.post("/accounts", json={"name": raw, "password": PASSWORD})
    assert account.status_code in (400, 422), account.text


async def register(client: AsyncTestClient[Any], name: str) -> Any:
    return await client.post("/accounts", json={"name": name, "password": PASSWORD})


@pytest.mark.parametrize(
    "twin",
    [
        lambda n: n.replace("a", "\u0430", 1),  # a Cyrillic а
        lambda n: "".join(chr(ord(c) + 0xFEE0) for c in n),  # fullwidth
        lambda n: n[:3] + " " + n[3:],  # a space
        lambda n: n.upper(),
    ],
    ids=["cyrillic", "fullwidth", "space", "case"],
)
async def test_look_alike_account_names_are_taken(client: AsyncTestClient[Any], twin: Any) -> None:
    name = "a" + unique()
    assert (await register(client, name)).status_code == 201
    again = await register(client, twin(name))
    assert again.status_code == 409, again.text
    assert again.json()["code"] == "name-taken"


@pytest.fixture(scope="module")
async def own_address(database_url: str) -> AsyncIterator[AsyncTestClient[Any]]:
    """A client of its own address: logins here never meet the suite's failed ones."""
    app = create_app(database_url, run_clock=False)
    async with AsyncTestClient(app=from_address(app)) as client:
        yield client


@pytest.mark.parametrize("stem", ["İLKER", "ΣΑΣ", "Straße"])
async def test_every_registered_name_can_log_in(
    own_address: AsyncTestClient[Any], stem: str
) -> None:
    client = own_address
    name = stem + unique()
    made = await register(client, name)
    assert made.status_code == 201, made.text
    for typed in (name, name.lower(), name.upper()):
        login = await client.post("/sessions", json={"name": typed, "password": PASSWORD})
        assert login.status_code == 201, (typed, login.text)
        assert login.json()["player_id"] == made.json()["player_id"]


async def test_names_are_shown_normalised(client: AsyncTestClient[Any]) -> None:
    made = await client.post("/guests", json={"name": "  Ａｄａ   Lovelace "})
    assert made.status_code == 201, made.text
    assert made.json()["name"] == "Ada Lovelace"


async def test_a_name_past_the_schemas_bounds_is_400_as_the_document_says(
    client: AsyncTestClient[Any],
) -> None:
    """Review 4: the document's Name said every refusal was 422 `invalid-name`, but an empty
    name or one over 40 characters as sent is refused by the schema's bounds: 400."""
    document = json.loads(
        (Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text()
    )
    described = document["components"]["schemas"]["Name"]["description"]
    assert "400 `bad-request`" in described and "422 `invalid-name`" in described
    for raw in ("", "a" * 41):
        answer = await client.post("/guests", json={"name": raw})
        assert answer.status_code == 400 and answer.json()["code"] == "bad-request", answer.text
    hidden = await client.post("/guests", json={"name": "\u200b"})
    assert hidden.status_code == 422 and hidden.json()["code"] == "invalid-name", hidden.text
