"""Tampering the chain v1 let through, caught by the audit alone under v2 (no recorded values):
an edited `recorded_at`, and two people's confirmations put in each other's place, even by a
forger who knows every recipe and recomputes every hash (the seal key is public after the end).
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from typing import Any

import msgspec

from service.domain import chain
from service.domain.audit import audit
from tests.e2e.api_client import Api, play_online_to_the_end

UNTIMED = {"turn_seconds": 600, "choice_seconds": 600}


async def online_export(anon: Api) -> dict[str, Any]:
    """A finished game of two people whose confirmations are separate appends."""
    ann, ben = await anon.guest("Ann"), await anon.guest("Ben")
    tid = (await ann.create_table(seats=2, **UNTIMED))["table_id"]
    await ben.ok_table_action(tid, "seats")
    gid = (await ann.table(tid))["games"][-1]
    await play_online_to_the_end({1: ann, 2: ben}, gid)
    response = await ann.client.get(f"/games/{gid}/export", headers=ann.headers)
    assert response.status_code == 200, response.text
    export: dict[str, Any] = response.json()
    return export


def rechain(export: dict[str, Any]) -> None:
    """Recompute every v2 hash of the game's events, as a forger would."""
    key = chain.seal_key(export["game_id"], bytes.fromhex(export["fairness"]["server_seed"]))
    stream, prev = f"game-{export['game_id']}", chain.GENESIS
    for row in export["events"]:
        body = chain.body_digest(
            stream,
            row["version"],
            row["type"],
            row["data"],
            row["metadata"],
            {export["game_id"]: key},
        )
        at = msgspec.convert(row["recorded_at"], datetime)
        prev = chain.link_hash_v2(prev, body, at)
        row["hash"] = prev.hex()


def two_confirmations(export: dict[str, Any]) -> tuple[int, int]:
    """Indexes of seat 1's and then seat 2's confirmation of the same turn, each its own move."""
    rows = export["events"]
    for i, row in enumerate(rows):
        nxt = rows[i + 1] if i + 1 < len(rows) else None
        if (
            nxt is not None
            and row["type"] == nxt["type"] == "pick_confirmed"
            and row["data"]["seat"] != nxt["data"]["seat"]
        ):
            return i, i + 1
    raise AssertionError("no two confirmations in a row")


async def test_v2_exports_carry_chain_and_metadata_and_audit_clean(anon: Api) -> None:
    export = await online_export(anon)
    assert {row["chain"] for row in export["events"]} == {2}
    moves = [r for r in export["events"] if r["type"] == "pick_confirmed"]
    assert moves and all(r["metadata"]["actor"] and r["metadata"]["command_id"] for r in moves)
    report = audit(export)
    assert report.ok, report
    assert "swarm/event/v2" in report.step("chain").reason


async def test_an_edited_time_stamp_is_caught_without_recorded_values(anon: Api) -> None:
    export = await online_export(anon)
    tampered = copy.deepcopy(export)
    row = tampered["events"][5]
    at = msgspec.convert(row["recorded_at"], datetime) + timedelta(milliseconds=1)
    row["recorded_at"] = msgspec.to_builtins(at)
    report = audit(tampered)
    failure = report.failure
    assert failure is not None and failure.name == "chain", report
    assert failure.version == 6 and "hash mismatch" in failure.reason


async def test_reordered_confirmations_are_caught_even_with_recomputed_hashes(anon: Api) -> None:
    export = await online_export(anon)
    first, second = two_confirmations(export)

    # Whole events swapped (each keeps its time and metadata), versions renumbered, every hash
    # recomputed: the times now run backwards.
    swapped = copy.deepcopy(export)
    rows = swapped["events"]
    rows[first], rows[second] = rows[second], rows[first]
    rows[first]["version"], rows[second]["version"] = first + 1, second + 1
    rechain(swapped)
    failure = audit(swapped).failure
    assert failure is not None and failure.name == "chain", failure
    assert "reordered" in failure.reason

    # Only the data swapped (time and metadata stay in place), hashes recomputed: each
    # confirmation is now signed by the other person.
    traded = copy.deepcopy(export)
    rows = traded["events"]
    rows[first]["data"], rows[second]["data"] = rows[second]["data"], rows[first]["data"]
    rechain(traded)
    failure = audit(traded).failure
    assert failure is not None and failure.name == "chain", failure
    assert "not by the person in that seat" in failure.reason

    # Untouched, the same recomputation passes: the checks above are the tampering's.
    honest = copy.deepcopy(export)
    rechain(honest)
    assert honest == export and audit(honest).ok
