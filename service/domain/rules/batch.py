"""The hard and expert bees' search (`expert.py`): playouts as arrays over imagined games.

Deal the hidden bees at random, play every deal out to the end of the game with every seat
drawing its bees from a model of a player, and spend the deals by successive halving on common
random numbers (`search`). Each step of a turn is one numpy operation over every imagined game
of a round, not a Python loop per game: the same playouts as the pure-Python loop that came
before it (held to it statistically when this was written; `fly` is held to `rollout.fly_tops`
and the risk to the heuristic's by tests/unit/test_bees_expert.py) at about a quarter of the
CPU, and with uniformly random players (the expert's) at about a tenth (docs/benchmarks.md, "Bee
players"). The randomness is one PCG64 stream seeded from the decision's seed, read only as
uniform doubles (the Gumbel noise and the deals' orders are computed here from them), so a
decision is the same from the same view and seed.

Arrays, for P imagined games of S seats (index 0 is the deciding seat) holding h bees each:
`hands` (P, S, h), the stems as `tops`, `lens`, `sums` (P, 4), `alive` (P, deck + 2): the bees
still in a hand, and `scores` (P, S): the stings taken since this turn.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from service.domain.rules.bee_view import BeeView, unseen_bees
from service.domain.rules.cards import STEM_CAPACITY, deck, deck_size
from service.domain.rules.rollout import STINGS

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]

# The seats a search with `seat_levels` imagines picking as the easy level does: easy bees (and
# those recorded as "heuristic" or with no level, which play as easy).
EASY_PLAYS = frozenset({"easy"})
# What an easy seat's pick costs on top of the model's, in card looks a bee in its hand: its
# heuristic on the model's landings costs about half a game's playout at 8 seats of 7 easy
# bees (the same CPU a decision as a table of people).
EASY_LOOKS = 1.5
TABLE_LOOKS = 40  # what a turn's tables (stems under each bee, bees left) cost, in card looks
_STINGS = np.array([*STINGS, 0], dtype=np.int64)


def _tails(rate: float, size: int) -> Floats:
    """TAILS[need, gap]: P(Poisson(gap * rate) >= need), for a turn's arrival rate."""
    mean = np.arange(size, dtype=np.float64) * rate
    term = np.exp(-mean)
    below = term.copy()
    table = np.zeros((STEM_CAPACITY + 1, size))
    for need in range(1, STEM_CAPACITY + 1):
        table[need] = np.clip(1.0 - below, 0.0, None)
        term = term * mean / need
        below = below + term
    return table


class _Landing(NamedTuple):
    """Where each bee of `cards` (P, S, h) would land now, if nobody else's got there first."""

    top: Ints  # the top bee it lands on (0 when too low)
    too_low: npt.NDArray[np.bool_]
    need: Ints  # bees the stem still takes before a sixth (0 or less: this one is the sixth)
    held: Ints  # the stings on that stem
    gap: Ints  # the bees still in hands between the top and it (the seat's own not counted)

    def of_seats(self, which: npt.NDArray[np.bool_]) -> _Landing:
        """The landings of the seats `which` marks only."""
        return _Landing(
            self.top[:, which],
            self.too_low[:, which],
            self.need[:, which],
            self.held[:, which],
            self.gap[:, which],
        )


def _landing(
    cards: Ints, tops: Ints, lens: Ints, sums: Ints, alive: Ints, own_gap: bool = True
) -> _Landing:
    games, size = alive.shape
    rows = np.arange(games)
    # below[p, x]: the highest stem top under bee x (-1: none), from each top's position
    marks = np.full((games, size), -1, dtype=np.int64)
    for i in range(4):
        marks[rows, tops[:, i] + 1] = tops[:, i]
    below = np.maximum.accumulate(marks, axis=1)
    stem_at = np.zeros((games, size), dtype=np.int64)
    for i in range(4):
        stem_at[rows, tops[:, i]] = i
    counted = np.cumsum(alive, axis=1)  # counted[p, x]: bees in hands numbered x or lower
    at = (rows * size)[:, None, None]  # flat indices: one gather each, not (P, S, h) ones
    top = below.take(at + cards)
    too_low = top < 0
    top = np.maximum(top, 0)
    stem = (rows * 4)[:, None, None] + stem_at.take(at + top)
    gap = counted.take(at + cards - 1) - counted.take(at + top)
    if own_gap:
        gap = gap - _own_in_gap(cards, top)
    return _Landing(top, too_low, STEM_CAPACITY - lens.take(stem), sums.take(stem), gap)


