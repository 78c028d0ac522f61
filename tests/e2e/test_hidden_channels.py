"""An attacker's review of what the rules hide (docs/fairness.md, "Hidden values"): each test is
one channel, tried as a player at the table, a spectator, an anonymous caller or a solo player
would try it, and fails if the channel opens."""

from __future__ import annotations

import base64
import hashlib
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.domain.rules.events import event_type
from service.store.pool import Pool
from service.usecases import bee_threads, play
from tests.e2e.api_client import Api


async def test_a_replayed_create_gives_a_logged_out_token_nothing(ada: Api) -> None:
    """Idempotency replays: a stored answer (here createSoloTable's, with the player's hand) is
    the caller's only while the caller is someone. Once the token is revoked (logout), whoever
    holds it is an anonymous caller: a replay must not hand them the answer."""
    headers = {**ada.headers, "Idempotency-Key": str(uuid.uuid4())}
    first = await ada.client.post("/solo-tables", json={"players": 3}, headers=headers)
    assert first.status_code == 201, first.text
    assert first.json()["game"]["hand"]
    out = await ada.client.delete("/sessions/current", headers=ada.headers)
    assert out.status_code == 204, out.text
    again = await ada.client.post("/solo-tables", json={"players": 3}, headers=headers)
    assert again.status_code == 401, (again.status_code, again.text[:200])
    assert "hand" not in again.text
    # Nor whether the key was used: another body with it is the same 401, not a 409.
    other = await ada.client.post("/solo-tables", json={"players": 4}, headers=headers)
    assert (other.status_code, other.json()["code"]) == (401, "unauthorized")


@pytest.mark.parametrize("path", ["/", "/docs", "/docs/swagger"])
async def test_every_page_of_the_origin_runs_only_its_own_scripts(anon: Api, path: str) -> None:
    """Browser storage: the board keeps the bearer token (whose holder sees its hand) in
    `localStorage`, which every page of the origin may read. So every HTML page the service
    serves has a policy under which an injected script does not run (no `'unsafe-inline'`:
    inline scripts only by hash) and nothing is sent to another origin (`connect-src 'self'`,
    no remote source anywhere). tests/browser/test_origin_storage.py tries it in Chromium."""
    page = await anon.client.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = dict(
        (part.split()[0], part.split()[1:])
        for part in page.headers["content-security-policy"].split("; ")
    )
    assert policy["default-src"] == ["'none'"]
    assert policy["connect-src"] == ["'self'"]
    assert "'unsafe-inline'" not in policy["script-src"]
    assert "'unsafe-eval'" not in policy["script-src"]
    assert not [s for p in policy.values() for s in p if "://" in s or s in ("*", "https:")]
    for body in re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", page.text, re.S):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy["script-src"]


def _same_refusal(response: Any, bee: int) -> tuple[int, str, str, str, int]:
    """A refusal with the bee's own number taken out: what tells one refusal from another."""
    body = response.json()
    detail = body["detail"].replace(str(bee), "N")
    return (
        response.status_code,
        body["code"],
        body["title"],
        detail,
        len(response.content) - len(str(bee)),
    )


@pytest.mark.parametrize("kind", ["tap", "confirm"])
async def test_a_bee_in_another_hand_is_refused_as_one_never_dealt(ada: Api, kind: str) -> None:
    """Error codes and their order of checks: a move with a bee the caller does not hold gets
    the same answer (status, code, title, detail, size) whether that bee is in another seat's
    hand, on a stem, or in no game of this size, so trying bees finds no other hand."""
    game = (await ada.solo_table(players=3))["game"]
    gid, mine = game["game_id"], set(game["hand"])
    stems = {b for stem in game["stems"] for b in stem["bees"]}
    elsewhere = sorted(set(range(1, 35)) - mine - stems)  # in a bee player's hand, all of them
    probes = {"another hand": elsewhere[:3], "a stem": sorted(stems)[:2], "no hand": [40, 84]}
    answers = {}
    for where, bees in probes.items():
        for bee in bees:
            response = await ada.move(gid, type=kind, bee=bee)
            answers[(where, bee)] = _same_refusal(response, bee)
    assert len(set(answers.values())) == 1, answers
    assert next(iter(answers.values()))[:2] == (409, "bee-not-in-hand")
    assert (await ada.game(gid))["version"] == game["version"]  # and nothing was written


