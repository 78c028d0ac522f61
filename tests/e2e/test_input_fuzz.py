"""No 5xx from input (issue 13, item 5): integers beyond every bound, NUL characters and lone
surrogates in any string (a `move_id` too), and JSON nested deep under the body limit, sent to
every operation that takes a body or a query, are answered 4xx problems."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from tests.e2e.api_client import Api

BIG = [2**31, 2**31 - 1 + 1, 2**63, 2**64, 10**30, -(2**63) - 1, -1]
NASTY = ["\x00", "a\x00b", "\ud800", "x\udfff", "\udc00\ud800", "\ud83d"]


class Deep:
    """JSON nested `depth` levels around `inner`, written out without recursion."""

    def __init__(self, depth: int, inner: Any = 1, kind: str = "list") -> None:
        self.depth, self.inner, self.kind = depth, inner, kind

    def text(self) -> str:
        left, right = ("[", "]") if self.kind == "list" else ('{"a":', "}")
        return left * self.depth + json.dumps(self.inner) + right * self.depth


def deep(depth: int, inner: Any = 1, kind: str = "list") -> Deep:
    return Deep(depth, inner, kind)


_HOLE = "\x01deep\x01"


def raw(value: Any) -> bytes:
    """JSON text that may hold lone surrogates (as \\u escapes, the only way JSON can) and one
    deeply nested value."""
    if isinstance(value, Deep):
        return value.text().encode()
    nested = [v for v in (value.values() if isinstance(value, dict) else []) if isinstance(v, Deep)]
    if nested:
        value = {k: (_HOLE if isinstance(v, Deep) else v) for k, v in value.items()}
    text = json.dumps(value, ensure_ascii=True)
    if nested:
        text = text.replace(json.dumps(_HOLE), nested[0].text())
    return text.encode()


@pytest.fixture(scope="module")
async def setup(database_url: str) -> AsyncIterator[tuple[AsyncTestClient[Any], dict[str, str]]]:
    app = create_app(database_url, run_clock=False, rate_limit_per_second=0)
    async with AsyncTestClient(app=app) as client:
        ada = await Api(client).guest("Ada")
        solo = await ada.solo_table()
        table = await ada.create_table(seats=4)
        yield (
            client,
            {
                "token": ada.token or "",
                "game": solo["game"]["game_id"],
                "table": table["table_id"],
            },
        )


def bodies() -> st.SearchStrategy[Any]:
    strings = st.one_of(st.sampled_from(NASTY), st.text(max_size=8))
    ints = st.one_of(st.sampled_from(BIG), st.integers())
    leaf = st.one_of(strings, ints, st.none(), st.booleans(), st.floats(allow_nan=False))
    move = st.fixed_dictionaries(
        {"type": st.sampled_from(["tap", "confirm", "take_stem"]), "move_id": strings},
        optional={"bee": ints, "stem": ints},
    )
    named = st.fixed_dictionaries({"name": strings}, optional={"password": strings})
    seeded = st.fixed_dictionaries({"client_seed": strings})
    table = st.fixed_dictionaries(
        {}, optional={"seats": ints, "stake": ints, "turn_seconds": ints, "choice_seconds": ints}
    )
    nested = st.builds(deep, st.integers(33, 4000), leaf, st.sampled_from(["list", "dict"]))
    return st.one_of(move, named, seeded, table, nested, st.recursive(leaf, st.lists, max_leaves=8))


POSTS = [
    "/guests",
    "/accounts",
    "/sessions",
    "/solo-tables",
    "/tables",
    "/tables/{table}/seats",
    "/tables/{table}/seed",
    "/tables/{table}/start",
    "/games/{game}/moves",
]


@pytest.mark.parametrize("path", POSTS)
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=bodies())
async def test_no_body_gets_a_5xx(
    setup: tuple[AsyncTestClient[Any], dict[str, str]], path: str, body: Any
) -> None:
    client, ids = setup
    content = raw(body)
    if len(content) > 16 * 1024:
        return
    answer = await client.post(
        path.format(**ids),
        content=content,
        headers={"Authorization": f"Bearer {ids['token']}", "content-type": "application/json"},
    )
    assert answer.status_code < 500, (path, content[:200], answer.text)


@pytest.mark.parametrize(
    "body",
    [
        {"type": "tap", "bee": 1, "move_id": "a\x00b"},
        {"type": "tap", "bee": 1, "move_id": "\ud800"},
        {"type": "tap", "bee": 2**64, "move_id": "m"},
        {"type": "take_stem", "stem": -(2**63) - 1, "move_id": "m"},
        deep(5000),
        {"type": "tap", "bee": deep(5000), "move_id": "m"},
        {"move_id": deep(2500, kind="dict"), "type": "tap"},
    ],
    ids=[
        "nul-move-id",
        "surrogate-move-id",
        "huge-bee",
        "huge-stem",
        "deep",
        "deep-bee",
        "deep-obj",
    ],
)
async def test_hostile_moves_are_400(
    setup: tuple[AsyncTestClient[Any], dict[str, str]], body: Any
) -> None:
    client, ids = setup
    content = raw(body)
    assert len(content) <= 16 * 1024
    answer = await client.post(
        f"/games/{ids['game']}/moves",
        content=content,
        headers={"Authorization": f"Bearer {ids['token']}", "content-type": "application/json"},
    )
    assert 400 <= answer.status_code < 500, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")


@pytest.mark.parametrize("name", ["a\x00b", "\ud800", "Ada\udc00"])
async def test_nul_and_surrogates_in_names_are_400(
    setup: tuple[AsyncTestClient[Any], dict[str, str]], name: str
) -> None:
    client, _ = setup
    for path in ("/guests", "/accounts", "/sessions"):
        body = {"name": name, "password": "long enough"} if path != "/guests" else {"name": name}
        answer = await client.post(
            path, content=raw(body), headers={"content-type": "application/json"}
        )
        assert 400 <= answer.status_code < 500, (path, answer.text)


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/games/{game}/events", f"after={2**31}"),
        ("/games/{game}/events", f"after={2**70}"),
        ("/games/{game}/events", f"limit={-(2**63)}"),
        ("/games/{game}/events", "after=%00"),
        ("/games/{game}/stream", f"after={2**31}"),
        ("/tables", f"offset={2**63}"),
        ("/tables", f"limit={2**40}"),
        ("/tables", "stake=free%00"),
        ("/leaderboard", f"offset={2**63}&by=xp"),
        ("/leaderboard", "by=%ED%A0%80"),  # a surrogate's UTF-8 bytes: not UTF-8
        ("/tables", "stake=%FF"),
    ],
)
async def test_out_of_bounds_query_parameters_are_400(
    setup: tuple[AsyncTestClient[Any], dict[str, str]], path: str, query: str
) -> None:
    client, ids = setup
    answer = await client.get(
        path.format(**ids) + "?" + query, headers={"Authorization": f"Bearer {ids['token']}"}
    )
    assert 400 <= answer.status_code < 500, (path, query, answer.text)
