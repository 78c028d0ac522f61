"""`swarm audit game.json --replay` (service/domain/audit/narrative.py) on a committed export.

The fixtures are real exports, one under each hash chain (v1, then v2): a solo game of 4 played
on the service (Ada, a person, against three heuristic bee players; her lowest bee too low at
turn 1, so she chooses a stem, and the bees take sixth bees and cheapest stems). Each golden text
is its narrative; after a deliberate change of the words, rewrite them with
`SWARM_WRITE_GOLDEN=1 pytest tests/unit/test_audit_replay.py` and read the diff.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from service.__main__ import main as service_main
from service.domain.audit.narrative import narrate

FIXTURES = Path(__file__).parent / "fixtures"
EXPORT = FIXTURES / "replay_export.json"
GOLDEN = FIXTURES / "replay_export.txt"
BOTH = [(EXPORT, GOLDEN), (FIXTURES / "replay_export_v2.json", FIXTURES / "replay_export_v2.txt")]


def _export() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(EXPORT.read_text())
    return document


@pytest.mark.parametrize(("export", "golden"), BOTH, ids=["chain-v1", "chain-v2"])
def test_the_narrative_of_the_fixture_matches_the_golden_text(export: Path, golden: Path) -> None:
    told = narrate(json.loads(export.read_text()))
    if os.environ.get("SWARM_WRITE_GOLDEN"):
        golden.write_text(told)
    assert told == golden.read_text()


@pytest.mark.parametrize("golden", [g for _, g in BOTH], ids=["chain-v1", "chain-v2"])
def test_the_narrative_tells_picks_flights_takes_and_stings_turn_by_turn(golden: Path) -> None:
    told = golden.read_text()
    assert told.count("\nTurn ") == 10
    assert told.count("Picks, lowest first:") == 10
    assert told.count("Stings after the turn:") == 10
    assert "is the sixth bee on stem" in told  # a sixth bee's take
    assert "chosen by Ada" in told  # a person's too-low choice
    assert "the cheapest, by rule" in told  # a bee player's too-low take
    assert told.count(" wins.") + told.count("share the win.") == 1


@pytest.mark.parametrize(("export", "golden"), BOTH, ids=["chain-v1", "chain-v2"])
def test_audit_replay_prints_the_game_then_the_verdict(
    export: Path, golden: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = service_main(["audit", str(export), "--replay"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.startswith(golden.read_text())
    assert "every check passed" in out[len(golden.read_text()) :]


def test_without_replay_only_the_verdict_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert service_main(["audit", str(EXPORT)]) == 0
    out = capsys.readouterr().out
    assert "Turn 1" not in out and "every check passed" in out


def test_a_tampered_export_is_told_as_it_says_and_fails_the_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = copy.deepcopy(_export())
    sixth = next(
        e for e in document["events"] if e["type"] == "bee_landed" and e["data"].get("taken")
    )
    sixth["data"]["taken"] = sixth["data"]["taken"][:-1]
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(document))
    status = service_main(["audit", str(path), "--replay"])
    out = capsys.readouterr().out
    assert status == 1
    assert "Turn 10" in out or "cannot be replayed" in out
    assert "✗" in out


def test_what_is_not_an_export_is_said_plainly() -> None:
    assert (
        narrate([1, 2]) == "Cannot replay this export: the export is a JSON list, not an object.\n"
    )
    assert narrate({"format": "other"}).startswith("Cannot replay this export: unknown format")