async def test_a_move_id_another_seat_used_is_its_own_move(anon: Api) -> None:
    """Replays scoped to the wrong caller: `move_id` is per player per game, so a seat that
    sends a `move_id` another seat used gets its own move applied (never the other's answer,
    with the other's hand, nor a `move-id-reused` that would tell the id was taken)."""
    ann, ben = await anon.guest("Ann"), await anon.guest("Ben")
    table = await ann.create_table(seats=2, turn_seconds=600, choice_seconds=600)
    await ben.ok_table_action(table["table_id"], "seats")
    gid = (await ann.table(table["table_id"]))["games"][-1]
    ann_view, ben_view = await ann.game(gid), await ben.game(gid)
    shared = f"shared-{uuid.uuid4()}"
    first = await ann.move(gid, type="tap", bee=ann_view["hand"][0], move_id=shared)
    assert first.status_code == 200 and "idempotent-replayed" not in first.headers
    other = await ben.move(gid, type="tap", bee=ben_view["hand"][-1], move_id=shared)
    assert other.status_code == 200, other.text
    assert "idempotent-replayed" not in other.headers
    assert other.json()["you"] == ben_view["you"] and other.json()["tapped"] == ben_view["hand"][-1]
    assert other.json()["hand"] == ben_view["hand"]
    again = await ann.move(gid, type="tap", bee=ann_view["hand"][0], move_id=shared)
    assert (
        again.headers["idempotent-replayed"] == "true" and again.json()["hand"] == ann_view["hand"]
    )


async def test_while_a_game_runs_nothing_opens_it_early(anon: Api) -> None:
    """The analyses (a turn's, a game's), the export and the verification mid-game, by a seat
    and a spectator: each is 409 `game-not-over`, the same for both; and getGameState /
    listGameSteps show no hash to try guesses against until the end."""
    ann, ben, watcher = await anon.guest("Ann"), await anon.guest("Ben"), await anon.guest("W")
    table = await ann.create_table(seats=2, turn_seconds=600, choice_seconds=600)
    await ben.ok_table_action(table["table_id"], "seats")
    gid = (await ann.table(table["table_id"]))["games"][-1]
    await ben.ok_move(gid, type="confirm", bee=(await ben.game(gid))["hand"][0])
    for who in (ann, watcher):
        for path in ("analysis?seat=2&turn=1", "review?seat=2", "export", "verification"):
            response = await who.client.get(f"/games/{gid}/{path}", headers=who.headers)
            assert (response.status_code, response.json()["code"]) == (409, "game-not-over")
        latest = (await who.game(gid))["version"]
        for version in range(1, latest + 1):
            at = await who.client.get(f"/games/{gid}/states/{version}", headers=who.headers)
            assert at.json()["event"]["hash"] == "" and at.json()["view"]["head_hash"] is None


@pytest.mark.parametrize("path", ["", "/events", "/steps", "/states/2"])
async def test_no_answer_about_a_game_carries_a_digest_or_is_compressed(
    ada: Api, path: str
) -> None:
    """Sizes and digests: no ETag, Digest or Content-MD5 (a hash of the answer, hidden values
    included), no compression (whose size depends on what is compressed) even when asked for,
    and the length said is the body's."""
    gid = (await ada.solo_table(players=3))["game"]["game_id"]
    headers = {**ada.headers, "Accept-Encoding": "gzip, deflate, br, zstd"}
    response = await ada.client.get(f"/games/{gid}{path}", headers=headers)
    assert response.status_code == 200
    names = {name.lower() for name in response.headers}
    assert not names & {"etag", "digest", "content-digest", "repr-digest", "content-md5"}
    assert "content-encoding" not in names
    assert int(response.headers["content-length"]) == len(response.content)


@pytest.fixture
async def two_instances(database_url: str) -> AsyncIterator[tuple[Api, Api]]:
    """Two service instances on one database (anonymous clients of each)."""
    async with (
        AsyncTestClient(app=create_app(database_url, run_clock=False)) as one,
        AsyncTestClient(app=create_app(database_url, run_clock=False)) as two,
    ):
        yield Api(one), Api(two)