def _own_in_gap(cards: Ints, top: Ints) -> Ints:
    """How many of its seat's own bees lie between each bee of `cards` (P, S, h) (sorted) and
    the `top` it lands on: those below it, less those at or under the top."""
    h = cards.shape[2]
    mine_to_top = (cards[:, :, None, :] <= top[..., None]).sum(axis=3)
    within: Ints = np.arange(h)[None, None, :] - mine_to_top
    return within


def _cost(landing: _Landing, sums: Ints, tails: Floats, tie: Ints | None = None) -> Floats:
    """The model's risk of every bee, from where it lands (`_landing`; its own bees counted in a
    gap or not, `tails` at the turn's arrival rate): a too-low bee costs the cheapest stem (and
    half a sting), a sixth its stem, any other the chance that enough bees land first times
    what the stem would hold. `tie` (the bees): a thousandth of a sting for each number between
    a landing bee and its top, so the tighter of two safe bees is preferred."""
    top, too_low, need, held, gap = landing
    cost = tails[np.maximum(need, 0), gap] * (held + 1.5 * need)
    if tie is not None:
        cost = cost + 0.001 * (tie - top)
    cost = np.where(need <= 0, held, cost)
    low_cost = sums.min(axis=1)[:, None, None] + 0.5
    risk: Floats = np.where(too_low, low_cost, cost)
    return risk


def heuristic_slots(
    cards: Ints, tops: Ints, lens: Ints, sums: Ints, alive: Ints, landing: _Landing | None = None
) -> Ints:
    """Where in each hand of `cards` (P, S, h) (sorted) the easy level's bee is, as
    `heuristic.choose_bee` picks it from that seat's view of each imagined game: the least risk
    (its own bees not counted in a gap, a too-low bee at the cheapest stem's stings, a thousandth
    of a sting for each bee in hands between the stem's top and it), then the most stings, then
    the lowest number. (P, S); the tests hold it to `choose_bee`. `landing`: `_landing` of
    these cards with their own bees counted in the gap, if the caller has it."""
    h = cards.shape[2]
    if landing is None:
        landing = _landing(cards, tops, lens, sums, alive, own_gap=False)
    top, too_low, need, held, gap = landing
    gap = gap - _own_in_gap(cards, top)
    tails = _tails(1 / h, alive.shape[1])
    risk = tails[np.maximum(need, 0), gap] * (held + 1.5 * need) + 0.001 * gap
    risk = np.where(need <= 0, held, risk)
    risk = np.where(too_low, sums.min(axis=1)[:, None, None], risk)
    # The most stings on a tie (then the lowest: the hand is sorted, argmin takes the first).
    # A millionth of a sting apart is a tie in the heuristic's sums of thousandths and chances.
    slots: Ints = (risk - 1e-7 * _STINGS[cards]).argmin(axis=2)
    return slots


FEATURES = 12  # what a learned playout policy sees of each bee in a hand (`features`)


class PolicyNet(NamedTuple):
    """A learned score of each bee in a hand from its `features` (one hidden layer of tanh
    units beside a linear term, on standardised features); a seat plays softmax(score)."""

    mean: Floats  # (FEATURES,)
    scale: Floats  # (FEATURES,)
    hidden: Floats  # (FEATURES, H)
    bias: Floats  # (H,)
    out: Floats  # (H,)
    linear: Floats  # (FEATURES,)

    def scores(self, seen: Floats) -> Floats:
        z = (seen - self.mean) / self.scale
        score: Floats = np.tanh(z @ self.hidden + self.bias) @ self.out + z @ self.linear
        return score


def _logit(weights: Floats, seen: Floats) -> Floats:
    """A conditional logit's score of each bee: `seen` (…, FEATURES) @ `weights`."""
    score: Floats = seen @ weights
    return score


