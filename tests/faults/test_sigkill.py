"""SIGKILL the service in the middle of busy timed games, several times at random moments, and
start it again each time. Afterwards, from the log itself:

* every move that got a 2xx answer is in the log (its command id is processed, its events are
  there): lost = 0;
* every game resolves (the clock is on: people sometimes leave a turn to it);
* each clock fired once: no turn started or revealed twice, and each expiry's events are one
  unbroken run of versions (one append);
* no stream skipped an event: a follower per game, resuming with Last-Event-ID after each
  kill, received every version 1..N once, in order, with the types the log holds.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg
import pytest

from tests.faults.conftest import FULL, Service, summary

pytestmark = [pytest.mark.fault, pytest.mark.slow]

GAMES = 8 if FULL else 3
KILLS = 6 if FULL else 2
RESOLVE_TIMEOUT = 180.0 if FULL else 90.0
PAUSE = 0.8 if FULL else 0.3  # a person's longest think before a move


@dataclass
class Tally:
    acked: list[tuple[str, str, str]] = field(default_factory=list)  # (game, player, move id)
    refused: int = 0  # answered, but not 2xx (409 after a restart, 503 while starting…)
    transport_errors: int = 0  # no answer (killed mid-request): may or may not be in the log
    received: dict[str, list[tuple[int, str]]] = field(default_factory=dict)  # game → (v, type)
    reconnects: int = 0
    playing: int = 0  # people still playing
    kills: int = 0  # kills that landed while games were being played


async def guest(client: httpx.AsyncClient, name: str) -> dict[str, str]:
    r = await client.post("/guests", json={"name": name})
    assert r.status_code == 201, r.text
    body: dict[str, str] = r.json()
    return body


async def open_game(client: httpx.AsyncClient) -> tuple[str, list[dict[str, str]]]:
    host, other = await guest(client, "Host"), await guest(client, "Other")
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
    return started.json()["game"]["game_id"], [host, other]


async def person(
    client: httpx.AsyncClient, who: dict[str, str], gid: str, tally: Tally, rng: random.Random
) -> None:
    """Polls its view and moves, sometimes after a pause, sometimes leaving the turn to the
    clock; rides out kills (transport errors, 503s) by trying again."""
    deadline = time.monotonic() + RESOLVE_TIMEOUT
    tally.playing += 1
    try:
        await _play(client, who, gid, tally, rng, deadline)
    finally:
        tally.playing -= 1


async def _play(
    client: httpx.AsyncClient,
    who: dict[str, str],
    gid: str,
    tally: Tally,
    rng: random.Random,
    deadline: float,
) -> None:
    headers = {"Authorization": f"Bearer {who['token']}"}
    while time.monotonic() < deadline:
        try:
            r = await client.get(f"/games/{gid}", headers=headers)
            if r.status_code != 200:
                await asyncio.sleep(0.1)
                continue
            view = r.json()
            if view["phase"] == "ended":
                return
            move: dict[str, Any] | None = None
            if view["phase"] == "picking" and view["confirmed"] is None and view["hand"]:
                if rng.random() < 0.75:  # else the clock plays this seat's turn
                    move = {"type": "confirm", "bee": rng.choice(view["hand"])}
                    if rng.random() < 0.3:
                        move["type"] = "tap"
            elif (
                view["phase"] == "choosing"
                and view["choice"]
                and view["choice"]["yours"]
                and rng.random() < 0.75
            ):
                move = {"type": "take_stem", "stem": rng.randint(1, 4)}
            if move is None:
                await asyncio.sleep(0.15)
                continue
            await asyncio.sleep(rng.uniform(0, PAUSE))
            move["move_id"] = uuid.uuid4().hex
            answer = await client.post(f"/games/{gid}/moves", json=move, headers=headers)
            if 200 <= answer.status_code < 300:
                tally.acked.append((gid, who["player_id"], move["move_id"]))
            else:
                tally.refused += 1
        except httpx.TransportError:
            tally.transport_errors += 1
            await asyncio.sleep(0.1)


async def follower(client: httpx.AsyncClient, who: dict[str, str], gid: str, tally: Tally) -> None:
    """Follows the game's stream to its end, resuming after each kill with Last-Event-ID."""
    got = tally.received.setdefault(gid, [])
    deadline = time.monotonic() + RESOLVE_TIMEOUT
    ended = False
    while not ended and time.monotonic() < deadline:
        headers = {"Authorization": f"Bearer {who['token']}"}
        if got:
            headers["Last-Event-ID"] = str(got[-1][0])
        try:
            async with client.stream(
                "GET", f"/games/{gid}/stream", headers=headers, timeout=httpx.Timeout(None)
            ) as response:
                if response.status_code != 200:
                    await asyncio.sleep(0.2)
                    continue
                fields: dict[str, str] = {}
                async for line in response.aiter_lines():
                    if line.startswith(":"):
                        continue
                    if line:
                        key, _, value = line.partition(":")
                        fields[key] = value.removeprefix(" ")
                        continue
                    if "id" in fields:
                        got.append((int(fields["id"]), fields.get("event", "")))
                    fields = {}
                ended = any(t == "game_ended" for _, t in got)  # the server closed after it
        except httpx.TransportError:
            pass
        if not ended:
            tally.reconnects += 1
            await asyncio.sleep(0.2)