def _decisions(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every decision the service makes from now on, as its events' types."""
    made: list[list[str]] = []
    decide = bee_threads.decide_with_bees  # what `play` calls

    async def recorded(state: Any, command: Any, seed_for: Any) -> Any:
        after, events = await decide(state, command, seed_for)
        made.append([event_type(e) for e in events])
        return after, events

    monkeypatch.setattr(play, "decide_with_bees", recorded)
    return made


async def test_a_move_that_is_not_written_is_not_played_out(
    two_instances: tuple[Api, Api], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decision oracle: the last pick of a turn sets off the reveal, the flights, a pause
    for a person's too-low bee or not, the bee players' thinking, perhaps the end of the game,
    all from picks still hidden, and all of it takes time. A move that is then not written
    must not have been played out, or its answer's time tells (before the reveal, and again
    and again, since nothing is committed) whether another person's hidden pick is too low:
    a repeated `move_id` (a bare confirm sent again, which would confirm the bee tapped now)
    and a move with a token revoked on another instance are answered without it."""
    one, two = two_instances
    ann, ben = await one.guest("Ann"), await one.guest("Ben")
    table = await ann.create_table(seats=2, turn_seconds=600, choice_seconds=600)
    await ben.ok_table_action(table["table_id"], "seats")
    gid = (await ann.table(table["table_id"]))["games"][-1]
    hand = (await ann.game(gid))["hand"]
    await ann.ok_move(gid, type="tap", bee=hand[0])
    await ann.ok_move(gid, type="confirm", move_id="bare")  # confirms the tapped bee
    turn2 = await ben.ok_move(gid, type="confirm", bee=(await ben.game(gid))["hand"][0])
    assert turn2["turn"] == 2 or turn2["phase"] == "choosing"
    if turn2["phase"] == "choosing":
        return  # a too-low bee on turn 1 (not this deal's): nothing to probe here
    await ben.ok_move(gid, type="confirm", bee=(await ben.game(gid))["hand"][0])
    await ann.ok_move(gid, type="tap", bee=(await ann.game(gid))["hand"][-1])
    version = (await ann.game(gid))["version"]

    made = _decisions(monkeypatch)
    again = await ann.move(gid, type="confirm", move_id="bare")
    assert again.status_code == 200 and again.headers["idempotent-replayed"] == "true"
    assert not [d for d in made if "picks_revealed" in d], made

    # The token revoked on instance two; instance one knows it, so checks it in the append.
    await ann.ok_move(gid, type="tap", bee=(await ann.game(gid))["hand"][-1])
    version = (await ann.game(gid))["version"]
    out = await two.client.delete("/sessions/current", headers=ann.headers)
    assert out.status_code == 204
    made.clear()
    refused = await ann.move(gid, type="confirm")
    assert refused.status_code == 401
    assert not [d for d in made if "picks_revealed" in d], made
    assert (await ben.game(gid))["version"] == version


async def test_the_bees_think_before_their_turn_is_written_not_between_its_events(
    ada: Api, pool: Pool
) -> None:
    """`recorded_at` gaps: the database stamps each event as it is inserted. The bee players'
    picks (medium bees think tens of milliseconds each, from their hidden hands) are decided
    before the append that starts their turn, so the turn's `turn_started` and every bee's
    `pick_confirmed` are one transaction, and no gap between their times holds a bee's
    thinking (which would tell one bee's from another's)."""
    response = await ada.client.post(
        "/solo-tables", json={"players": 4, "level": "medium"}, headers=ada.headers
    )
    game = response.json()["game"]
    gid = game["game_id"]
    for _ in range(3):
        view = await ada.game(gid)
        if view["phase"] == "choosing":
            await ada.ok_move(gid, type="take_stem", stem=view["choice"]["cheapest"])
        else:
            await ada.ok_move(gid, type="confirm", bee=view["hand"][-1])
    rows = await pool.fetch(
        "select version, type, data->>'seat' as seat, txid::text from events"
        " where stream = $1 order by version",
        f"game-{gid}",
    )
    turns = [r for r in rows if r["type"] == "turn_started"]
    assert len(turns) >= 3
    for turn in turns:
        after = [r for r in rows if r["version"] > turn["version"]][:3]
        assert [r["type"] for r in after] == ["pick_confirmed"] * 3  # seats 2, 3, 4: the bees
        assert {r["txid"] for r in after} == {turn["txid"]}
