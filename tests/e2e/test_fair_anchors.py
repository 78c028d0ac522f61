"""Anchors a player can keep, over HTTP (docs/fairness.md): every event carries its chain hash
and getGame the head; verifyGame and the audit hold an export to them; the export carries the
table's events; a solo table can open with its commitment and deal when started with a seed;
another person's seed stays hidden until the deal."""

from __future__ import annotations

from typing import Any

from service.domain import fairness
from tests.e2e.api_client import Api, first_of
from tests.e2e.test_solo_api import assert_problem
from tests.e2e.test_streams import sse_messages
from tests.verifier.forge import forge
from tests.verifier.verifier import verify


async def test_a_solo_table_can_open_with_its_commitment_and_deal_with_your_seed(ada: Api) -> None:
    response = await ada.client.post(
        "/solo-tables", json={"players": 3, "deal": False}, headers=ada.headers
    )
    assert response.status_code == 201, response.text
    table = response.json()
    assert table["game"] is None and table["status"] == "open"
    prepared = table["next_game"]
    assert len(prepared["commitment"]) == 64
    started = await ada.client.post(
        f"/tables/{table['table_id']}/start", json={"client_seed": "5eed"}, headers=ada.headers
    )
    assert started.status_code == 200, started.text
    game = started.json()["game"]
    assert game["game_id"] == prepared["game_id"]
    log = await ada.events(game["game_id"])
    assert first_of(log, "deal_committed")["data"]["commitment"] == prepared["commitment"]
    proof = first_of(log, "game_started")["data"]["proof"]
    assert proof["client_seeds"] == ["5eed", None, None]
    again = await ada.client.post(f"/tables/{table['table_id']}/start", headers=ada.headers)
    assert_problem(again, 409)


async def test_the_quick_solo_path_still_deals_at_once(ada: Api) -> None:
    table = await ada.solo_table(players=2)
    assert table["game"] is not None and table["next_game"] is None


def _heads(log: dict[str, Any]) -> list[tuple[int, str]]:
    return [(e["version"], e["hash"]) for e in log["events"]]


async def test_every_event_carries_its_hash_and_get_game_the_head(ada: Api) -> None:
    table = await ada.solo_table(players=2)
    gid = table["game"]["game_id"]
    during = await ada.events(gid)
    assert all(len(e["hash"]) == 64 for e in during["events"])
    view = await ada.game(gid)
    assert (view["version"], view["head_hash"]) == _heads(during)[-1]
    fingerprint = first_of(during, "game_started")["data"]["proof"]["fingerprint"]
    commitment = first_of(during, "deal_committed")["data"]["commitment"]
    kept = _heads(during)[-1]
    await ada.play_to_the_end(gid)
    export = (await ada.client.get(f"/games/{gid}/export", headers=ada.headers)).json()
    assert [(e["version"], e["hash"]) for e in export["events"][: len(during["events"])]] == (
        _heads(during)
    )
    # The export proves the commitment came first: the table's events for this game.
    table_events = export["table"]["events"]
    assert [table_events[0]["type"], table_events[-1]["type"]] == ["game_prepared", "game_opened"]
    assert verify(export, {"fingerprint": fingerprint, "heads": [kept]}) == (None, "ok")

    path = f"/games/{gid}/verification"
    params = {
        "expect_commitment": commitment,
        "expect_fingerprint": fingerprint,
        "expect_head": f"{kept[0]}:{kept[1]}",
    }
    verdict = (await ada.client.get(path, params=params, headers=ada.headers)).json()
    assert verdict["ok"] is True, verdict
    assert "holding the 1 heads you recorded" in verdict["steps"][3]["reason"]
    wrong = {**params, "expect_head": f"{kept[0]}:{'0' * 64}"}
    verdict = (await ada.client.get(path, params=wrong, headers=ada.headers)).json()
    assert verdict["ok"] is False
    chain = next(s for s in verdict["steps"] if s["name"] == "chain")
    assert chain["status"] == "failed" and chain["version"] == kept[0]
    for bad in (
        {"expect_fingerprint": "AB" * 32},
        {"expect_head": "x:" + "ab" * 32},
        {"expect_head": "0:" + "ab" * 32},
        {"expect_commitment": "ab"},
    ):
        assert_problem(await ada.client.get(path, params=bad, headers=ada.headers), 400)


async def test_a_forged_export_fails_verification_given_a_head_the_player_kept(ada: Api) -> None:
    """The outsider's verifier on a forged export of a real game: a kept head catches it."""
    table = await ada.solo_table(players=2)
    gid = table["game"]["game_id"]
    await ada.ok_move(gid, type="confirm", bee=(await ada.game(gid))["hand"][0])
    kept = _heads(await ada.events(gid))[-1]
    await ada.play_to_the_end(gid)
    real = (await ada.client.get(f"/games/{gid}/export", headers=ada.headers)).json()
    forged = forge(real)
    assert verify(forged) == (None, "ok")
    assert verify(forged, {"heads": [kept]})[0] == "chain"
    assert verify(real, {"heads": [kept]}) == (None, "ok")


async def _table_stream(api: Api, table_id: str) -> list[dict[str, Any]]:
    """Every message of a closed table's stream (it replays and ends)."""
    seen = []
    path = f"/tables/{table_id}/stream"
    async with api.client.stream("GET", path, headers=api.headers) as response:
        assert response.status_code == 200
        async for message in sse_messages(response):
            if message.data is not None:
                seen.append(message.data)
    return seen


