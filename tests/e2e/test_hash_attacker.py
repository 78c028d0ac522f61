"""An attacker who knows every published recipe tries to compute hidden bees from what they are
shown (issue: "hidden picks can be read from the event hashes").

Each hash or digest a seat, a spectator or an anonymous caller is shown before the end (every
event's `hash` in `listGameEvents` and in the SSE stream, `getGame`'s `head_hash`) is attacked:
for every event whose hidden values are shown as null, every possible value (each bee of the
deck, each way the clock may have played it) is filled in and hashed by every recipe the
attacker knows (chain v1, which hashed the data open; SHA-256 of the event's or the value's
canonical JSON). Under chain v2 nothing may match. A control shows the attacker is not blind: on
a v1-style log it recovers the bee at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

import httpx
import pytest

from service.domain import chain
from tests.e2e.api_client import Api
from tests.e2e.test_online_streams import StreamFollower, following
from tests.e2e.test_streams import _serve

CLOCK_PLAYS = ("none", "tapped", "lowest")
UNTIMED = {"turn_seconds": 600, "choice_seconds": 600}


def guesses(event: dict[str, Any], deck: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every full version of a redacted event: each bee (and clock play) in its null fields."""
    data = event["data"]
    if event["type"] not in ("bee_tapped", "pick_confirmed") or data["bee"] is not None:
        return
    for bee in range(1, deck + 1):
        if event["type"] == "bee_tapped":
            yield bee, {**data, "bee": bee}
        else:
            for play in CLOCK_PLAYS:
                yield bee, {**data, "bee": bee, "by_clock": play}


def digests(
    stream: str, event: dict[str, Any], prev: bytes | None, full: dict[str, Any]
) -> set[str]:
    """What an attacker can compute from one guess: v1's link (given the previous hash), and
    plain SHA-256 of the guessed event and of the guessed value."""
    canonical = chain.canonical_value(full)
    found = {
        hashlib.sha256(canonical).hexdigest(),
        hashlib.sha256(chain.canonical_value(full["bee"])).hexdigest(),
        hashlib.sha256(str(full["bee"]).encode()).hexdigest(),
    }
    if prev is not None:
        found.add(chain.event_hash(prev, stream, event["version"], event["type"], canonical).hex())
    return found


def attack(
    stream: str,
    events: list[dict[str, Any]],
    shown: Iterable[str],
    deck: int,
    seen: set[int] | None = None,
) -> list[tuple[int, int]]:
    """(version, bee) for every guess whose digest equals a hash or digest the caller was shown.
    ``seen``: versions this caller has attacked already (their hashes never change), skipped."""
    targets = set(shown) | {e["hash"] for e in events}
    by_version = {e["version"]: e for e in events}
    recovered = []
    for event in events:
        if seen is not None:
            if event["version"] in seen:
                continue
            seen.add(event["version"])
        before = by_version.get(event["version"] - 1)
        prev = chain.GENESIS if event["version"] == 1 else None
        if before is not None:
            prev = bytes.fromhex(before["hash"]) if before["hash"] else None
        for bee, full in guesses(event, deck):
            if digests(stream, event, prev, full) & targets:
                recovered.append((event["version"], bee))
    return recovered


def test_the_attacker_recovers_a_bee_from_a_v1_style_log() -> None:
    """The control: with hashes over the open data (chain v1), one redacted pick gives itself
    away. (So a pass of the tests below means v2 hides it, not that the attacker is blind.)"""
    stream, deck = "game-x", 44
    first = {"type": "turn_started", "turn": 1}
    h1 = chain.event_hash(chain.GENESIS, stream, 1, "turn_started", chain.canonical_value(first))
    pick = {"type": "pick_confirmed", "seat": 2, "bee": 17, "by_clock": "none"}
    h2 = chain.event_hash(h1, stream, 2, "pick_confirmed", chain.canonical_value(pick))
    shown = [
        {"version": 1, "type": "turn_started", "hash": h1.hex(), "data": first},
        {"version": 2, "type": "pick_confirmed", "hash": h2.hex(), "data": {**pick, "bee": None}},
    ]
    assert attack(stream, shown, [], deck) == [(2, 17)]


