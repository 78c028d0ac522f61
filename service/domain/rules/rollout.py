"""The flight of one turn without events, for the strong bee's rollouts.

The rules are the engine's named ones (`flight.py`: where a bee lands, the sixth bee, the
too-low bee, which for a bee player takes the cheapest stem by rule); this only keeps the stems,
their stings and the scores as plain mutable lists, so that a bee can play thousands of imagined
turns in its budget. `tests/unit/test_bees_rollout.py` checks it against the engine on thousands
of random turns.
"""

from __future__ import annotations

from service.domain.rules.cards import MAX_PLAYERS, deck_size, stings
from service.domain.rules.flight import is_sixth, landing_stem, too_low_stem

# STINGS[bee] is `stings(bee)`: a list lookup is what keeps the rollouts fast.
STINGS: tuple[int, ...] = (0, *(stings(bee) for bee in range(1, deck_size(MAX_PLAYERS) + 1)))


def cheapest(stems: list[list[int]], sums: list[int]) -> int:
    """Index (0-3) of the stem a too-low bee takes by rule (`flight.too_low_stem`)."""
    return too_low_stem(stems, sums) - 1


def fly(
    stems: list[list[int]], sums: list[int], scores: list[int], picks: list[tuple[int, int]]
) -> None:
    """Fly one turn's `picks` (bee, seat index), updating stems, their stings and the scores in
    place. `picks` need not be sorted."""
    for bee, seat in sorted(picks):
        number = landing_stem(stems, bee)
        if number is None:  # too low: it takes a stem
            index = too_low_stem(stems, sums) - 1
        elif is_sixth(stems[number - 1]):  # the sixth bee: it takes the stem
            index = number - 1
        else:
            stems[number - 1].append(bee)
            sums[number - 1] += STINGS[bee]
            continue
        scores[seat] += sums[index]
        stems[index] = [bee]
        sums[index] = STINGS[bee]