def features(cards: Ints, tops: Ints, lens: Ints, sums: Ints, alive: Ints) -> Floats:
    """What a learned player sees of each bee in `cards` (P, S, h): (P, S, h, FEATURES), all
    from its seat's view (its hand, the stems, which bees are still in hands)."""
    size = alive.shape[1]
    h = cards.shape[2]
    landing = _landing(cards, tops, lens, sums, alive)
    top, too_low, need, held, gap = landing
    under = np.arange(h)[None, None, :]
    risk = _cost(landing, sums, _tails(1 / h, size))
    deck_n = size - 2
    late = 1 - h / 10
    value = cards / deck_n
    lows = too_low.sum(axis=2, keepdims=True) / h
    out = np.empty((*cards.shape, FEATURES))
    out[..., 0] = risk
    out[..., 1] = too_low
    out[..., 2] = (need <= 0) & ~too_low
    out[..., 3] = np.where(too_low, 0, held)
    out[..., 4] = np.where(too_low, 0, need) / 5
    out[..., 5] = gap / h
    out[..., 6] = value
    out[..., 7] = under / max(h - 1, 1)
    out[..., 8] = np.where(too_low, 0, cards - top) / deck_n
    out[..., 9] = value * late
    out[..., 10] = too_low * late
    out[..., 11] = too_low * lows
    return out


def view_features(view: BeeView) -> Floats:
    """`features` of the bees in `view`'s hand (h, FEATURES), as the seat sees them."""
    hand = sorted(view.hand)
    mine = set(hand)
    alive = np.zeros((1, deck_size(view.players) + 2), dtype=np.int64)
    alive[0, [b for b in deck(view.players) if b not in view.seen and b not in mine]] = 1
    alive[0, hand] = 1
    seen: Floats = features(
        np.array([[hand]], dtype=np.int64),
        np.array([[stem[-1] for stem in view.stems]], dtype=np.int64),
        np.array([[len(stem) for stem in view.stems]], dtype=np.int64),
        np.array([[sum(STINGS[b] for b in stem) for stem in view.stems]], dtype=np.int64),
        alive,
    )[0, 0]
    return seen


def fly(tops: Ints, lens: Ints, sums: Ints, scores: Ints, bees: Ints) -> None:
    """Fly one turn's picks `bees` (P, S), seat s's in column s, in every imagined game at once,
    updating the stems and `scores` in place: `rollout.fly_tops` on arrays (the tests hold the
    two to each other)."""
    games = bees.shape[0]
    rows = np.arange(games)
    order = np.argsort(bees, axis=1, kind="stable")
    for k in range(bees.shape[1]):
        seat = order[:, k]
        bee = bees[rows, seat]
        below = np.where(tops < bee[:, None], tops, -1)
        target = below.argmax(axis=1)
        too_low = below.max(axis=1) < 0
        cheapest = (sums * 8 + lens).argmin(axis=1)  # fewest stings, then bees, then number
        target = np.where(too_low, cheapest, target)
        length = lens[rows, target]
        held = sums[rows, target]
        take = too_low | (length >= STEM_CAPACITY)
        scores[rows, seat] += np.where(take, held, 0)
        lens[rows, target] = np.where(take, 1, length + 1)
        sums[rows, target] = np.where(take, 0, held) + _STINGS[bee]
        tops[rows, target] = bee


def deal_hidden(unseen: Ints, deals: int, hands: int, size: int, rng: np.random.Generator) -> Ints:
    """`deals` random deals of the `unseen` bees into `hands` hands of `size` (each sorted):
    (deals, hands, size), the other playing seats in seat order. (The clairvoyance bench,
    `tests/bench/clairvoyant.py`, puts the true hands here to measure what knowing them is
    worth; no level ever does.)"""
    order = np.argsort(rng.random((deals, unseen.size)), axis=1)[:, : hands * size]
    dealt = unseen[order].reshape(deals, hands, size)
    dealt.sort(axis=2)
    return dealt


