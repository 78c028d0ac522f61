"""The audit held to what a player recorded, and to the table's events (service/domain/audit/).

A forger who holds the published server seed can derive another deal, play another legal game
and recompute every hash: such an export agrees with itself and passes an audit that is given
nothing else. These tests build one and show that the commitment, fingerprint and heads a
player recorded during play catch it, each in the step that owns the value; and that the
table's events in the export prove the commitment came before every seed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from service.__main__ import main as service_main
from service.domain import fairness
from service.domain.audit import Expectations, audit, parse_head
from service.domain.chain import GENESIS, canonical_json, event_hash
from service.domain.table_events import (
    GameOpened,
    GamePrepared,
    SeatTaken,
    SeedCommitted,
    SeedContributed,
    SeedRevealed,
    SeedsClosed,
    SeedWithheld,
    TableEventUnion,
    table_event_type,
)
from tests.unit.test_audit import (
    GAME_ID,
    SCENARIOS,
    START,
    TABLE_ID,
    assert_fails,
    build_export,
    client_seeds_of,
    find,
    honest,
    rehash,
)

SCENARIO = SCENARIOS[1]  # pppb: seat 1 and 3 give seeds, seat 2 declines
FORGED_SEEDS = (b"the forger's pick", None, b"seed of seat 3", None)


def recorded(doc: dict[str, Any], *versions: int) -> Expectations:
    """What a player kept during play: the commitment, the fingerprint, and some event hashes."""
    started = doc["events"][find(doc, "game_started")]["data"]
    return Expectations(
        commitment=doc["fairness"]["commitment"],
        fingerprint=started["proof"]["fingerprint"],
        heads=tuple((v, doc["events"][v - 1]["hash"]) for v in versions),
    )


def forged() -> dict[str, Any]:
    """Another legal game from the same commitment: the published server seed, other seeds."""
    return build_export(SCENARIO, FORGED_SEEDS)


# --- a forged export --------------------------------------------------------------------------


def test_a_forged_export_passes_when_nothing_was_recorded() -> None:
    """The limit the expectations exist for: self-consistency is all an export can show."""
    doc = forged()
    assert doc["fairness"]["commitment"] == honest(SCENARIO)["fairness"]["commitment"]
    assert audit(doc).ok


def test_a_forged_export_fails_the_fairness_step_on_the_recorded_fingerprint() -> None:
    played = honest(SCENARIO)
    expect = Expectations(fingerprint=recorded(played).fingerprint)
    report = audit(forged(), expect)
    assert_fails(report, "fairness", version=2, reason="you recorded the fingerprint")
    assert expect.fingerprint is not None and expect.fingerprint in report.render()


def test_a_forged_export_fails_the_chain_step_on_a_recorded_head() -> None:
    played = honest(SCENARIO)
    head = (5, played["events"][4]["hash"])
    report = audit(forged(), Expectations(heads=(head,)))
    assert_fails(report, "chain", version=5, reason="anchor mismatch")
    assert "a head you recorded" in report.step("chain").reason


def test_everything_recorded_from_the_honest_game_passes_it() -> None:
    doc = honest(SCENARIO)
    last = len(doc["events"])
    report = audit(doc, recorded(doc, 1, 2, 7, last))
    assert report.ok, report.render()
    assert "holding the 4 heads you recorded" in report.step("chain").reason


def test_a_recorded_commitment_that_differs_fails_the_commitment_step() -> None:
    report = audit(honest(SCENARIO), Expectations(commitment="ab" * 32))
    assert_fails(report, "commitment", version=1, reason="you recorded the commitment abab")


def test_a_recorded_head_past_the_end_fails_as_truncated() -> None:
    """The server cut the log after the player saw more of it."""
    doc = honest(SCENARIO)
    last = len(doc["events"])
    head = (last + 3, "cd" * 32)
    assert_fails(audit(doc, Expectations(heads=(head,))), "chain", reason="truncated")


def test_the_success_output_shows_the_full_anchors() -> None:
    doc = honest(SCENARIO)
    rendered = audit(doc).render()
    last = doc["events"][-1]
    assert f"commitment:  {doc['fairness']['commitment']}" in rendered
    started = doc["events"][find(doc, "game_started")]["data"]
    assert f"fingerprint: {started['proof']['fingerprint']}" in rendered
    assert f"head:        {last['version']}:{last['hash']}" in rendered


@pytest.mark.parametrize(
    "text", ["5", "0:" + "ab" * 32, "x:" + "ab" * 32, "5:" + "AB" * 32, "5:abc", "-1:" + "a" * 64]
)
def test_a_malformed_head_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"VERSION:HASH|lowercase hex"):
        parse_head(text)


# --- the command line -----------------------------------------------------------------------


def test_the_cli_catches_a_forged_export_given_what_was_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged()), encoding="utf-8")
    assert service_main(["audit", str(path)]) == 0
    capsys.readouterr()

    played = honest(SCENARIO)
    expect = recorded(played, 5)
    assert expect.commitment is not None and expect.fingerprint is not None
    args = ["audit", str(path), "--expect-commitment", expect.commitment]
    args += ["--expect-fingerprint", expect.fingerprint, "--expect-head", f"5:{expect.heads[0][1]}"]
    assert service_main(args) == 1
    out = capsys.readouterr().out
    assert "FAILED the fairness step at event v2" in out and "you recorded the fingerprint" in out

    assert service_main(["audit", str(path), "--expect-head", f"5:{expect.heads[0][1]}"]) == 1
    assert "FAILED the chain step at event v5" in capsys.readouterr().out


def test_the_cli_refuses_a_malformed_expectation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(honest(SCENARIO)), encoding="utf-8")
    assert service_main(["audit", str(path), "--expect-fingerprint", "AB" * 32]) == 2
    assert "--expect" in capsys.readouterr().err


# --- the table's events ------------------------------------------------------------------------

PEOPLE = ("player-1", "player-2", "player-3")
SEAT_3_SEED = b"seed of seat 3"


def table_events(doc: dict[str, Any], *, reveal: bool = True) -> list[TableEventUnion]:
    """What the table recorded for this game: seat 1 gives its seed in the clear, seat 3 commits
    to one and reveals it after seeds close, seat 2 gives none; the bee joins before the deal."""
    commitment = doc["fairness"]["commitment"]
    seed_1 = client_seeds_of(SCENARIO.kinds)[0]
    assert seed_1 is not None and client_seeds_of(SCENARIO.kinds)[2] == SEAT_3_SEED
    digest = fairness.seed_commitment(GAME_ID, "player-3", SEAT_3_SEED).hex()
    events: list[TableEventUnion] = [
        GamePrepared(game_id=GAME_ID, commitment=commitment),
        SeedContributed(game_id=GAME_ID, player_id="player-1", seed=seed_1.hex()),
        SeedCommitted(game_id=GAME_ID, player_id="player-3", seed_hash=digest),
        SeatTaken(player_id=None, name="Bee 4", kind="bee"),
        SeedsClosed(game_id=GAME_ID),
    ]
    if reveal:
        events.append(SeedRevealed(game_id=GAME_ID, player_id="player-3", seed=SEAT_3_SEED.hex()))
    events.append(GameOpened(game_id=GAME_ID, number=1))
    return events


def with_table(
    doc: dict[str, Any], events: list[TableEventUnion], first_version: int = 5
) -> dict[str, Any]:
    """`doc` carrying `events` as table versions first_version.., chained after a made-up
    earlier stretch of the table stream."""
    doc["table"] = {"prev_hash": "", "events": []}
    for offset, event in enumerate(events):
        doc["table"]["events"].append(
            {
                "version": first_version + offset,
                "type": table_event_type(event),
                "recorded_at": START.isoformat(),
                "hash": "",
                "data": msgspec.to_builtins(event),
            }
        )
    return rechain_table(doc, prev=bytes.fromhex("5e" * 32))


def rechain_table(doc: dict[str, Any], prev: bytes | None = None) -> dict[str, Any]:
    table = doc["table"]
    head = bytes.fromhex(table["prev_hash"]) if prev is None else prev
    table["prev_hash"] = head.hex()
    for row in table["events"]:
        data = canonical_json(row["data"])
        head = event_hash(head, f"table-{TABLE_ID}", row["version"], row["type"], data)
        row["hash"] = head.hex()
    parsed: dict[str, Any] = json.loads(json.dumps(doc))
    return parsed


def test_table_events_prove_the_commitment_came_before_the_seeds() -> None:
    doc = honest(SCENARIO)
    report = audit(with_table(doc, table_events(doc)))
    assert report.ok, report.render()
    reason = report.step("commitment").reason
    assert "prepared it before any of its 4 seed events" in reason
    assert "4 table events" not in reason and "7 table events" in report.step("format").reason


def test_an_export_without_table_events_says_the_order_is_not_shown() -> None:
    report = audit(honest(SCENARIO))
    assert report.ok and "order of commitment and seeds is not shown" in report.render()


def test_a_seed_given_before_the_commitment_fails_the_commitment_step() -> None:
    doc = honest(SCENARIO)
    events = table_events(doc)
    events[0], events[1] = events[1], events[0]
    report = audit(with_table(doc, events))
    assert_fails(report, "commitment", reason="table event v5 is seed_contributed")


def test_an_edited_table_event_fails_its_chain() -> None:
    doc = with_table(honest(SCENARIO), table_events(honest(SCENARIO)))
    doc["table"]["events"][1]["data"]["seed"] = "00"
    assert_fails(audit(doc), "commitment", reason="table event v6: hash mismatch")


def test_a_recorded_table_head_catches_a_rewritten_table_stretch() -> None:
    doc = honest(SCENARIO)
    seen = with_table(copy.deepcopy(doc), table_events(doc))
    own_seed = (6, seen["table"]["events"][1]["hash"])  # player 1 kept their seed event's hash
    rewritten = with_table(doc, table_events(doc))
    rewritten["table"]["events"][1]["data"]["seed"] = "00"
    rewritten = rechain_table(rewritten)
    expect = Expectations(table_heads=(own_seed,))
    assert_fails(audit(rewritten, expect), "commitment", reason="anchor mismatch")
    assert audit(seen, expect).ok


def test_a_proof_whose_seeds_are_not_the_tables_fails_the_commitment_step() -> None:
    doc = honest(SCENARIO)
    events = table_events(doc)
    events[1] = SeedContributed(game_id=GAME_ID, player_id="player-1", seed="0badc0de")
    report = audit(with_table(doc, events))
    assert_fails(report, "commitment", reason="the proof's seat entries")
    assert "0badc0de" in report.step("commitment").reason


def test_a_reveal_that_does_not_match_its_commitment_fails() -> None:
    doc = honest(SCENARIO)
    events = table_events(doc)
    events[5] = SeedRevealed(game_id=GAME_ID, player_id="player-3", seed="00")
    assert_fails(audit(with_table(doc, events)), "commitment", reason="committed to")


def test_a_deal_that_did_not_wait_for_a_reveal_fails() -> None:
    doc = honest(SCENARIO)
    report = audit(with_table(doc, table_events(doc, reveal=False)))
    assert_fails(report, "commitment", reason="still owed a committed seed")


def test_a_withheld_seed_deals_with_none() -> None:
    """Seat 3 never revealed: its entry in the proof is none, and the audit agrees."""
    seeds = (client_seeds_of(SCENARIO.kinds)[0], None, None, None)
    doc = build_export(SCENARIO, seeds)
    events = table_events(doc, reveal=False)
    events.insert(-1, SeedWithheld(game_id=GAME_ID, player_id="player-3"))
    report = audit(with_table(doc, events))
    assert report.ok, report.render()


def test_a_seed_given_after_seeds_closed_fails() -> None:
    doc = honest(SCENARIO)
    events = table_events(doc)
    events.insert(5, SeedContributed(game_id=GAME_ID, player_id="player-2", seed="aa"))
    assert_fails(audit(with_table(doc, events)), "commitment", reason="after seeds were closed")


def test_table_events_for_another_game_fail() -> None:
    doc = honest(SCENARIO)
    events = table_events(doc)
    events[-1] = GameOpened(game_id="another", number=1)
    assert_fails(audit(with_table(doc, events)), "commitment", reason="end with its game_opened")


def test_the_first_table_version_chains_from_genesis() -> None:
    doc = honest(SCENARIO)
    built = with_table(doc, table_events(doc), first_version=1)
    assert_fails(audit(built), "commitment", reason="table event v1")
    assert audit(rechain_table(built, prev=GENESIS)).ok


def test_a_forged_export_with_its_table_events_still_fails_on_the_fingerprint() -> None:
    """The forger rewrites the table's events too (they chain: the recipe is public)."""
    doc = forged()
    events = table_events(honest(SCENARIO))
    events[1] = SeedContributed(game_id=GAME_ID, player_id="player-1", seed=FORGED_SEEDS[0].hex())
    rebuilt = with_table(doc, events)
    assert audit(rebuilt).ok
    expect = Expectations(fingerprint=recorded(honest(SCENARIO)).fingerprint)
    assert_fails(audit(rebuilt, expect), "fairness", reason="you recorded the fingerprint")


def test_table_events_of_a_rehashed_export_are_untouched() -> None:
    doc = with_table(honest(SCENARIO), table_events(honest(SCENARIO)))
    assert audit(rehash(doc)).ok
