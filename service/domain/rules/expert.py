"""The hard and expert bees: determinized Monte Carlo to the end of the game (`batch.search`).

For each imagined game the bee deals the bees it cannot see (deck minus its hand, the stems, the
piles) at random into the other playing hands, as everything public allows (every hand as big as
its own). Then for each bee in hand still in the running it plays the game out to the last turn,
every seat of the imagined game drawing its bees from a *stochastic* model of a player, so that
"someone else's bee lands there first" gets its real weight (a single deterministic policy on
every seat, as the medium level's rollouts have, gives it none). The imagined games are spent by
successive halving: a round evaluates every bee still in the running on fresh deals, the worse
half is dropped, the next round gives the rest more deals; all bees of a round share its deals
and its random numbers, so the comparison between them is sharper than each estimate.

- **hard** (`HARD`): every imagined player draws with the chance softmax(-risk / 1 sting) of the
  heuristic's risk (it counts only the bees still in hands between a stem's top and it); the bee
  with the fewest mean stings is played. (This was the expert level until the one below beat it.)
- **expert up to 5 players until issue 45** (`NESTED`): the same search on four times hard's work,
  with two models of the other players' later turns at once: in half the deals they play as hard
  imagines them, in the other half uniformly at random (the plain Monte Carlo player MCS(n)'s
  model). Their bees *this turn* are not drawn from a model: in each imagined deal, each other
  seat plays what a small Monte Carlo player would from that seat's view of the deal (its own
  hand; the other hands unseen), MCS(8) on playouts 4 turns long (`batch.mcs_picks`): a search of
  two levels, the others searching too. Against three MCS(100), on 100 deals that no expert
  line-up of the bench plays (200-299), this won 42.5% [33.5, 51.5] where the search with modelled
  players only won 31.0% [22.0, 40.5] (paired: +11.5 points [-1.5, +24.0], -1.55 stings [-3.06,
  +0.03]) at less CPU (docs/benchmarks.md, "Bee players"). At 8 players the nested MCS costs too
  much (about 9 deals a round) and did not help (30 deals: 16.7% against 31.7%).
- **expert up to 5 players** (`EXPERT`, issue 45): the table below for the others' bees this
  turn in place of the nested MCS(8), their later turns still half at random and half as hard
  imagines them, on the same work. Against three MCS(100) on deals 440-539 (100 games, none of
  the bench's), paired with `NESTED` in one run: 50.8% [41.7, 60.5] of the win where it won
  38.5% [29.0, 47.5] (+12.3 points [+0.7, +24.5]; -1.19 stings [-2.64, +0.28] a game), at
  103 / 207 ms of CPU a decision (median / p99, load 6-9) against 91 / 123
  (docs/benchmarks.md, "Bee players"). The table is cheaper than the nested search, so the
  same work buys more deals, and it picks MCS(100)'s bee more often than an MCS(8) does.
- **expert from 6 players on** (`EXPERT_LARGE`): the others' bees this turn from one table a
  decision of what a plain Monte Carlo player would think each bee worth played now
  (`batch.mcs_table`: 2,000 random playouts; a bee's stings the turn it is played now, less its
  stings when played later), each seat playing the least of its hand with Gumbel noise of 0.6
  stings (an MCS player's own noise). The table picks MCS(100)'s bee about as often as
  MCS(100) does on other random numbers, at a few ms where the nested search would cost the
  decision's whole budget. Their later turns half at random and half as hard imagines them, as
  up to 5 players, on three times hard's work (`LARGE_WORK`). Until issue 45's second round the
  later turns were all hard's model (`TABLE_ONLY`). Paired with it on the same 100 deals
  against seven MCS(100) (600-619 and 630-709; docs/benchmarks.md, "Bee players"), the random
  half won 31.5% [23.5, 40.5] where it won 18.3% (+13.2 points [+3.3, +22.7], -2.30 stings
  [-3.97, -0.55] a game), at the same CPU. Against easy bees nothing changes (`seat_levels`).
- **the expert knows who plays each seat** (`Search.seat_levels`, at every table size): a
  seat's kind and a bee's level are public (`BeeView.plays`), and an easy bee picks by a rule
  the search can run on an imagined hand. So in every imagined deal each easy bee picks, this
  turn and later, exactly the bee the easy level would from that seat's view of the deal
  (`batch.heuristic_slots`; neither the nested search nor the table replaces it); a person, a
  medium, hard or expert bee is imagined as above, and a table of people gets the same
  decision as without it. On deals 0-99 of the bench, at the same CPU (the easy seats' looks
  are counted in the work: `EASY_LOOKS`), paired against the expert before it in one run:
  against three easy bees at 4 players 72.5% [64.0, 80.5] where it won 44.3% [35.2, 54.7];
  against seven at 8 players 35.0% [26.5, 45.0] where it won 11.5% [6.0, 17.5].
  Not measured, so not used: medium bees imagined as easy ones.

The playouts are arrays over every imagined game of a round (`batch.py`, numpy), many times the
deals the same CPU bought in pure Python. The work is a fixed count of imagined card looks (the
`work` of each `Search`), never a clock, so a decision costs about the same at every turn and is
fully determined by the view and the seed: the only randomness is a PCG64 stream seeded from
`seed`, and the view holds no other hand.
"""

