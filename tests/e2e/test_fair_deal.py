"""The fair deal over HTTP (docs/fairness.md): commit, contribute, deal, reveal, verify."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from service.domain import fairness
from tests.e2e.api_client import Api, first_of, play_online_to_the_end
from tests.e2e.test_solo_api import assert_problem
from tests.verifier.forge import forge
from tests.verifier.verifier import verify


async def test_seeds_go_into_a_deal_committed_before_they_were_given(anon: Api) -> None:
    hana, bob = await anon.guest("Hana"), await anon.guest("Bob")
    table = await hana.create_table(seats=3)
    tid = table["table_id"]
    prepared = table["next_game"]
    assert len(prepared["commitment"]) == 64 and prepared["seeds"] == 0
    response = await hana.client.post(
        f"/tables/{tid}/seed", json={"client_seed": "aa01"}, headers=hana.headers
    )
    assert response.status_code == 200 and response.json()["your_seed"] == "aa01"
    joined = await bob.client.post(
        f"/tables/{tid}/seats", json={"client_seed": "b0b0"}, headers=bob.headers
    )
    assert joined.json()["next_game"]["seeds"] == 2
    started = await hana.client.post(f"/tables/{tid}/bees", headers=hana.headers)
    game = started.json()["game"]
    gid = game["game_id"]
    assert gid == prepared["game_id"] and started.json()["next_game"] is None
    log = await hana.events(gid)
    assert log["events"][0]["type"] == "deal_committed"
    assert log["events"][0]["data"]["commitment"] == prepared["commitment"]
    proof = first_of(log, "game_started")["data"]["proof"]
    assert proof["client_seeds"] == ["aa01", "b0b0", None]
    assert_problem(
        await hana.client.get(f"/games/{gid}/export", headers=hana.headers), 409, "game-not-over"
    )

    await play_online_to_the_end({1: hana, 2: bob}, gid)
    export = (await bob.client.get(f"/games/{gid}/export", headers=bob.headers)).json()
    record = export["fairness"]
    published = fairness.Published(
        game_id=gid,
        players=3,
        commitment=bytes.fromhex(record["commitment"]),
        client_seeds=tuple(
            bytes.fromhex(s) if s is not None else None for s in record["client_seeds"]
        ),
        transcript=bytes.fromhex(record["transcript"]),
        fingerprint=bytes.fromhex(record["fingerprint"]),
        server_seed=bytes.fromhex(record["server_seed"]),
        deck_order=tuple(record["deck_order"]),
        hands=tuple(tuple(h) for h in record["hands"]),
        stems=tuple(record["stems"]),
    )
    assert fairness.verified(fairness.verify(published))
    assert export["events"][-1]["type"] == "deal_revealed"
    assert all(len(e["hash"]) == 64 for e in export["events"])
    # The table prepared the next game, with a fresh commitment, as this one ended.
    after = await hana.table(tid)
    assert after["next_game"]["game_id"] != gid and after["next_game"]["seeds"] == 0


async def test_a_solo_game_is_committed_and_revealed_too(ada: Api) -> None:
    table = await ada.solo_table(players=2)
    gid = table["game"]["game_id"]
    assert table["next_game"] is None  # dealt at once
    await ada.play_to_the_end(gid)
    log = await ada.events(gid)
    assert [log["events"][0]["type"], log["events"][-1]["type"]] == [
        "deal_committed",
        "deal_revealed",
    ]
    again = await ada.client.post(
        f"/tables/{table['table_id']}/games", json={"client_seed": "5eed"}, headers=ada.headers
    )
    assert again.status_code == 201, again.text
    new_log = await ada.events(again.json()["game"]["game_id"])
    assert first_of(new_log, "game_started")["data"]["proof"]["client_seeds"] == ["5eed", None]


async def test_bad_seeds_are_400(ada: Api) -> None:
    tid = (await ada.create_table(seats=2))["table_id"]
    for bad in ["XYZ", "abc", "A0", "00" * 65, 5]:
        response = await ada.client.post(
            f"/tables/{tid}/seed", json={"client_seed": bad}, headers=ada.headers
        )
        assert_problem(response, 400)


async def test_the_server_verifies_a_finished_game_and_the_offline_audit_agrees(
    ada: Api, tmp_path: Path
) -> None:
    table = await ada.solo_table(players=3)
    gid = table["game"]["game_id"]
    assert_problem(await ada.client.get(f"/games/{gid}/verification", headers=ada.headers), 409)
    await ada.play_to_the_end(gid)
    verdict = (await ada.client.get(f"/games/{gid}/verification", headers=ada.headers)).json()
    assert verdict["ok"] is True
    assert [s["name"] for s in verdict["steps"]] == [
        "format",
        "commitment",
        "fairness",
        "chain",
        "replay",
        "result",
    ]
    assert {c["name"] for c in verdict["steps"][2]["checks"]} >= {"commitment", "fingerprint"}
    export = (await ada.client.get(f"/games/{gid}/export", headers=ada.headers)).json()
    path = tmp_path / "game.json"
    path.write_text(json.dumps(export))
    ok = subprocess.run(
        [sys.executable, "-m", "service", "audit", str(path)], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    export["events"][3]["data"]["bee"] = 999  # tamper with one stored event
    path.write_text(json.dumps(export))
    bad = subprocess.run(
        [sys.executable, "-m", "service", "audit", str(path)], capture_output=True, text=True
    )
    assert bad.returncode == 1 and "chain" in bad.stdout


async def test_a_forged_export_fails_the_audit_given_what_the_player_recorded(
    ada: Api, tmp_path: Path
) -> None:
    """The forger holds the server seed published at the end, deals another game under the same
    commitment and re-chains it; the fingerprint the player saw before turn 1 catches it. An
    outsider's verifier written from docs/fairness.md agrees with the server throughout."""
    table = await ada.solo_table(players=3)
    gid = table["game"]["game_id"]
    during = await ada.events(gid)  # before turn 1 is played
    commitment = first_of(during, "deal_committed")["data"]["commitment"]
    fingerprint = first_of(during, "game_started")["data"]["proof"]["fingerprint"]
    await ada.play_to_the_end(gid)
    real = (await ada.client.get(f"/games/{gid}/export", headers=ada.headers)).json()
    assert verify(real, {"commitment": commitment, "fingerprint": fingerprint}) == (None, "ok")
    forged = forge(real)
    assert forged["fairness"]["fingerprint"] != fingerprint
    assert verify(forged) == (None, "ok")
    assert verify(forged, {"fingerprint": fingerprint})[0] == "fairness"

    def audit(doc: object, *expect: str) -> subprocess.CompletedProcess[str]:
        path = tmp_path / "export.json"
        path.write_text(json.dumps(doc))
        command = [sys.executable, "-m", "service", "audit", str(path), *expect]
        return subprocess.run(command, capture_output=True, text=True, check=False)

    recorded = ["--expect-commitment", commitment, "--expect-fingerprint", fingerprint]
    honest = audit(real, *recorded)
    assert honest.returncode == 0, honest.stdout + honest.stderr
    assert f"fingerprint: {fingerprint}" in honest.stdout
    assert audit(forged).returncode == 0  # self-consistent
    caught = audit(forged, *recorded)
    assert caught.returncode == 1 and "FAILED the fairness step at event v2" in caught.stdout
    assert "you recorded the fingerprint" in caught.stdout
