"""Every input the API accepts verifies: a seed or a name that gets through the decoder is one a
game can be dealt with, exported and audited ok (issue 13: `"ab\\n"` used to pass the hex
pattern, be dealt from, and then fail the game's own audit)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.api.bodies import GuestIn, SeedIn
from service.domain.audit import audit
from service.domain.names import InvalidName, display_name, name_pattern
from tests.e2e.api_client import Api

HEX = r"(?:[0-9a-f]{2}){0,64}"
seeds = st.one_of(
    st.from_regex(HEX, fullmatch=True),
    st.from_regex(HEX, fullmatch=True).map(lambda s: s + "\n"),  # the old hole
    st.from_regex(r"[0-9a-fA-F]{0,130}\n?", fullmatch=True),  # near misses: case, odd length
    st.text(max_size=20),
)
names = st.one_of(
    st.text(min_size=1, max_size=41),
    st.text(min_size=1, max_size=38).map(lambda s: s + "\n"),
    st.sampled_from(["Ada", "Ada\n", "\u3000", "\u200b", "\ufeffAda", "\u202eAda", "İLKER7"]),
)


def accepted(kind: type[msgspec.Struct], **body: Any) -> bool:
    try:
        msgspec.json.decode(msgspec.json.encode(body), type=kind)
    except msgspec.ValidationError:
        return False
    return True


@pytest.fixture(scope="module")
async def client(database_url: str) -> AsyncIterator[AsyncTestClient[Any]]:
    app = create_app(database_url, run_clock=False, rate_limit_per_second=0)
    async with AsyncTestClient(app=app) as client:
        yield client


def test_no_pattern_lets_a_trailing_newline_through() -> None:
    assert not accepted(SeedIn, client_seed="ab\n")
    assert accepted(SeedIn, client_seed="ab") and accepted(GuestIn, name="Ada")
    # A name's pattern is the name rule, applied by `display_name` (422 `invalid-name`).
    assert re.search(name_pattern(), "Ada\n") is None and re.search(name_pattern(), "Ada")
    with pytest.raises(InvalidName):
        display_name("Ada\n")


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=names, seed=seeds, other_seed=seeds)
async def test_a_game_dealt_from_accepted_seeds_and_names_passes_its_own_audit(
    client: AsyncTestClient[Any], name: str, seed: str, other_seed: str
) -> None:
    anon = Api(client)
    made = await client.post("/guests", json={"name": name})
    if made.status_code != 201:
        assert made.status_code in (400, 422), made.text  # refused, never a 5xx
        return
    shown = made.json()["name"]
    assert "\n" not in shown and shown.strip() == shown and shown
    host = Api(client, made.json()["token"])
    guest = await anon.guest("Bob")
    table = await host.create_table(seats=2)
    table_id = table["table_id"]
    given_seed = await client.post(
        f"/tables/{table_id}/seed", json={"client_seed": seed}, headers=host.headers
    )
    if not accepted(SeedIn, client_seed=seed):
        assert given_seed.status_code == 400, given_seed.text
        seed = ""
        assert (
            await client.post(
                f"/tables/{table_id}/seed", json={"client_seed": ""}, headers=host.headers
            )
        ).status_code == 200
    else:
        assert given_seed.status_code == 200, given_seed.text
    body = {"client_seed": other_seed} if accepted(SeedIn, client_seed=other_seed) else {}
    joined = await client.post(f"/tables/{table_id}/seats", json=body, headers=guest.headers)
    assert joined.status_code == 200, joined.text
    game_id = joined.json()["games"][-1]
    await guest.ok_table_action(table_id, "leave")  # the host wins at once: the game is over

    exported = await client.get(f"/games/{game_id}/export", headers=host.headers)
    assert exported.status_code == 200, exported.text
    report = audit(exported.json())
    assert report.ok, report.steps
    assert exported.json()["fairness"]["client_seeds"][0] == seed
    verified = await client.get(f"/games/{game_id}/verification", headers=host.headers)
    assert verified.status_code == 200 and verified.json()["ok"], verified.text