async def test_another_persons_seed_is_hidden_until_the_deal(anon: Api) -> None:
    hana, bob, dan = await anon.guest("Hana"), await anon.guest("Bob"), await anon.guest("Dan")
    table = await hana.create_table(seats=3)
    tid, gid = table["table_id"], table["next_game"]["game_id"]
    await hana.client.post(
        f"/tables/{tid}/seed", json={"client_seed": "aa01"}, headers=hana.headers
    )
    await bob.client.post(f"/tables/{tid}/seats", json={"client_seed": "b0b0"}, headers=bob.headers)
    await bob.ok_table_action(tid, "leave")
    await hana.ok_table_action(tid, "leave")  # the game is never dealt; the table closes

    by_dan = [e for e in await _table_stream(dan, tid) if e["type"] == "seed_contributed"]
    assert [e["data"]["seed"] for e in by_dan] == [None, None]
    want = fairness.seed_commitment(gid, by_dan[0]["data"]["player_id"], bytes.fromhex("aa01"))
    assert by_dan[0]["data"]["seed_hash"] == want.hex()
    assert all(len(e["hash"]) == 64 for e in by_dan)
    by_hana = [e for e in await _table_stream(hana, tid) if e["type"] == "seed_contributed"]
    assert [e["data"]["seed"] for e in by_hana] == ["aa01", None]  # her own, not Bob's


async def test_every_seed_is_shown_once_its_game_is_dealt(anon: Api) -> None:
    hana, bob, dan = await anon.guest("Hana"), await anon.guest("Bob"), await anon.guest("Dan")
    table = await hana.create_table(seats=3)
    tid = table["table_id"]
    await hana.client.post(
        f"/tables/{tid}/seed", json={"client_seed": "aa01"}, headers=hana.headers
    )
    await bob.client.post(f"/tables/{tid}/seats", json={"client_seed": "b0b0"}, headers=bob.headers)
    await hana.ok_table_action(tid, "bees")  # dealt
    await bob.ok_table_action(tid, "leave")
    await hana.ok_table_action(tid, "leave")
    by_dan = [e for e in await _table_stream(dan, tid) if e["type"] == "seed_contributed"]
    assert [e["data"]["seed"] for e in by_dan] == ["aa01", "b0b0"]


async def test_a_committed_seed_is_revealed_after_seeds_close_and_the_last_reveal_deals(
    anon: Api,
) -> None:
    hana, bob = await anon.guest("Hana"), await anon.guest("Bob")
    table = await hana.create_table(seats=3)
    tid, gid, hana_id = table["table_id"], table["next_game"]["game_id"], table["host"]
    secret = bytes.fromhex("aa01")
    digest = fairness.seed_commitment(gid, hana_id, secret).hex()
    committed = await hana.client.post(
        f"/tables/{tid}/seed-commitment", json={"seed_hash": digest}, headers=hana.headers
    )
    assert committed.status_code == 200, committed.text
    assert committed.json()["next_game"]["committed"] == 1
    early = await hana.client.post(
        f"/tables/{tid}/seed-reveal", json={"client_seed": "aa01"}, headers=hana.headers
    )
    assert_problem(early, 409, "seeds-still-open")
    await bob.client.post(f"/tables/{tid}/seats", json={"client_seed": "b0b0"}, headers=bob.headers)

    waiting = await hana.ok_table_action(tid, "bees")  # the deal is asked for: seeds close
    assert waiting["game"] is None and waiting["next_game"]["seeds_closed"] is True
    again = await hana.ok_table_action(tid, "start")  # inside the reveal window: still waiting
    assert again["game"] is None and again["next_game"]["committed"] == 1
    late = await bob.client.post(
        f"/tables/{tid}/seed", json={"client_seed": "0b0b"}, headers=bob.headers
    )
    assert_problem(late, 409, "seeds-closed")
    wrong = await hana.client.post(
        f"/tables/{tid}/seed-reveal", json={"client_seed": "aa02"}, headers=hana.headers
    )
    assert_problem(wrong, 422, "seed-does-not-match")
    assert_problem(
        await bob.client.post(
            f"/tables/{tid}/seed-reveal", json={"client_seed": "b0b0"}, headers=bob.headers
        ),
        409,
        "nothing-to-reveal",
    )
    dealt = await hana.client.post(
        f"/tables/{tid}/seed-reveal", json={"client_seed": "aa01"}, headers=hana.headers
    )
    assert dealt.status_code == 200, dealt.text
    game = dealt.json()["game"]
    assert game is not None and game["game_id"] == gid
    log = await hana.events(gid)
    assert first_of(log, "game_started")["data"]["proof"]["client_seeds"] == ["aa01", "b0b0", None]

    await hana.ok_table_action(tid, "leave")  # Bob is left: he wins at once
    export = (await bob.client.get(f"/games/{gid}/export", headers=bob.headers)).json()
    kinds = [e["type"] for e in export["table"]["events"]]
    assert kinds[0] == "game_prepared" and kinds[-1] == "game_opened"
    assert (
        kinds.index("seed_committed") < kinds.index("seeds_closed") < kinds.index("seed_revealed")
    )
    verdict = (await bob.client.get(f"/games/{gid}/verification", headers=bob.headers)).json()
    assert verdict["ok"] is True, verdict
    assert "seed events" in verdict["steps"][1]["reason"]
    assert verify(export) == (None, "ok")
