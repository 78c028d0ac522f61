"""A short run of the online benchmark (``tests/bench/online.py``), so its code does not rot:
two service instances, two generator processes, a few games on fast clocks, seconds in all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench import online


@pytest.mark.slow
def test_online_bench_smoke(database_url: str, tmp_path: Path) -> None:
    out = tmp_path / "online.json"
    code = online.main(
        [
            "--levels=2,4",
            "--seconds=3",
            "--warmup=0.5",
            "--generators=2",
            "--think-scale=0.05",
            "--followed=1",
            "--clock-share=0.3",
            "--turn-seconds=1",
            "--choice-seconds=1",
            f"--database-url={database_url}",
            f"--json={out}",
        ]
    )
    assert code == 0
    results = json.loads(out.read_text())
    levels = results["levels"]
    assert [lv["games"] for lv in levels] == [2, 4]
    for lv in levels:
        assert lv["generators"] == 2
        assert lv["moves"] > 0 and lv["moves_by_type"].get("confirm", 0) > 0
        assert lv["moves_offered"] >= lv["moves"] and lv["moves_offered_per_s"] > 0
        assert lv["server_errors_but_503"] == 0 and lv["streams_cut"] == 0
        assert set(lv["refusals"]) <= {"503"}, lv["refusals"]
        # A move the turn clock made stale (a loaded machine, 1 s turns) is no refusal to
        # count: the generator shows it was the clock's and decides again, as a client does.
        assert set(lv["raced_by_clock"]) <= online.CLOCK_RACES, lv["raced_by_clock"]
        assert lv["conflicts"] == 0 and lv["server_errors"] == 0, lv["errors"]
        assert lv["stream_gaps"] == 0 and lv["streams_opened"] >= 4 * lv["games"]
        assert lv["reveal_to_follower_ms"]["samples"] > 0
        assert lv["clock"]["turns_revealed_twice"] == 0
        cpu = lv["cpu"]["cpu_s"]
        assert cpu["service"] > 0 and cpu["generators"] > 0
        assert set(lv["cpu"]["share_of_machine"]) == set(cpu)
    assert sum(lv["clock"]["expiries"] for lv in levels) > 0
    (ratio,) = results["ratios"]
    assert ratio["games"] == 4 and ratio["baseline_games"] == 2 and ratio["moves_per_s"]
    assert 0 < ratio["moves_per_s_of_peak"] <= 1
    assert results["servers"]["log_problem_lines"] == []