def playouts(
    view: BeeView,
    candidates: list[int],
    deals: int,
    rng: np.random.Generator,
    temperature: float,
    own_temperature: float | None = None,
    own_gap: bool = False,
    weights: Floats | None = None,
    own_weights: Floats | None = None,
    random_share: float = 0.0,
    nested: int = 0,
    nested_depth: int = 10,
    nested_share: float = 1.0,
    table: Floats | None = None,
    table_temperature: float = 0.0,
    table_share: float = 1.0,
    easy_seats: npt.NDArray[np.bool_] | None = None,
    later: Floats | None = None,
    table_turns: int = 1,
    own_net: PolicyNet | None = None,
) -> tuple[Ints, Ints]:
    """`deals` imagined games for each bee of `candidates` (the same deals for all), played to
    the end: the stings every seat takes, (len(candidates), deals, S), and the seats' order
    (the deciding seat first, then the other playing seats). With `nested`, every other seat's
    bee this turn is the one an MCS(`nested`) would play from that seat's view of the deal
    (`mcs_picks`, playouts of `nested_depth` turns), the same for every candidate, in the first
    `nested_share` of the deals (the same deals as `random_share`'s, if both are set). With
    `table` (`mcs_table`, in place of `nested`), every other seat's bee this turn is the one of
    its hand the table holds the least (Gumbel noise of `table_temperature` stings added), in
    the first `table_share` of the deals. The seats `easy_seats` marks (S, in the order
    returned) play every turn, this one included, as the easy level does (`heuristic_slots`),
    whatever the rest of the model says. With `later` (`McsTable.later`), the other seats that
    the model plays (not at random) hold each bee's risk now less what the table says it would
    cost later, as an MCS player weighs a bee kept against a bee played. `table_turns`: the
    table (made for this turn) also picks the others' bees for that many turns in all, this one
    included, in the same deals."""
    hand = sorted(view.hand)
    size = len(hand)
    mine = set(hand)
    unseen = np.array(
        [b for b in deck(view.players) if b not in view.seen and b not in mine], dtype=np.int64
    )
    others = [s for s in range(1, view.players + 1) if s != view.seat and s not in view.left]
    seats = len(others) + 1
    c = len(candidates)
    games = c * deals
    # The deals: each a random order of the unseen bees, cut into the other hands.
    # (A seat that left keeps its frozen hand: those bees are out of play, wherever they are.)
    dealt = deal_hidden(unseen, deals, seats - 1, size, rng)
    own = np.broadcast_to(np.array(hand, dtype=np.int64), (deals, 1, size))
    per_deal = np.concatenate([own, dealt], axis=1)  # (deals, S, size)
    hands = np.broadcast_to(per_deal, (c, deals, seats, size)).reshape(games, seats, size)
    tops = np.tile(np.array([stem[-1] for stem in view.stems], dtype=np.int64), (games, 1))
    lens = np.tile(np.array([len(stem) for stem in view.stems], dtype=np.int64), (games, 1))
    sums = np.tile(
        np.array([sum(STINGS[b] for b in stem) for stem in view.stems], dtype=np.int64),
        (games, 1),
    )
    alive = np.zeros((deals, deck_size(view.players) + 2), dtype=np.int64)
    np.put_along_axis(alive, per_deal.reshape(deals, seats * size), 1, axis=1)
    alive = np.tile(alive, (c, 1))
    scores = np.zeros((games, seats), dtype=np.int64)
    first_others = None
    searched = round(nested_share * deals) if nested > 0 and size > 1 else 0
    if table is not None and size > 1:
        values = table[per_deal[:, 1:, :]]  # (deals, S - 1, size)
        if table_temperature > 0:
            gumbel = -np.log(-np.log(rng.random(values.shape) * (1 - 1e-12) + 1e-300))
            chosen = (gumbel - values / table_temperature).argmax(axis=2)
        else:
            chosen = values.argmin(axis=2)
        first_others = np.tile(chosen, (c, 1))
        is_searched = np.tile(np.arange(deals) < round(table_share * deals), c)[:, None]
    elif searched > 0:
        picked = mcs_picks(
            per_deal[:searched], tops[0], lens[0], sums[0], nested, nested_depth, rng
        )
        first_others = np.tile(np.pad(picked, ((0, deals - searched), (0, 0))), (c, 1))
        is_searched = np.tile(np.arange(deals) < searched, c)[:, None]
    first = np.repeat(np.array(candidates, dtype=np.int64), deals)
    rows = np.arange(games)
    temperatures = np.full((deals, seats), temperature)
    if own_temperature is not None:
        temperatures[:, 0] = own_temperature
    if random_share > 0:  # in that share of the deals, the others play uniformly at random
        temperatures[: round(random_share * deals), 1:] = 1e9
    # its own later turns by a learned policy, if it has one (the others' stay the model's)
    own_scores: Callable[[Floats], Floats] | None = None
    if weights is None and own_net is not None:
        own_scores = own_net.scores
    elif weights is None and own_weights is not None:
        own_scores = partial(_logit, own_weights)
    for h in range(size, 0, -1):
        rate = 1 / h if own_gap else (seats - 1) / seats / h
        # Gumbel noise, the same for every candidate's copy of a deal (common random numbers)
        noise = -np.log(-np.log(rng.random((deals, seats, h)) * (1 - 1e-12) + 1e-300))
        if h > 1 and weights is not None:
            seen = features(hands, tops, lens, sums, alive)
            logits = seen @ weights
            if own_weights is not None:
                logits[:, 0, :] = seen[:, 0, :, :] @ own_weights
            score = logits.reshape(c, deals, seats, h) + noise
        if h > 1 and weights is None and math.isinf(temperature) and own_temperature is None:
            score = np.broadcast_to(noise, (c, deals, seats, h))  # every player at random
        elif h > 1 and weights is None:
            landing = _landing(hands, tops, lens, sums, alive, own_gap)
            cost = _cost(landing, sums, _tails(rate, alive.shape[1]), hands)
            if later is not None:
                cost[:, 1:] -= later[hands[:, 1:]]
            score = -cost.reshape(c, deals, seats, h) / temperatures[None, :, :, None] + noise
        if h > 1 and own_scores is not None:  # its own later turns by a learned policy
            seen = features(hands[:, :1], tops, lens, sums, alive)[:, 0]
            score = np.array(score)
            score[:, :, 0, :] = own_scores(seen).reshape(c, deals, h) + noise[None, :, 0, :]
        if h > 1:
            slot = score.reshape(games, seats, h).argmax(axis=2)
            if easy_seats is not None:
                easy = hands[:, easy_seats]
                shared = None  # the model's landing, if it counted the seats' own bees
                if weights is None and not own_gap and not math.isinf(temperature):
                    shared = landing.of_seats(easy_seats)
                slot[:, easy_seats] = heuristic_slots(easy, tops, lens, sums, alive, shared)
        else:
            slot = np.zeros((games, seats), dtype=np.int64)
        if table is not None and 1 < h < size and size - h < table_turns:
            values = table[hands[:, 1:, :]]
            gumbel = np.broadcast_to(noise[:, 1:, :], (c, deals, seats - 1, h)).reshape(
                games, seats - 1, h
            )
            stale = (gumbel - values / max(table_temperature, 1e-9)).argmax(axis=2)
            searching = is_searched if easy_seats is None else is_searched & ~easy_seats[1:]
            slot[:, 1:] = np.where(searching, stale, slot[:, 1:])
        if h == size:  # the deciding seat's bee this turn is the candidate
            slot[:, 0] = (hands[:, 0, :] == first[:, None]).argmax(axis=1)
            if first_others is not None:
                searching = is_searched if easy_seats is None else is_searched & ~easy_seats[1:]
                slot[:, 1:] = np.where(searching, first_others, slot[:, 1:])
        bees = np.take_along_axis(hands, slot[..., None], axis=2)[..., 0]
        keep = np.ones(hands.shape, dtype=bool)
        keep[rows[:, None], np.arange(seats)[None, :], slot] = False
        hands = hands[keep].reshape(games, seats, h - 1)
        alive[rows[:, None], bees] = 0
        fly(tops, lens, sums, scores, bees)
    return scores.reshape(c, deals, seats), np.array([view.seat, *others])


