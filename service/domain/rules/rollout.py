"""The flight of one turn without events, for the strong bee's rollouts.

The rules are the engine's named ones (`flight.py`: where a bee lands, the sixth bee, the
too-low bee, which for a bee player takes the cheapest stem by rule); this only keeps the stems,
their stings and the scores as plain mutable lists, so that a bee can play thousands of imagined
turns in its budget. `tests/unit/test_bees_rollout.py` checks it against the engine on thousands
of random turns.
"""

from __future__ import annotations

from service.domain.rules.cards import MAX_PLAYERS, STEM_CAPACITY, deck_size, stings
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


def fly_tops(
    tops: list[int],
    lens: list[int],
    sums: list[int],
    scores: list[int],
    picks: list[tuple[int, int]],
) -> None:
    """`fly` on stems kept as their top bee, their length and their stings, all a flight needs:
    no list to copy or grow, which is what makes the expert bee's playouts to the end of a game
    affordable. The three rules of `flight.py` (`landing_stem`, `is_sixth`, `too_low_stem`) are
    written inline on these lists, the one place they are, for speed (a function call per bee
    costs a third of a playout); `tests/unit/test_bees_rollout.py` holds it to the engine.
    Sorts `picks` in place."""
    picks.sort()
    for bee, seat in picks:
        target = -1
        top = 0
        for index in range(len(tops)):  # landing_stem
            t = tops[index]
            if top < t < bee:
                target, top = index, t
        if target < 0:  # too low: too_low_stem, the fewest stings, then bees, then number
            target = 0
            for index in range(1, len(tops)):
                if (sums[index], lens[index]) < (sums[target], lens[target]):
                    target = index
        elif lens[target] < STEM_CAPACITY:  # not is_sixth: it lands
            tops[target] = bee
            lens[target] += 1
            sums[target] += STINGS[bee]
            continue
        scores[seat] += sums[target]
        tops[target] = bee
        lens[target] = 1
        sums[target] = STINGS[bee]