async def killer(service: Service, rng: random.Random, kills: int, tally: Tally) -> None:
    for _ in range(kills):
        await asyncio.sleep(rng.uniform(0.5, 3.0))
        if not tally.playing:
            return  # every game is over: a kill now would prove nothing
        service.kill()
        tally.kills += 1
        await asyncio.sleep(rng.uniform(0.0, 1.5))  # deadlines may pass while nothing runs
        await asyncio.to_thread(service.start)


async def test_sigkill_mid_game_loses_nothing(database_url: str, service_factory: Any) -> None:
    rng = random.Random(int(time.time()))
    service: Service = service_factory(database_url)
    service.start()
    tally = Tally()
    async with httpx.AsyncClient(base_url=service.url, timeout=15) as client:
        games = [await open_game(client) for _ in range(GAMES)]
        tasks = [
            *(
                person(client, p, gid, tally, random.Random(rng.random()))
                for gid, ps in games
                for p in ps
            ),
            *(follower(client, ps[0], gid, tally) for gid, ps in games),
            killer(service, rng, KILLS, tally),
        ]
        await asyncio.gather(*tasks)

    game_ids = [gid for gid, _ in games]
    streams = [f"game-{g}" for g in game_ids]
    with psycopg.connect(database_url) as conn:
        processed = {
            (stream, command)
            for stream, command in conn.execute(
                "select stream, command_id from processed_commands where stream = any(%s)",
                (streams,),
            )
        }
        with_events = {
            (stream, command)
            for stream, command in conn.execute(
                "select distinct stream, metadata->>'command_id' from events"
                " where stream = any(%s)",
                (streams,),
            )
        }
        log = {
            stream: [(v, t) for v, t in rows]
            for stream in streams
            for rows in [
                conn.execute(
                    "select version, type from events where stream = %s order by version",
                    (stream,),
                ).fetchall()
            ]
        }
        twice = conn.execute(
            """
            select stream, type, data->>'turn', count(*) from events
             where stream = any(%s) and type in ('turn_started', 'picks_revealed')
             group by 1, 2, 3 having count(*) > 1
            """,
            (streams,),
        ).fetchall()
        clock_split = conn.execute(
            """
            select stream, metadata->>'command_id' from events
             where stream = any(%s) and metadata->>'causation' = 'expire_clock'
             group by 1, 2 having max(version) - min(version) + 1 <> count(*)
            """,
            (streams,),
        ).fetchall()
        expiries = conn.execute(
            "select count(distinct (stream, metadata->>'command_id')) from events"
            " where stream = any(%s) and metadata->>'causation' = 'expire_clock'",
            (streams,),
        ).fetchone()

    lost = [
        (gid, pid, mid)
        for gid, pid, mid in tally.acked
        if (f"game-{gid}", f"{pid}:{mid}") not in processed
        or (f"game-{gid}", f"{pid}:{mid}") not in with_events
    ]
    unresolved = [s for s in streams if not any(t == "game_ended" for _, t in log[s])]
    skipped = 0
    for gid in game_ids:
        got = tally.received.get(gid, [])
        want = [e for e in log[f"game-{gid}"] if e[0] <= (got[-1][0] if got else 0)]
        if got != want:
            skipped += 1
    summary(
        "sigkill",
        kills=tally.kills,
        starts=service.starts,
        games=GAMES,
        moves_acked=len(tally.acked),
        moves_refused=tally.refused,
        transport_errors=tally.transport_errors,
        stream_events=sum(len(v) for v in tally.received.values()),
        stream_reconnects=tally.reconnects,
        clock_expiries=expiries[0] if expiries else 0,
        lost=len(lost),
        unresolved=len(unresolved),
        revealed_twice=len(twice),
        streams_skipping=skipped,
    )
    assert not lost, lost[:5]
    assert not unresolved, unresolved
    assert not twice, twice
    assert not clock_split, clock_split
    assert skipped == 0, {g: tally.received.get(g) for g in game_ids}
    assert tally.kills >= 1 and tally.reconnects >= 1  # the kills did cut games and streams