NESTED_LOOKS = 6  # card looks per seat and turn of one nested random playout (`mcs_picks`)


def mcs_picks(
    per_deal: Ints, tops: Ints, lens: Ints, sums: Ints, k: int, depth: int, rng: np.random.Generator
) -> Ints:
    """For each deal of `per_deal` (D, S, h) (sorted hands, seat 0 the deciding one) and each
    other seat o, the slot in o's hand of the bee a plain Monte Carlo player MCS(`k`) would play
    now from o's view of that deal: o sees its own hand and the stems (`tops`, `lens`, `sums`,
    as now); what it cannot see is exactly the deal's other hands. Each of its bees is played
    first in the same `k` random playouts (common random numbers: one order of the bees it
    cannot see, cut into the other hands, and one order of its own hand, the candidate taken
    out), every seat then playing its bees in that random order for `depth` turns; the bee with
    the fewest stings in total (the lowest on a tie) is its pick. (D, S - 1)."""
    deals, seats, h = per_deal.shape
    others = seats - 1
    turns = min(depth, h)
    unseen_idx = np.array([[s for s in range(seats) if s != o] for o in range(1, seats)])
    own = per_deal[:, 1:, :]  # (D, O, h)
    hidden = per_deal[:, unseen_idx, :].reshape(deals, others, others * h)
    order = np.argsort(rng.random((deals, others, k, others * h)), axis=3)
    theirs = np.take_along_axis(
        np.broadcast_to(hidden[:, :, None, :], order.shape), order, axis=3
    ).reshape(deals, others, k, others, h)[..., :turns]
    own_order = np.argsort(rng.random((deals, others, k, h)), axis=3)
    own_seq = np.take_along_axis(
        np.broadcast_to(own[:, :, None, :], own_order.shape), own_order, axis=3
    )
    shape = (deals, others, h, k, h)
    seq = np.broadcast_to(own_seq[:, :, None, :, :], shape)
    candidate = np.broadcast_to(own[:, :, :, None, None], shape)
    rest = seq[seq != candidate].reshape(deals, others, h, k, h - 1)
    mine = np.concatenate([candidate[..., :1], rest], axis=4)[..., :turns]
    bees = np.concatenate(
        [
            mine[:, :, :, :, None, :],
            np.broadcast_to(theirs[:, :, None], (deals, others, h, k, others, turns)),
        ],
        axis=4,
    ).reshape(-1, seats, turns)
    games = bees.shape[0]
    tops = np.tile(tops, (games, 1))
    lens = np.tile(lens, (games, 1))
    sums = np.tile(sums, (games, 1))
    scores = np.zeros((games, seats), dtype=np.int64)
    for t in range(turns):
        fly(tops, lens, sums, scores, np.ascontiguousarray(bees[:, :, t]))
    totals = scores[:, 0].reshape(deals, others, h, k).sum(axis=3)
    picks: Ints = totals.argmin(axis=2)
    return picks


