"""Joins under contention (issue 13, item 7): nine people joining an 8-seat table (the host in
seat 1) at the same moment, through two live app instances (each its own event loop and pool):
all seven free seats are taken, and the two who come after the last seat are told there is none
(`game-in-progress`: the table filled and its game started), never `conflict` or
`game-already-started` (a decision on a stale table meeting a fresh game) while a seat is free."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from service.api.app import create_app
from tests.live_server import serve


@pytest.fixture(scope="module")
def servers(database_url: str) -> Iterator[list[str]]:
    one = serve(create_app(database_url, run_clock=False, rate_limit_per_second=0))
    two = serve(create_app(database_url, run_clock=False, rate_limit_per_second=0))
    yield [next(one), next(two)]
    for server in (one, two):
        next(server, None)  # past its yield: the server stops


def guest(base: str, name: str) -> str:
    answer = httpx.post(f"{base}/guests", json={"name": name})
    assert answer.status_code == 201, answer.text
    token: str = answer.json()["token"]
    return token


@pytest.mark.parametrize("round_", range(10))
def test_nine_people_for_seven_free_seats_on_two_instances(servers: list[str], round_: int) -> None:
    host = guest(servers[0], "Host")
    table = httpx.post(
        f"{servers[0]}/tables",
        json={"seats": 8, "turn_seconds": 600, "choice_seconds": 600},
        headers={"Authorization": f"Bearer {host}"},
    ).json()
    people = [(servers[i % 2], guest(servers[i % 2], f"P{i}")) for i in range(9)]

    def join(who: tuple[str, str]) -> httpx.Response:
        base, token = who
        return httpx.post(
            f"{base}/tables/{table['table_id']}/seats",
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )

    with ThreadPoolExecutor(9) as pool:
        answers = list(pool.map(join, people))
    seated = [a for a in answers if a.status_code == 200]
    refused = [a.json()["code"] for a in answers if a.status_code != 200]
    assert len(seated) == 7, refused
    assert refused == ["game-in-progress", "game-in-progress"], refused