from __future__ import annotations

import msgspec

from service.domain.rules import batch
from service.domain.rules.bee_view import BeeView

# Card looks a decision may spend: they set its CPU time (docs/benchmarks.md, "Bee players").
HARD_WORK = 1_000_000  # about 30 ms at 4 players, 45 ms at 8
WORK = 4_500_000  # the expert's up to 5 players: about 105 ms at 4 players
LARGE_WORK = 3_000_000  # the expert's from 6 players on: about 130 ms at 8 players
HARD = batch.Search(work=HARD_WORK)
# Up to 5 players, the others' bees this turn from the MCS table too, their later turns half at
# random and half as hard imagines them (issue 45): against three MCS(100) on deals 440-539
# (the bench plays 0-199), paired with the nested search it replaces (`NESTED`), see the
# module's docstring.
EXPERT = batch.Search(
    work=WORK, random_share=0.5, table=2000, table_temperature=0.6, seat_levels=True
)
# Tried on 400 deals and not kept (issue 45's third round, docs/benchmarks.md): the table for
# the others' next turn too (`table_turns=2`, -0.9 points), its own later turns sharper
# (`own_temperature=0.4`, +2.1), both (+0.2): inside the noise. Nor in its fourth round: its own
# later turns by a policy learned from its own picks (`Search.own_net`, `own_weights`;
# tests/bench/own_policy.py), -0.6 and -2.3 points on 300 deals at 1.5-1.7 times the CPU.
# Nor in its fifth round: aiming at the margin over the leader (`objective="margin"`, +0.2
# points on 400 deals), or imagining the others with the arena anchor's noise
# (`table_temperature=2`: -0.1 against that anchor at 4 players, -7.5 against MCS(100) at 8).
# The expert up to 5 players before issue 45: each other seat an MCS(8) of 4-turn playouts.
NESTED = batch.Search(work=WORK, random_share=0.5, nested=8, nested_depth=4, seat_levels=True)
# From 6 players on, the expert searches as it does up to 5 (the MCS table with noise 0.6 for
# the others' bees this turn, their later turns half at random and half as hard imagines them)
# on 3 times hard's work (docs/benchmarks.md, "Bee players"). Screened at 8 players against
# seven MCS(100) on deals 360-389 and 410-439 (60 games; the bench plays 0-199), each row the
# same deals: hard's model alone 13.9%, with the table's argmin 14.2%, the table with half the
# deals' later turns at random 25.0%, the table with noise 0.6 27.2%. Both together (this),
# paired with the table with noise alone (`TABLE_ONLY`, the expert before) on deals 600-619 and
# 630-709: see the module's docstring. Measured at 4 and 8 players only.
LARGE_TABLE = 6
EXPERT_LARGE = EXPERT._replace(work=LARGE_WORK)
# The expert from 6 players on before this (issue 45): hard's model for the later turns.
TABLE_ONLY = batch.Search(work=LARGE_WORK, table=2000, table_temperature=0.6, seat_levels=True)


class Estimate(msgspec.Struct, frozen=True, kw_only=True):
    """One bee's estimate over `samples` imagined games in which its seat plays `bee` now: the
    mean stings the seat takes from this turn to the end of the game, and its mean share of the
    win (counting the stings every seat had already)."""

    bee: int
    stings: float
    win: float
    samples: int


class Analysis(msgspec.Struct, frozen=True, kw_only=True):
    """A decision: the bee played and the estimate of every bee in hand (a bee dropped early by
    the halving has fewer samples)."""

    pick: int
    estimates: tuple[Estimate, ...]


def analyse(
    view: BeeView, seed: bytes, work: int | None = None, how: batch.Search | None = None
) -> Analysis:
    """The expert's decision (or `how`'s) from what `view` shows, its random stream seeded by
    `seed`; `work` overrides the budget in card looks."""
    if how is None:
        large = view.players >= LARGE_TABLE
        how = EXPERT_LARGE._replace(work=LARGE_WORK) if large else EXPERT._replace(work=WORK)
    if work is not None:
        how = how._replace(work=work)
    pick, estimates = batch.search(view, seed, how)
    return Analysis(
        pick=pick,
        estimates=tuple(
            Estimate(bee=e.bee, stings=e.stings, win=e.win, samples=e.deals) for e in estimates
        ),
    )


def choose_bee_expert(view: BeeView, seed: bytes, work: int | None = None) -> int:
    """The expert bee's pick from what `view` shows (see `analyse`)."""
    return analyse(view, seed, work).pick


def choose_bee_hard(view: BeeView, seed: bytes, work: int | None = None) -> int:
    """The hard bee's pick from what `view` shows."""
    return analyse(view, seed, HARD_WORK if work is None else work, HARD).pick
