"""Seed §1–2: the deck grows with the table, and every bee carries stings."""

from __future__ import annotations

import pytest

from service.domain.rules.cards import deck, deck_size, pile_stings, stings, total_stings

# Seed §2, copied literally ("–" means none).
SEED_STINGS_TABLE = """
| 2 | 1–24 | 18 | 2 | 2 | 2 | – | 38 |
| 3 | 1–34 | 25 | 3 | 3 | 3 | – | 55 |
| 4 | 1–44 | 32 | 4 | 4 | 4 | – | 72 |
| 5 | 1–54 | 40 | 5 | 5 | 4 | – | 85 |
| 6 | 1–64 | 48 | 5 | 6 | 4 | 1 | 103 |
| 7 | 1–74 | 55 | 6 | 7 | 5 | 1 | 120 |
| 8 | 1–84 | 62 | 7 | 8 | 6 | 1 | 137 |
"""


def _rows() -> list[tuple[int, int, int, dict[int, int], int]]:
    rows = []
    for line in SEED_STINGS_TABLE.strip().splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        players = int(cells[0])
        low, high = (int(n) for n in cells[1].split("–"))
        counts = [0 if cell == "–" else int(cell) for cell in cells[2:7]]
        by_stings = dict(zip((1, 2, 3, 5, 7), counts, strict=True))
        rows.append((players, low, high, by_stings, int(cells[7])))
    return rows


ROWS = _rows()


def test_the_table_covers_2_to_8_players() -> None:
    assert [row[0] for row in ROWS] == list(range(2, 9))


@pytest.mark.parametrize(("players", "low", "high", "by_stings", "total"), ROWS)
def test_rule_the_deck_and_its_stings_match_the_seed_table_row(
    players: int, low: int, high: int, by_stings: dict[int, int], total: int
) -> None:
    bees = list(deck(players))
    assert bees[0] == low
    assert bees[-1] == high
    assert len(bees) == deck_size(players) == 10 * players + 4
    counted = {n: sum(1 for bee in bees if stings(bee) == n) for n in (1, 2, 3, 5, 7)}
    assert counted == by_stings
    assert sum(counted.values()) == len(bees)  # no bee carries any other number of stings
    assert total_stings(players) == pile_stings(bees) == total


def test_rule_a_four_player_deck_holds_72_stings() -> None:
    assert total_stings(4) == 72


def test_rule_the_55_carries_7_stings() -> None:
    assert stings(55) == 7


@pytest.mark.parametrize("bee", [11, 22, 33, 44, 66, 77])
def test_rule_doubles_carry_5_stings(bee: int) -> None:
    assert stings(bee) == 5


@pytest.mark.parametrize("bee", [10, 20, 30, 40, 50, 60, 70, 80])
def test_rule_a_bee_ending_in_0_carries_3_stings(bee: int) -> None:
    assert stings(bee) == 3


@pytest.mark.parametrize("bee", [5, 15, 25, 35, 45, 65, 75])
def test_rule_a_bee_ending_in_5_carries_2_stings(bee: int) -> None:
    assert stings(bee) == 2


@pytest.mark.parametrize("bee", [1, 2, 9, 12, 19, 21, 54, 56, 67, 78, 84])
def test_rule_most_bees_carry_1_sting(bee: int) -> None:
    assert stings(bee) == 1


@pytest.mark.parametrize(
    ("players", "has_55", "has_66", "has_77"),
    [
        (5, False, False, False),
        (6, True, False, False),
        (7, True, True, False),
        (8, True, True, True),
    ],
)
def test_rule_the_55_66_and_77_join_the_deck_with_6_7_and_8_players(
    players: int, has_55: bool, has_66: bool, has_77: bool
) -> None:
    bees = set(deck(players))
    assert (55 in bees, 66 in bees, 77 in bees) == (has_55, has_66, has_77)


def test_rule_your_score_is_the_stings_on_the_bees_not_their_number() -> None:
    assert pile_stings((55, 1)) == 8
    assert pile_stings((1, 2, 3, 4, 6, 7)) == 6
