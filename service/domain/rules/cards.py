"""The bees and the stems: deck size, stings, and the fixed numbers of a game (seed §1, §2, §6)."""

from __future__ import annotations

from collections.abc import Sequence

MIN_PLAYERS = 2
MAX_PLAYERS = 8
HAND_SIZE = 10
STEM_COUNT = 4
STEM_CAPACITY = 5  # a bee landing on a stem that already holds 5 is the sixth bee
TURNS = HAND_SIZE  # one hand: every bee is played after 10 turns

# Doubles carry 5 stings; the 55 is both a double and ends in 5, and the seed gives it 7.
_DOUBLES = frozenset({11, 22, 33, 44, 66, 77})


def stings(bee: int) -> int:
    """Stings carried by one bee (seed §2)."""
    if bee == 55:
        return 7
    if bee in _DOUBLES:
        return 5
    if bee % 10 == 0:
        return 3
    if bee % 10 == 5:
        return 2
    return 1


def deck_size(players: int) -> int:
    """10 bees a player plus 4 to start the stems: 1–24 with two players, 1–84 with eight."""
    return HAND_SIZE * players + STEM_COUNT


def deck(players: int) -> range:
    """Every bee of a game for this many players, in numeric order."""
    return range(1, deck_size(players) + 1)


def total_stings(players: int) -> int:
    return sum(stings(bee) for bee in deck(players))


# `stings` of every bee of the biggest deck: a lookup is several times cheaper than the call, and
# the rules add up stems and piles after most turns.
_STINGS = {bee: stings(bee) for bee in range(1, deck_size(MAX_PLAYERS) + 1)}
_stings_of = _STINGS.__getitem__


def pile_stings(bees: Sequence[int]) -> int:
    try:
        return sum(map(_stings_of, bees))
    except KeyError:  # not a bee of any deck: the rule itself
        return sum(stings(bee) for bee in bees)