class McsTable(NamedTuple):
    """`mcs_tables`' two tables, indexed by bee number (bees out of the pool: +inf)."""

    pick: Floats  # now(x) - later(x): the least of a hand is about an MCS player's pick
    later: Floats  # later(x): the mean stings a seat took on a later turn it played x


def mcs_table(
    pool: Ints,
    seats: int,
    size: int,
    tops: Ints,
    lens: Ints,
    sums: Ints,
    playouts: int,
    rng: np.random.Generator,
) -> Floats:
    """`mcs_tables`' pick table alone."""
    return mcs_tables(pool, seats, size, tops, lens, sums, playouts, rng).pick


def mcs_tables(
    pool: Ints,
    seats: int,
    size: int,
    tops: Ints,
    lens: Ints,
    sums: Ints,
    playouts: int,
    rng: np.random.Generator,
) -> McsTable:
    """What a plain Monte Carlo player would think each bee of `pool` (the bees in hands)
    worth, played now, whoever holds it: one table for every hand of every deal. `playouts`
    random games from now to the end (`pool` dealt at random into `seats` hands of `size`,
    every seat playing its bees in a random order), and two means a bee: the stings a seat
    took on the turn it played that bee first (now), and on a turn it played it later. An MCS
    player's estimate for bee x of hand H is about now(x) + the sum of later(y) over the rest
    of H, so it plays the bee of its hand with the least now(x) - later(x) (the table): a bee
    cheap now and dear to keep. Indexed by bee number (bees out of `pool`: +inf). On 96 views
    from 8-player games of MCS(100), 2,000 playouts pick MCS(100)'s bee 50% of the time, as
    often as MCS(100) with other random numbers picks its own (48%; the heuristic: 31%)."""
    width = int(pool.max()) + 2 if pool.size else 2
    table = np.full(width, np.inf)
    later_table = np.full(width, np.inf)
    need = seats * size
    if pool.size < need or size < 1:
        return McsTable(table, later_table)
    order = np.argsort(rng.random((playouts, pool.size)), axis=1)[:, :need]
    bees = pool[order].reshape(playouts, seats, size)
    tops = np.tile(tops, (playouts, 1))
    lens = np.tile(lens, (playouts, 1))
    sums = np.tile(sums, (playouts, 1))
    scores = np.zeros((playouts, seats), dtype=np.int64)
    taken = np.zeros((2, width))
    played = np.zeros((2, width))
    for turn in range(size):
        before = scores.copy()
        flown = np.ascontiguousarray(bees[:, :, turn])
        fly(tops, lens, sums, scores, flown)
        later = min(turn, 1)
        taken[later] += np.bincount(flown.ravel(), (scores - before).ravel(), width)
        played[later] += np.bincount(flown.ravel(), None, width)
    means = taken / np.maximum(played, 1)
    table[pool] = (means[0] - means[1])[pool]
    later_table[pool] = means[1][pool]
    return McsTable(table, later_table)


