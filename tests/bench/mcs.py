"""MCS(n): the plain Monte Carlo player, the bench's anchor opponent (issue 29).

The published baseline of the 6-nimmt literature, written here from its description, not from
anyone's code: for each bee in hand, `n` random playouts to the end of the game, and play the bee
with the fewest stings on average. A playout deals the bees this seat cannot see at random into
the other playing hands (every hand as big as its own), then every seat, this one included,
plays a uniformly random bee each turn until the hands are empty. Each playout is dealt afresh.

It sees what every bee sees (`BeeView`: its hand, the stems, the piles, the revealed bees) and
decides through the same engine as the service's levels (`simulate.play_game`). A playout flies
with the rules' own fast copy (`rollout.fly_tops`), so it lands bees exactly as the engine does
(a too-low bee takes the cheapest stem, as a bee's does by rule). Its randomness is a
`random.Random` seeded from the decision's seed, so a bench run is reproducible.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from service.domain.rules.bees import BeeView, unseen_bees
from service.domain.rules.rollout import STINGS, fly_tops

PLAYOUTS = 100
# rl-6-nimmt's `MCSAgent` (the hidden arena's anchor, `mc_max=100`) spends its playouts on the
# whole decision, not on each card: min(mc_max, 10 x (hand size)!) random playouts, each one's
# first card drawn at random, so about ten a card at the start.
TOTAL_PLAYOUTS = 100
PER_CARD_FACTOR = 10


def _playout(view: BeeView) -> tuple[list[int], Callable[[int, list[int]], int]]:
    """The bees this seat cannot see, and a playout from `view`: play(first, rest) plays its
    `first` bee now and then `rest` in that order, every other seat the bees the unseen list
    holds now, dealt in turn order (shuffle it for a fresh deal); the stings this seat takes."""
    unseen = unseen_bees(view)
    others = [s for s in range(1, view.players + 1) if s != view.seat and s not in view.left]
    size = len(view.hand)
    seats = len(others) + 1  # index 0 is this seat in the playouts
    base_tops = [stem[-1] for stem in view.stems]
    base_lens = [len(stem) for stem in view.stems]
    base_sums = [sum(STINGS[b] for b in stem) for stem in view.stems]

    def play(first: int, rest: list[int]) -> int:
        tops = list(base_tops)
        lens = list(base_lens)
        sums = list(base_sums)
        scores = [0] * seats
        for turn in range(size):
            picks = [(first if turn == 0 else rest[turn - 1], 0)]
            for s in range(1, seats):
                picks.append((unseen[(s - 1) * size + turn], s))
            fly_tops(tops, lens, sums, scores, picks)
        return scores[0]

    return unseen, play


def choose_bee_mcs(view: BeeView, seed: bytes, playouts: int | None = None) -> int:
    """MCS(`playouts`)'s pick from `view` (MCS(`PLAYOUTS`) by default), its random stream
    seeded by `seed`."""
    playouts = PLAYOUTS if playouts is None else playouts
    hand = sorted(view.hand)
    if len(hand) == 1:
        return hand[0]
    rng = random.Random(int.from_bytes(seed, "big"))
    shuffle = rng.shuffle
    unseen, play = _playout(view)
    best, best_total = hand[0], -1
    for bee in hand:
        rest = [b for b in hand if b != bee]
        total = 0
        for _ in range(playouts):
            shuffle(unseen)  # a fresh deal, and each hand in a random order of play
            shuffle(rest)
            total += play(bee, rest)
        if best_total < 0 or total < best_total:
            best, best_total = bee, total
    return best


def choose_bee_mcs_total(view: BeeView, seed: bytes, total: int | None = None) -> int:
    """The hidden arena's anchor, rl-6-nimmt's `MCSAgent(mc_max=total)`, as its description
    reads: min(`total`, 10 x h!) playouts for a hand of h, each a fresh deal with every seat
    (this one included, its first bee too) playing uniformly random bees; the bee with the
    fewest stings on average among those played first at least once (the lowest on a tie)."""
    total = TOTAL_PLAYOUTS if total is None else total
    hand = sorted(view.hand)
    if len(hand) == 1:
        return hand[0]
    rng = random.Random(int.from_bytes(seed, "big"))
    shuffle = rng.shuffle
    unseen, play = _playout(view)
    taken = dict.fromkeys(hand, 0)
    tried = dict.fromkeys(hand, 0)
    order = list(hand)
    for _ in range(min(total, PER_CARD_FACTOR * math.factorial(len(hand)))):
        shuffle(unseen)
        shuffle(order)  # its own bees in a random order of play, the first one the tried one
        taken[order[0]] += play(order[0], order[1:])
        tried[order[0]] += 1
    return min((b for b in hand if tried[b]), key=lambda b: (taken[b] / tried[b], b))
