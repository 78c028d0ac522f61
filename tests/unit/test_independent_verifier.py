"""An outsider's verifier written from docs/fairness.md alone (tests/verifier/verifier.py, no
`service` import) agrees with the audit on every export these tests make: honest, tampered,
forged, with and without the table's events and a player's recorded values.

Where the audit fails `replay` or `result` (the rules of the game, which the doc does not
restate), the outsider, who checks only the fair deal and the chain, passes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from service.domain.audit import Expectations, audit
from tests.unit import test_audit as base
from tests.unit import test_audit_anchors as anchors
from tests.verifier.verifier import verify

OUTSIDER_STEPS = ("format", "commitment", "fairness", "chain")


def agree(doc: dict[str, Any], expect: Expectations | None = None) -> str | None:
    expect = expect or Expectations()
    report = audit(copy.deepcopy(doc), expect)
    theirs, reason = verify(
        copy.deepcopy(doc),
        {
            "commitment": expect.commitment,
            "fingerprint": expect.fingerprint,
            "heads": expect.heads,
            "table_heads": expect.table_heads,
        },
    )
    failure = report.failure
    ours = failure.name if failure is not None else None
    if ours in ("replay", "result"):
        ours = None
    assert theirs == ours, f"outsider: {theirs} ({reason})\n{report.render()}"
    return ours


@pytest.mark.parametrize("scenario", base.SCENARIOS, ids=lambda s: s.id)
def test_the_outsider_passes_every_honest_game(scenario: base.Scenario) -> None:
    doc = base.honest(scenario)
    assert agree(doc) is None
    assert agree(doc, anchors.recorded(doc, 1, len(doc["events"]))) is None


def _swap_bees(doc: dict[str, Any]) -> None:
    hands = doc["fairness"]["hands"]
    hands[0][3], hands[1][5] = hands[1][5], hands[0][3]
    base._game_started(doc)["hands"] = copy.deepcopy(hands)


def _flip_seed(doc: dict[str, Any]) -> None:
    seed = bytearray(bytes.fromhex(doc["fairness"]["server_seed"]))
    seed[0] ^= 1
    doc["fairness"]["server_seed"] = seed.hex()
    base._deal_revealed(doc)["server_seed"] = seed.hex()


def _change_client_seed(doc: dict[str, Any]) -> None:
    doc["fairness"]["client_seeds"][0] = "00"
    base._game_started(doc)["proof"]["client_seeds"][0] = "00"


def _edit_landing(doc: dict[str, Any]) -> None:
    doc["events"][base._a_landing(doc)]["data"]["stem"] = 4


def _uppercase(doc: dict[str, Any]) -> None:
    doc["fairness"]["transcript"] = doc["fairness"]["transcript"].upper()


# name: (tampering, re-chained as a forger would, the step both fail; None: the outsider passes
# and the audit fails only the rules' replay)
TAMPERINGS: dict[str, tuple[Callable[[dict[str, Any]], object], bool, str | None]] = {
    "bees swapped": (_swap_bees, True, "fairness"),
    "server seed flipped": (_flip_seed, True, "fairness"),
    "client seed changed": (_change_client_seed, True, "fairness"),
    "event edited": (_edit_landing, False, "chain"),
    "event edited, re-chained": (_edit_landing, True, None),
    "uppercase hex": (_uppercase, False, "format"),
    "relabelled game": (lambda d: d.update(game_id=base.OTHER_GAME_ID), False, "commitment"),
    "first event removed": (lambda d: d["events"].pop(0), True, "commitment"),
}


@pytest.mark.parametrize("name", TAMPERINGS)
def test_the_outsider_fails_each_tampered_export_in_the_same_step(name: str) -> None:
    mutate, rechain, step = TAMPERINGS[name]
    doc = base.honest()
    mutate(doc)
    assert agree(base.rehash(doc) if rechain else doc) == step
    if step is None:
        assert audit(base.rehash(doc)).failure is not None


def test_the_outsider_catches_the_forged_export_given_what_was_recorded() -> None:
    forged = anchors.forged()
    played = base.honest(anchors.SCENARIO)
    assert agree(forged) is None  # self-consistent: nothing recorded, nothing to hold it to
    assert agree(forged, Expectations(fingerprint=anchors.recorded(played).fingerprint)) == (
        "fairness"
    )
    head = (5, played["events"][4]["hash"])
    assert agree(forged, Expectations(heads=(head,))) == "chain"


def test_the_outsider_reads_the_tables_events_alike() -> None:
    doc = base.honest(anchors.SCENARIO)
    events = anchors.table_events(doc)
    assert agree(anchors.with_table(copy.deepcopy(doc), events)) is None
    assert agree(anchors.with_table(copy.deepcopy(doc), events[:-2] + events[-1:])) == (
        "commitment"
    )
    swapped = [events[1], events[0], *events[2:]]
    assert agree(anchors.with_table(copy.deepcopy(doc), swapped)) == "commitment"
    wrong = list(events)
    seed_event: Any = type(events[5])  # a table event with a player's seed
    wrong[5] = seed_event(game_id=base.GAME_ID, player_id="player-3", seed="00")
    assert agree(anchors.with_table(copy.deepcopy(doc), wrong)) == "commitment"