def view_tables(view: BeeView, seats: int, playouts: int, rng: np.random.Generator) -> McsTable:
    """`mcs_tables` of what `view` shows: the bees in hands (its own and those it cannot see)
    dealt into `seats` hands as big as its own, from the stems as they stand."""
    pool = np.array(sorted({*view.hand, *unseen_bees(view)}), dtype=np.int64)
    return mcs_tables(
        pool,
        seats,
        len(view.hand),
        np.array([stem[-1] for stem in view.stems], dtype=np.int64),
        np.array([len(stem) for stem in view.stems], dtype=np.int64),
        np.array([sum(STINGS[b] for b in stem) for stem in view.stems], dtype=np.int64),
        playouts,
        rng,
    )


def _shares(scores: Ints, now: Ints) -> Floats:
    """The deciding seat's share of the win in each imagined game (C, D), counting the stings
    every seat had already: 1 / k when it is one of k seats with the fewest."""
    totals = scores + now
    best = totals.min(axis=2)
    tied = (totals == best[..., None]).sum(axis=2)
    return np.where(totals[..., 0] == best, 1.0 / tied, 0.0)


def _margins(scores: Ints, now: Ints) -> Floats:
    """The deciding seat's stings in each imagined game (C, D) less the fewest any other seat
    has, counting the stings every seat had already: below 0 it wins alone."""
    totals = scores + now
    margin: Floats = (totals[..., 0] - totals[..., 1:].min(axis=2)).astype(np.float64)
    return margin


def _loss(how: Search, scores: Ints, now: Ints, win: Floats) -> Floats:
    """What the search minimises in each imagined game (C, D), by `how.objective`."""
    if how.objective == "stings":
        stings: Floats = scores[..., 0].astype(np.float64)
        return stings
    if how.objective == "win":
        return -win
    margin = _margins(scores, now)
    if how.objective == "margin":
        return margin
    if how.objective == "soft":  # minus a smooth chance of the win (a tie: half a win)
        soft: Floats = -1.0 / (1.0 + np.exp(margin / how.objective_scale))
        return soft
    raise ValueError(f"no such objective: {how.objective!r}")


class Search(NamedTuple):
    """How a level searches: `work` card looks a decision (never a clock); what it minimises,
    "stings" (its own, from now to the end), "win" (minus its share of the win), "margin" (its
    stings at the end less the fewest of any other seat) or "soft" (minus a logistic of the
    margin, `objective_scale` stings wide: a smooth chance of the win); and the
    players of its imagined games: softmax(-risk / `temperature`) of the heuristic's risk
    (`own_gap`: counting only other hands' bees, as `heuristic.py` does; an infinite
    temperature is uniformly random play), or a learned logit (`weights` over `features`;
    `own_weights` for its own seat's later turns). `own_weights` without `weights`, or
    `own_net`: its own later turns learned, the others' by the model."""

    work: int
    objective: str = "stings"
    objective_scale: float = 2.0  # "soft"'s stings of margin per unit of the logistic
    temperature: float = 1.0
    own_gap: bool = False
    weights: tuple[float, ...] | None = None
    own_weights: tuple[float, ...] | None = None
    own_temperature: float | None = None
    random_share: float = 0.0  # the share of deals whose other players play at random
    min_deals: int = 8
    # the other seats' bees this turn: an MCS(`nested`) from each one's view of the deal, its
    # playouts `nested_depth` turns long (`mcs_picks`); 0: drawn from the model as later turns
    nested: int = 0
    nested_depth: int = 10
    nested_share: float = 1.0  # the share of deals whose others search this turn's bee
    # the other seats' bees this turn, in place of `nested`: the least of its hand by one
    # `mcs_table` of `table` random playouts a decision, with Gumbel noise of
    # `table_temperature` stings (the noise of an MCS player's estimates)
    table: int = 0
    table_temperature: float = 0.0
    table_share: float = 1.0  # the share of deals whose others' bee this turn is the table's
    # the other seats as the view says they play (`BeeView.plays`): an easy bee as the easy
    # level picks, every turn; anyone else by the model above
    seat_levels: bool = False
    # the other seats the model plays weigh each bee's risk now against `mcs_tables`' later
    # stings for it (needs `table`), as an MCS player does
    later: bool = False
    # the turns, this one included, whose other seats' bees the table picks (the same table,
    # made for this turn; later ones by the model)
    table_turns: int = 1
    # its own seat's later turns by this learned policy (softmax of its scores)
    own_net: PolicyNet | None = None


