"""A smoke test of the levels' ratings (`tests/bench/level_ratings.py`, run by `make
bench-bees`): the line-ups seat every level, a game is legal and reproducible, places share ties,
and the fit is the service's people's rating: a level that always places first rates above one
that always places last. Which level is stronger is the benchmark's to measure."""

from __future__ import annotations

import pytest

from service.domain.ratings import NEW
from service.domain.rules import expert, strong
from tests.bench import level_ratings, mcs


def test_line_ups_seat_every_level_and_eight_seats_repeat_some() -> None:
    four = [level_ratings.lineup(4, n) for n in range(5)]
    assert all(len(set(seats)) == 4 for seats in four)
    assert {level for seats in four for level in seats} == set(level_ratings.POOL)
    eight = level_ratings.lineup(8, 3)
    assert len(eight) == 8 and set(eight) == set(level_ratings.POOL)
    assert level_ratings.lineup(4, 7) == level_ratings.lineup(4, 7)


def test_a_game_is_legal_and_reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expert, "WORK", 20_000)
    monkeypatch.setattr(expert, "HARD_WORK", 20_000)
    monkeypatch.setattr(strong, "WORK", 2_000)
    monkeypatch.setattr(mcs, "PLAYOUTS", 2)
    game = level_ratings.play(4, 1)
    assert all(len(ms) == 10 for ms in game["cpu_ms"])  # ten legal picks a seat
    assert level_ratings.play(4, 1)["stings"] == game["stings"]


def test_places_share_ties_and_the_fit_orders_the_levels() -> None:
    assert level_ratings.places([5, 0, 5, 9]) == [2, 1, 2, 3]
    games = [
        {"players": 4, "levels": ["a", "b", "c", "d"], "stings": [0, 3, 6, 9], "cpu_ms": [[]] * 4}
        for _ in range(12)
    ]
    fitted = level_ratings.fit(games)
    assert fitted["a"].points > fitted["b"].points > NEW.points > fitted["d"].points
    assert fitted["a"].sigma < NEW.sigma and fitted["a"].games == 12
    low, high = level_ratings.bootstrap(games)["a"]
    assert low <= fitted["a"].points <= high
