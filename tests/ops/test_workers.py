"""Two worker processes on one host (`swarm serve --workers 2`, issue 17).

Every request opens a new connection, so the kernel spreads them over both workers (the log
says which pid served each). Two timed games are played: the host moves, the other person
never does, so the clock plays their turns. Afterwards, from the database: every acknowledged
move is in the log; every stream follower received every version once, in order, whichever
worker it was connected to and whichever worker appended; no turn was started or revealed
twice although both workers run the clock; the log is one JSON object a line, with one
access line per request; and SIGTERM stops both workers cleanly.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from typing import Any

import httpx
import psycopg
import pytest

pytestmark = pytest.mark.slow

GAMES = 2


async def _guest(client: httpx.AsyncClient, name: str) -> dict[str, str]:
    r = await client.post("/guests", json={"name": name})
    assert r.status_code == 201, r.text
    body: dict[str, str] = r.json()
    return body


async def _open_game(client: httpx.AsyncClient) -> tuple[str, dict[str, str], dict[str, str]]:
    host, other = await _guest(client, "Host"), await _guest(client, "Other")
    auth = {"Authorization": f"Bearer {host['token']}"}
    table = await client.post(
        "/tables", json={"seats": 4, "turn_seconds": 1, "choice_seconds": 1}, headers=auth
    )
    assert table.status_code == 201, table.text
    tid = table.json()["table_id"]
    joined = await client.post(
        f"/tables/{tid}/seats", headers={"Authorization": f"Bearer {other['token']}"}
    )
    assert joined.status_code in (200, 201), joined.text
    started = await client.post(f"/tables/{tid}/bees", headers=auth)
    assert started.status_code in (200, 201), started.text
    return started.json()["game"]["game_id"], host, other


async def _host_plays(
    client: httpx.AsyncClient, host: dict[str, str], gid: str, acked: list[str]
) -> None:
    headers = {"Authorization": f"Bearer {host['token']}"}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        view = (await client.get(f"/games/{gid}", headers=headers)).json()
        if view["phase"] == "ended":
            return
        move: dict[str, Any] | None = None
        if view["phase"] == "picking" and view["confirmed"] is None and view["hand"]:
            move = {"type": "confirm", "bee": view["hand"][0]}
        elif view["phase"] == "choosing" and view["choice"] and view["choice"]["yours"]:
            move = {"type": "take_stem", "stem": view["choice"]["cheapest"]}
        if move is None:
            await asyncio.sleep(0.1)
            continue
        move["move_id"] = uuid.uuid4().hex
        answer = await client.post(f"/games/{gid}/moves", json=move, headers=headers)
        if answer.status_code == 200:
            acked.append(f"{host['player_id']}:{move['move_id']}")
    raise AssertionError("the game did not end")


async def _follow(client: httpx.AsyncClient, who: dict[str, str], gid: str) -> list[int]:
    versions: list[int] = []
    headers = {"Authorization": f"Bearer {who['token']}"}
    async with client.stream(
        "GET", f"/games/{gid}/stream", headers=headers, timeout=httpx.Timeout(None)
    ) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("id:"):
                versions.append(int(line[3:]))
    return versions


async def test_two_workers_keep_moves_streams_and_clocks_right(
    swarm: Any, database_url: str
) -> None:
    server = swarm("--workers", "2", SWARM_STREAM_HEARTBEAT="2").start(timeout=90)
    fresh = httpx.Limits(max_keepalive_connections=0)  # a new connection per request
    requests = 0

    async def count(_request: httpx.Request) -> None:
        nonlocal requests
        requests += 1

    async with httpx.AsyncClient(
        base_url=server.url, timeout=20, limits=fresh, event_hooks={"request": [count]}
    ) as client:
        games = [await _open_game(client) for _ in range(GAMES)]
        acked: list[str] = []
        followers = [
            asyncio.create_task(_follow(client, who, gid))
            for gid, host, other in games
            for who in (host, other)
        ]
        await asyncio.gather(*(_host_plays(client, host, gid, acked) for gid, host, _ in games))
        received = await asyncio.wait_for(asyncio.gather(*followers), 30)
        metrics = (await client.get("/metrics")).text

    streams = [f"game-{gid}" for gid, _, _ in games]
    with psycopg.connect(database_url) as conn:
        last: dict[str, int] = dict(
            conn.execute(
                "select stream, max(version) from events where stream = any(%s) group by 1",
                (streams,),
            ).fetchall()
        )
        processed = {
            row[0]
            for row in conn.execute(
                "select command_id from processed_commands where stream = any(%s)", (streams,)
            )
        }
        twice = conn.execute(
            """select stream, type, data->>'turn' from events
                where stream = any(%s) and type in ('turn_started', 'picks_revealed')
                group by 1, 2, 3 having count(*) > 1""",
            (streams,),
        ).fetchall()
        expiries = conn.execute(
            "select count(*) from events where stream = any(%s)"
            " and metadata->>'causation' = 'expire_clock'",
            (streams,),
        ).fetchone()

    assert set(acked) <= processed, "an acknowledged move is missing"
    for index, versions in enumerate(received):
        stream = streams[index // 2]
        assert versions == list(range(1, last[stream] + 1)), (stream, versions)
    assert twice == []
    assert expiries is not None and expiries[0] > 0, "the clock never played a turn"

    # SIGTERM to the supervisor: both workers drain and the whole thing exits cleanly.
    stopping = time.monotonic()
    server.signal(signal.SIGTERM)
    assert server.wait(timeout=10) == 0
    assert time.monotonic() - stopping < 5
    assert "Traceback" not in server.log_text()

    lines = [line for line in server.log_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    # The start-up probe's /health/ready calls apart, one access line per request made here.
    access = [r for r in records if r.get("event") == "request" and r["path"] != "/health/ready"]
    served_by = {r["pid"] for r in access}
    assert len(served_by) == 2, f"requests were served by {served_by}"
    assert len(access) == requests, (len(access), requests)
    assert all(r.get("request_id") for r in access)
    # Added up over both workers: the moves, and each clock firing's lateness.
    assert "swarm_moves_total" in metrics
    lateness = [
        float(line.split()[-1])
        for line in metrics.splitlines()
        if line.startswith("swarm_timer_lateness_seconds_count")
    ]
    assert lateness and sum(lateness) > 0, "timer lateness was not recorded"
    print(
        f"{requests} requests over workers {sorted(served_by)}, "
        f"{len(acked)} moves, {expiries[0]} clock events, {len(received)} streams"
    )
