"""The bee players' levels: one `Level` each in `LEVELS`, the one list of them.

A level is a name, a one-line description, its policy (a function of the seat's `BeeView`, and
of a decision seed if it needs one, that returns the bee to play) and what a decision costs. The
API's enum and its description (`service/api/bodies.py`), the board's choice (`/levels.js`,
rendered by `service/api/board.py`), whether a game needs its server seed at hand to play on
(`seeded`) and whether the bees think off the event loop (`cost_ms`) all come from here.

The names people see are easy, medium, hard and expert. The first two were called "heuristic"
and "strong" before (`ALIASES`): those names are still accepted and recorded as they were sent,
so stored events decode and old tables play on at the same policy; a view shows the recorded
name, and `level()` resolves it. (Why not "strong" for the third: stored games use it for what is
now medium.)

To add a level (say "expert"):
1. write its policy in a module of its own beside this one (`expert.py`), a function
   `(view: BeeView, seed: bytes | None) -> int` that reads nothing but the view and the seed;
2. add its name to `BeeLevel` in `events.py` (a seat records its level in stored events, so a
   name is forever and must decode: never remove one, alias it);
3. add one `Level(...)` to `LEVELS` below. `tests/unit/test_levels.py` checks the two lists
   agree and that every level plays legal games; the swapped-hands test of
   `tests/unit/test_bees_strong.py` is the one to copy for "it never sees a hidden card".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, get_args

from service.domain.rules.bee_view import BeeView
from service.domain.rules.events import ALIASES, DEFAULT_LEVEL, BeeLevel, resolved
from service.domain.rules.expert import choose_bee_expert, choose_bee_hard
from service.domain.rules.heuristic import choose_bee
from service.domain.rules.strong import choose_bee_strong

__all__ = [
    "ALIASES",
    "DEFAULT_LEVEL",
    "LEVELS",
    "THINKS_LONG_MS",
    "Level",
    "level",
    "levels_described",
]

# (what the seat may see, the decision's seed or None) -> the bee it plays
Policy = Callable[[BeeView, bytes | None], int]


class Rated(NamedTuple):
    points: int
    low: int
    high: int

    def __str__(self) -> str:
        return f"{self.points:,} [{self.low:,}, {self.high:,}]"


class Level(NamedTuple):
    name: BeeLevel
    label: str  # the board's name for it
    description: str  # one line, after the name: how it picks
    policy: Policy
    # It decides from a seed a decision (`bees.bee_decision_seed`), so playing on needs the
    # game's server seed.
    seeded: bool
    # About the CPU a decision costs, in ms (docs/benchmarks.md, "Bee players"): from
    # `THINKS_LONG_MS` on, its bees think in a worker thread, off the event loop.
    cost_ms: float
    # Its strength as a rating by the system that rates people (`service.domain.ratings`, a
    # new person starts at 1,500) with its 95% interval: what `make bench-bees`
    # (`tests/bench/level_ratings.py`) fitted from the levels' games against each other and
    # MCS(100), its last run (no person plays in them: it ranks the levels among themselves).
    rating: Rated


# The last fit of `make bench-bees` (`tests/bench/level_ratings.py`, which prints these values;
# docs/benchmarks.md, "Bee players"): each level's rating [95% interval], from 100 games at 4
# seats and 30 at 8 of the four levels and MCS(100) (rated 1,448 [1,296, 1,622]), 7 Dec 2026,
# the expert searching alike at every size (issue 45's second round).
RATINGS = {
    "easy": Rated(1088, 871, 1264),
    "medium": Rated(1290, 1101, 1499),
    "hard": Rated(1659, 1504, 1844),
    "expert": Rated(1959, 1812, 2167),
}


def _heuristic(view: BeeView, seed: bytes | None) -> int:
    return choose_bee(view)


def _strong(view: BeeView, seed: bytes | None) -> int:
    if seed is None:
        raise ValueError("a strong bee decides from a seed: pass the decision's seed")
    return choose_bee_strong(view, seed)


def _expert(view: BeeView, seed: bytes | None) -> int:
    if seed is None:
        raise ValueError("an expert bee decides from a seed: pass the decision's seed")
    return choose_bee_expert(view, seed)


def _hard(view: BeeView, seed: bytes | None) -> int:
    if seed is None:
        raise ValueError("a hard bee decides from a seed: pass the decision's seed")
    return choose_bee_hard(view, seed)


LEVELS: dict[BeeLevel, Level] = {
    level.name: level
    for level in (
        Level(
            name="easy",
            label="Easy",
            description="plays the bee that risks the fewest stings this turn",
            policy=_heuristic,
            seeded=False,
            cost_ms=0.04,
            rating=RATINGS["easy"],
        ),
        Level(
            name="medium",
            label="Medium",
            description=(
                "plays the next few turns out on random deals of the hands it cannot see and"
                " keeps the bee that takes the fewest stings"
            ),
            policy=_strong,
            seeded=True,
            cost_ms=21.0,  # 44 at 8 players
            rating=RATINGS["medium"],
        ),
        Level(
            name="hard",
            label="Hard",
            description=(
                "plays hundreds of imagined deals out to the end of the game, the other players"
                " sometimes taking risks, and keeps the bee that takes the fewest stings"
            ),
            policy=_hard,
            seeded=True,
            cost_ms=30.0,  # 45 at 8 players
            rating=RATINGS["hard"],
        ),
        Level(
            name="expert",
            label="Expert",
            description=(
                "plays hundreds of imagined deals out to the end of the game, in which the other"
                " players think this turn's bee over too and then play carefully or carelessly,"
                " and keeps the bee that takes the fewest stings"
            ),
            policy=_expert,
            seeded=True,
            cost_ms=100.0,  # median 85 at 4 players, 105 at 8 (docs/benchmarks.md, "Bee players")
            rating=RATINGS["expert"],
        ),
    )
}

THINKS_LONG_MS = 1.0

assert set(LEVELS) | set(ALIASES) == set(get_args(BeeLevel)), "every BeeLevel is a level or alias"
assert not set(LEVELS) & set(ALIASES) and set(ALIASES.values()) <= set(LEVELS)


def level(name: BeeLevel | None) -> Level:
    """A seat's level (an older name is its level's alias); a bee dealt before levels existed
    played the default."""
    return LEVELS[resolved(name)]


def levels_described() -> str:
    """The levels in one sentence, as the API documents them: "`easy` (the default) …"."""
    offered = "; ".join(
        f"`{lv.name}`{' (the default)' if lv.name == DEFAULT_LEVEL else ''} {lv.description}"
        f" (rated {lv.rating})"
        for lv in LEVELS.values()
    )
    older = ", ".join(f"`{old}` for `{new}`" for old, new in ALIASES.items())
    return (
        f"{offered}. Older names, still accepted and recorded as sent: {older}. A level's"
        " rating [95% interval] is fitted by `make bench-bees` with the system that rates"
        " people (a new player starts at 1,500), from games among the levels and a plain Monte"
        " Carlo player only, so it ranks the levels against each other"
    )