class Estimate(NamedTuple):
    bee: int
    loss: float  # the mean of what the search minimises
    stings: float  # the mean stings its seat takes from now to the end of the game
    win: float  # the mean share of the win
    deals: int


def search(view: BeeView, seed: bytes, how: Search) -> tuple[int, list[Estimate]]:
    """The pick and every bee's estimate (a bee dropped early by the halving has fewer deals),
    from what `view` shows, the randomness seeded by `seed`."""
    hand = sorted(view.hand)
    if len(hand) == 1:
        return hand[0], [Estimate(hand[0], 0.0, 0.0, 0.0, 0)]
    rng = np.random.Generator(np.random.PCG64(int.from_bytes(seed, "big")))
    others = [s for s in range(1, view.players + 1) if s != view.seat and s not in view.left]
    seats = len(others) + 1
    size = len(hand)
    now = np.array(
        [view.stings[s - 1] if view.stings else 0 for s in (view.seat, *others)], dtype=np.int64
    )
    weights = None if how.weights is None else np.array(how.weights)
    own_weights = None if how.own_weights is None else np.array(how.own_weights)
    easy_seats = None
    if how.seat_levels and view.plays:
        easy = [False] + [view.plays[s - 1] in EASY_PLAYS for s in others]
        easy_seats = np.array(easy) if any(easy) else None
    # card looks of one imagined game: each turn every seat's bees, the turn's tables, and the
    # easy seats' second look at their bees
    easy_count = 0 if easy_seats is None else int(easy_seats.sum())
    per_game = round(
        sum(seats * (h + 3) + TABLE_LOOKS + EASY_LOOKS * easy_count * h for h in range(1, size + 1))
    )
    # and of one deal's nested MCS picks, each other seat's every bee in `nested` playouts
    turns = min(how.nested_depth, size)
    nested_looks = round(
        NESTED_LOOKS * (seats - 1) * size * how.nested * turns * seats * how.nested_share
    )
    table: Floats | None = None
    later: Floats | None = None
    work = how.work
    if how.table > 0:  # one table a decision, its random playouts counted in the work
        nested_looks = 0
        table, later = view_tables(view, seats, how.table, rng)
        work = max(0, work - NESTED_LOOKS * how.table * seats * size)
    running = list(hand)
    sums = {b: np.zeros(3) for b in hand}  # loss, stings, win
    counts = dict.fromkeys(hand, 0)
    rounds = max(1, math.ceil(math.log2(len(running))))
    for round_number in range(rounds):
        per_deal = per_game * len(running) + nested_looks
        deals = max(how.min_deals, work // rounds // per_deal)
        scores, _ = playouts(
            view,
            running,
            deals,
            rng,
            how.temperature,
            how.own_temperature,
            how.own_gap,
            weights,
            own_weights,
            how.random_share,
            how.nested,
            how.nested_depth,
            how.nested_share,
            table,
            how.table_temperature,
            how.table_share,
            easy_seats,
            later if how.later else None,
            how.table_turns,
            how.own_net,
        )
        stings = scores[..., 0].astype(np.float64)
        win = _shares(scores, now)
        loss = _loss(how, scores, now, win)
        for i, bee in enumerate(running):
            sums[bee] += (loss[i].sum(), stings[i].sum(), win[i].sum())
            counts[bee] += deals
        if round_number < rounds - 1:
            running.sort(key=lambda b: (sums[b][0] / counts[b], b))
            running = running[: max(1, (len(running) + 1) // 2)]
    pick = min(running, key=lambda b: (sums[b][0] / counts[b], b))
    means = {b: [float(x) for x in sums[b] / counts[b]] for b in hand}
    return pick, [Estimate(b, means[b][0], means[b][1], means[b][2], counts[b]) for b in hand]
