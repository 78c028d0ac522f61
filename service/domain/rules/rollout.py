"""A tight simulator of the flight of one turn, for the strong bee's rollouts.

The engine (`engine.py`) is the rules; this is a copy of one part of them (seed §3–§5: bees fly
lowest first, land on the nearest lower top, the sixth bee takes the stem, a too-low bee takes
a stem), written on mutable lists without events so that a bee can play thousands of imagined
turns in its budget. Every too-low bee takes the cheapest stem, as a bee player's does by rule.
`tests/unit/test_bees_rollout.py` checks it against the engine on thousands of random turns.
"""

from __future__ import annotations

from service.domain.rules.cards import MAX_PLAYERS, STEM_CAPACITY, deck_size, stings

# STINGS[bee] is `stings(bee)`: a list lookup is what keeps the rollouts fast.
STINGS: tuple[int, ...] = (0, *(stings(bee) for bee in range(1, deck_size(MAX_PLAYERS) + 1)))


def cheapest(stems: list[list[int]], sums: list[int]) -> int:
    """Index (0-3) of the cheapest stem: fewest stings, then fewest bees, then the lowest number
    (seed §5, as `engine.cheapest_stem`)."""
    best = 0
    for index in range(1, len(stems)):
        if (sums[index], len(stems[index])) < (sums[best], len(stems[best])):
            best = index
    return best


def fly(
    stems: list[list[int]], sums: list[int], scores: list[int], picks: list[tuple[int, int]]
) -> None:
    """Fly one turn's `picks` (bee, seat index), updating stems, their stings and the scores in
    place. `picks` need not be sorted."""
    for bee, seat in sorted(picks):
        target = -1
        top = 0
        for index in range(len(stems)):
            t = stems[index][-1]
            if top < t < bee:
                target, top = index, t
        if target < 0:
            target = cheapest(stems, sums)
        elif len(stems[target]) < STEM_CAPACITY:
            stems[target].append(bee)
            sums[target] += STINGS[bee]
            continue
        scores[seat] += sums[target]
        stems[target] = [bee]
        sums[target] = STINGS[bee]


def fly_tops(
    tops: list[int],
    lens: list[int],
    sums: list[int],
    scores: list[int],
    picks: list[tuple[int, int]],
) -> None:
    """`fly` on stems kept as their top bee, their length and their stings (all a flight needs):
    no list to copy or grow, which is what makes the expert bee's playouts to the end of a game
    affordable. Sorts `picks` in place."""
    picks.sort()
    for bee, seat in picks:
        target = -1
        top = 0
        for index in range(len(tops)):
            t = tops[index]
            if top < t < bee:
                target, top = index, t
        if target < 0:
            target = 0
            for index in range(1, len(tops)):
                if (sums[index], lens[index]) < (sums[target], lens[target]):
                    target = index
        elif lens[target] < STEM_CAPACITY:
            tops[target] = bee
            lens[target] += 1
            sums[target] += STINGS[bee]
            continue
        scores[seat] += sums[target]
        tops[target] = bee
        lens[target] = 1
        sums[target] = STINGS[bee]