async def shown_to(api: Api, game_id: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The log and head hash the caller is shown (an anonymous caller is refused both: 401)."""
    log = await api.client.get(f"/games/{game_id}/events", headers=api.headers)
    game = await api.client.get(f"/games/{game_id}", headers=api.headers)
    if api.token is None:
        assert (log.status_code, game.status_code) == (401, 401)
        return [], []
    assert log.status_code == game.status_code == 200, (log.text, game.text)
    return log.json()["events"], [game.json()["head_hash"]]


class Attacker:
    """Everything one viewer was shown so far, and the events already attacked."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.shown: set[str] = set()
        self.seen: set[int] = set()
        self.attacked = 0


async def assert_nothing_recovered(viewers: dict[str, Attacker], game_id: str, deck: int) -> int:
    """Attack what each viewer is shown now; the number of redacted events attacked."""
    attacked = 0
    for name, viewer in viewers.items():
        events, heads = await shown_to(viewer.api, game_id)
        viewer.shown |= set(heads) | {e["hash"] for e in events}
        new = [e for e in events if e["version"] not in viewer.seen]
        attacked += sum(1 for e in new for _ in guesses(e, 1))
        recovered = attack(f"game-{game_id}", events, viewer.shown, deck, viewer.seen)
        assert recovered == [], (name, recovered)
    return attacked


@pytest.mark.parametrize("players", [2, 8])
async def test_a_solo_player_recovers_no_bee_of_the_bee_players(ada: Api, players: int) -> None:
    game = (await ada.solo_table(players=players))["game"]
    gid, deck = game["game_id"], 10 * players + 4
    view, attacked, viewers = game, 0, {"player": Attacker(ada)}
    while view["phase"] != "ended":
        attacked += await assert_nothing_recovered(viewers, gid, deck)
        if view["phase"] == "choosing":
            view = await ada.ok_move(gid, type="take_stem", stem=view["choice"]["cheapest"])
            continue
        await ada.ok_move(gid, type="tap", bee=view["hand"][-1])
        attacked += await assert_nothing_recovered(viewers, gid, deck)
        view = await ada.ok_move(gid, type="confirm", bee=view["hand"][0])
    assert attacked >= (players - 1) * 10  # every bee player's pick was attacked each turn


@pytest.mark.parametrize("players", [2, 8])
async def test_seats_spectators_and_strangers_recover_no_bee_online(
    anon: Api, players: int
) -> None:
    people = [await anon.guest(f"P{i}") for i in range(1, players + 1)]
    spectator, stranger = await anon.guest("Watcher"), anon
    table = await people[0].create_table(seats=players, **UNTIMED)
    for person in people[1:]:
        await person.ok_table_action(table["table_id"], "seats")
    gid = (await people[0].table(table["table_id"]))["games"][-1]
    deck = 10 * players + 4
    viewers = {f"seat {i}": Attacker(p) for i, p in enumerate(people, start=1)}
    viewers |= {"spectator": Attacker(spectator), "anonymous": Attacker(stranger)}
    attacked = 0
    while True:
        views = [await p.game(gid) for p in people]
        if views[0]["phase"] == "ended":
            break
        if views[0]["phase"] == "choosing":
            chooser = next(i for i, v in enumerate(views) if v["choice"]["yours"])
            cheapest = views[chooser]["choice"]["cheapest"]
            await people[chooser].ok_move(gid, type="take_stem", stem=cheapest)
            continue
        # Everyone taps, then all but the last confirm: each step is attacked by everyone.
        for person, view in zip(people, views, strict=True):
            await person.ok_move(gid, type="tap", bee=view["hand"][-1])
        attacked += await assert_nothing_recovered(viewers, gid, deck)
        for person, view in zip(people[:-1], views[:-1], strict=True):
            await person.ok_move(gid, type="confirm", bee=view["hand"][0])
        attacked += await assert_nothing_recovered(viewers, gid, deck)
        await people[-1].ok_move(gid, type="confirm", bee=views[-1]["hand"][0])
    assert attacked > 0


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[str]:
    yield from _serve(database_url, heartbeat=60)


async def test_the_stream_gives_a_follower_no_bee_either(server: str) -> None:
    """The SSE stream's messages, attacked as they arrive, by the other seat and a spectator."""
    async with httpx.AsyncClient(base_url=server, timeout=30) as client:
        tokens = []
        for name in ("Ann", "Ben", "Watcher"):
            response = await client.post("/guests", json={"name": name})
            tokens.append(response.json()["token"])
        ann, ben, watcher = ({"Authorization": f"Bearer {t}"} for t in tokens)
        created = await client.post("/tables", json={"seats": 2, **UNTIMED}, headers=ann)
        tid = created.json()["table_id"]
        await client.post(f"/tables/{tid}/seats", headers=ben)
        gid = (await client.get(f"/tables/{tid}", headers=ann)).json()["games"][-1]
        path = f"/games/{gid}/stream"
        async with following() as followers:
            ben_sees = StreamFollower(client, path, ben, name="ben")
            watcher_sees = StreamFollower(client, path, watcher, name="watcher")
            followers += [ben_sees, watcher_sees]
            hand = (await client.get(f"/games/{gid}", headers=ann)).json()["hand"]
            for move in ({"type": "tap", "bee": hand[-1]}, {"type": "confirm", "bee": hand[0]}):
                response = await client.post(
                    f"/games/{gid}/moves", json={**move, "move_id": move["type"]}, headers=ann
                )
                assert response.status_code == 200, response.text
            version = (await client.get(f"/games/{gid}", headers=ann)).json()["version"]
            for follower in (ben_sees, watcher_sees):
                await follower.wait_for(version)
                events = [m.data for m in follower.received]
                redacted = [e for e in events if e["type"] == "pick_confirmed"]
                assert redacted and all(e["data"]["bee"] is None for e in redacted)
                assert attack(f"game-{gid}", events, [], 24) == [], follower.name
