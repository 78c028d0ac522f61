"""A smoke test of `make bench-bees` (docs/benchmarks.md, "Bee players"): every level and anchor
of the table plays whole legal games through the engine, at 4 and 8 players, on small budgets.
Strength is the benchmark's to measure, never asserted here."""

from __future__ import annotations

import pytest

from service.domain.rules import expert, strong
from service.domain.rules.cards import total_stings
from tests.bench import bees, mcs


@pytest.mark.parametrize("players", [4, 8])
@pytest.mark.parametrize("level", sorted(bees.SEEDED))
def test_each_level_of_the_table_plays_whole_legal_games(
    level: str, players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(expert, "WORK", 20_000)
    monkeypatch.setattr(expert, "HARD_WORK", 20_000)
    monkeypatch.setattr(strong, "WORK", 2_000)
    monkeypatch.setattr(strong, "WORK_PER_SEAT", 0)
    monkeypatch.setattr(mcs, "PLAYOUTS", 2)
    others = "mcs" if level != "mcs" else "expert"
    game = bees.play_one(level, others, players, 0)
    # play_game only returns once the engine ended the game: every pick was legal
    assert len(game["cpu1"]) == 10 and len(game["cpu_others"]) == 10 * (players - 1)
    assert 0 <= game["stings"] <= total_stings(players)
    assert game["share"] <= game["win"]


def test_a_game_of_the_table_is_reproducible_and_the_interval_holds_the_mean() -> None:
    one = bees.play_one("medium", "random", 4, 3)
    again = bees.play_one("medium", "random", 4, 3)
    assert (one["stings"], one["others"]) == (again["stings"], again["others"])
    low, high = bees.bootstrap([0.0, 1.0] * 50)
    assert low < 0.5 < high


def test_a_person_s_wait_at_a_table_of_expert_bees_is_measured_through_the_service_s_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(expert, "WORK", 20_000)
    answer = bees.answer_times(1, players=3)
    assert answer["moves"] >= 10  # a confirm a turn, and a stem to take when too low
    assert answer["cpu_ms"]["decisions"] == answer["moves"]
