"""The expert bee: determinized Monte Carlo to the end of the game, with opponents who may surprise.

For each sample it deals the bees it cannot see (deck minus its hand, the stems, the piles) at
random into the other playing hands, as everything public allows (every hand as big as its own).
Then for each bee in hand still in the running it plays the game out to the last turn and
scores the stings it takes. Every seat in a playout, its own included, picks with a *stochastic*
model of a sensible player: each bee in hand is costed by the stings it risks this turn (as the
heuristic does, counting only the bees still in hands between a stem's top and it), and one is
drawn with the chance softmax(-cost / `TEMPERATURE`). Because the others do not always play
their safest bee, "someone else's bee lands there first" gets its real weight; a single
deterministic opponent policy (the strong level's) gives it none.

The samples are spent by successive halving: a round evaluates every bee still in the running
on fresh deals, the worse half is dropped, and the next round gives the rest more deals. All
bees of a round share its deals, the others' first picks and the random stream of each playout
(common random numbers), so the comparison between them is sharper than each estimate. The bee
with the fewest mean stings is played; `analyse` gives every estimate, for the analysis of a
finished game.

The work is a fixed count of imagined card looks (`WORK`), never a clock, so a decision costs
about the same at every turn and is fully determined by the view and the seed: the only
randomness is a `random.Random` seeded from `seed`, and the view holds no other hand.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import msgspec

from service.domain.rules.bee_view import BeeView
from service.domain.rules.cards import MAX_PLAYERS, STEM_CAPACITY, deck, deck_size
from service.domain.rules.rollout import STINGS, fly_tops

# How far from the safest bee a modelled player strays: a bee costing `TEMPERATURE` stings
# more than the safest is drawn e (2.7) times less often. Against 3 MCS(100) on the bench's 100
# deals, 0.5, 1 and 2 won 24.0%, 32.0% and 24.5% (docs/benchmarks.md, "Bee players").
TEMPERATURE = 1.0
# Imagined card looks a decision may spend (see `_rollout_cost`): sets its CPU time, about
# 135 ms at 4 players and 125 ms at 8 (p99 170 and 160), inside the 250 ms budget.
WORK = 300_000
MIN_SAMPLES = 4  # deals per bee in a round, at the least
_EXP = math.exp
_SIZE = deck_size(MAX_PLAYERS) + 2


class Estimate(msgspec.Struct, frozen=True, kw_only=True):
    """One bee's estimate: the mean stings its seat takes from this turn to the end of the game
    when it plays `bee` now, over `samples` imagined games."""

    bee: int
    stings: float
    samples: int


class Analysis(msgspec.Struct, frozen=True, kw_only=True):
    """The expert's decision: the bee it plays and the estimate of every bee in hand (a bee
    dropped early by the halving has fewer samples)."""

    pick: int
    estimates: tuple[Estimate, ...]


def _tail(need: int, mean: float) -> float:
    """P(Poisson(mean) >= need)."""
    term = _EXP(-mean)
    below = term
    for i in range(1, need):
        term *= mean / i
        below += term
    return 1.0 - below if below < 1.0 else 0.0


def _draw(
    hand: Sequence[int],
    tops: list[int],
    lens: list[int],
    sums: list[int],
    alive: bytearray,
    rate: float,
    rng: random.Random,
) -> int:
    """One modelled player's bee: softmax(-risk / TEMPERATURE) over `hand`.

    The risk is the heuristic's: a too-low bee costs the cheapest stem, a sixth bee its stem,
    any other the chance that enough bees still in hands between the stem's top and it land
    first (Poisson, `rate` arrivals per such bee) times what the stem would hold."""
    if len(hand) == 1:
        return hand[0]
    low = 0
    for i in (1, 2, 3):
        if sums[i] < sums[low] or (sums[i] == sums[low] and lens[i] < lens[low]):
            low = i
    low_cost = sums[low] + 0.5
    costs = []
    best = math.inf
    for bee in hand:
        target = -1
        top = 0
        for i in (0, 1, 2, 3):
            t = tops[i]
            if top < t < bee:
                target, top = i, t
        if target < 0:
            cost = low_cost
        else:
            need = STEM_CAPACITY - lens[target]
            if need <= 0:
                cost = float(sums[target])
            else:
                mean = alive.count(1, top + 1, bee) * rate
                cost = _tail(need, mean) * (sums[target] + 1.5 * need) if mean > 0 else 0.0
                cost += 0.001 * (bee - top)
        costs.append(cost)
        if cost < best:
            best = cost
    weights = [_EXP((best - c) / TEMPERATURE) for c in costs]
    r = rng.random() * sum(weights)
    for bee, w in zip(hand, weights, strict=True):
        r -= w
        if r <= 0:
            return bee
    return hand[-1]


def _rollout_cost(seats: int, size: int) -> int:
    """Card looks of one playout from a hand of `size`: each turn every seat costs each bee it
    holds (and a few for the pick and the flight)."""
    return sum(seats * (h + 3) for h in range(1, size + 1))


def analyse(view: BeeView, seed: bytes, work: int | None = None) -> Analysis:
    """The expert's estimates from what `view` shows, its random stream seeded by `seed`;
    `work` (default `WORK`) is the budget in card looks."""
    hand = sorted(view.hand)
    if len(hand) == 1:
        return Analysis(pick=hand[0], estimates=(Estimate(bee=hand[0], stings=0.0, samples=0),))
    rng = random.Random(int.from_bytes(seed, "big"))
    mine = set(hand)
    unseen = [b for b in deck(view.players) if b not in view.seen and b not in mine]
    others = [s for s in range(1, view.players + 1) if s != view.seat and s not in view.left]
    size = len(hand)
    seats = len(others) + 1  # index 0 is this bee in the imagined games
    # A bee still in a hand between a stem's top and ours is another's with the chance
    # (others) / (seats), and is played this turn with 1 / (hand size).
    base_tops = [stem[-1] for stem in view.stems]
    base_lens = [len(stem) for stem in view.stems]
    base_sums = [sum(STINGS[b] for b in stem) for stem in view.stems]
    base_alive = bytearray(_SIZE)
    for b in unseen:
        base_alive[b] = 1
    for b in hand:
        base_alive[b] = 1
    budget = WORK if work is None else work
    per_playout = _rollout_cost(seats, size) + unseen.__len__()
    running = list(hand)
    totals = dict.fromkeys(hand, 0.0)
    counts = dict.fromkeys(hand, 0)
    rounds = max(1, math.ceil(math.log2(len(running))))
    for round_number in range(rounds):
        share = budget // rounds
        samples = max(MIN_SAMPLES, share // (per_playout * len(running)))
        for _ in range(samples):
            rng.shuffle(unseen)
            hands = [list(hand)] + [
                sorted(unseen[i * size : (i + 1) * size]) for i in range(len(others))
            ]
            rate0 = (seats - 1) / seats / size
            first = [
                (_draw(hands[s], base_tops, base_lens, base_sums, base_alive, rate0, rng), s)
                for s in range(1, seats)
            ]
            stream = rng.getrandbits(64)
            for bee in running:
                play = random.Random(stream)
                tops = list(base_tops)
                lens = list(base_lens)
                sums = list(base_sums)
                alive = bytearray(base_alive)
                scores = [0] * seats
                left = [list(h) for h in hands]
                picks = [(bee, 0), *first]
                for played, s in picks:
                    left[s].remove(played)
                    alive[played] = 0
                fly_tops(tops, lens, sums, scores, picks)
                for h in range(size - 1, 0, -1):
                    rate = (seats - 1) / seats / h
                    picks = [
                        (_draw(left[s], tops, lens, sums, alive, rate, play), s)
                        for s in range(seats)
                    ]
                    for played, s in picks:
                        left[s].remove(played)
                        alive[played] = 0
                    fly_tops(tops, lens, sums, scores, picks)
                totals[bee] += scores[0]
                counts[bee] += 1
        if round_number < rounds - 1:
            running.sort(key=lambda b: (totals[b] / counts[b], b))
            running = running[: max(1, (len(running) + 1) // 2)]
    estimates = tuple(
        Estimate(bee=b, stings=totals[b] / counts[b], samples=counts[b]) for b in hand
    )
    pick = min(running, key=lambda b: (totals[b] / counts[b], b))
    return Analysis(pick=pick, estimates=estimates)


def choose_bee_expert(view: BeeView, seed: bytes, work: int | None = None) -> int:
    """The expert bee's pick from what `view` shows (see `analyse`)."""
    return analyse(view, seed, work).pick
