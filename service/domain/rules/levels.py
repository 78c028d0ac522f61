"""The bee players' levels: one `Level` each in `LEVELS`, the one list of them.

A level is a name, a one-line description, its policy (a function of the seat's `BeeView`, and
of a decision seed if it needs one, that returns the bee to play) and what a decision costs. The
API's enum and its description (`service/api/bodies.py`), the board's choice (`/levels.js`,
rendered by `service/api/board.py`), whether a game needs its server seed at hand to play on
(`seeded`) and whether the bees think off the event loop (`cost_ms`) all come from here.

To add a level (say "expert"):
1. write its policy in a module of its own beside this one (`expert.py`), a function
   `(view: BeeView, seed: bytes | None) -> int` that reads nothing but the view and the seed;
2. add its name to `BeeLevel` in `events.py` (a seat records its level in stored events, so a
   name is forever and must decode);
3. add one `Level(...)` to `LEVELS` below. `tests/unit/test_levels.py` checks the two lists
   agree and that every level plays legal games; the swapped-hands test of
   `tests/unit/test_bees_strong.py` is the one to copy for "it never sees a hidden card".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, get_args

from service.domain.rules.bee_view import BeeView
from service.domain.rules.events import BeeLevel
from service.domain.rules.expert import choose_bee_expert
from service.domain.rules.heuristic import choose_bee
from service.domain.rules.strong import choose_bee_strong

# (what the seat may see, the decision's seed or None) -> the bee it plays
Policy = Callable[[BeeView, bytes | None], int]


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


LEVELS: dict[BeeLevel, Level] = {
    level.name: level
    for level in (
        Level(
            name="heuristic",
            label="Heuristic",
            description="scores each bee by the stings it risks this turn",
            policy=_heuristic,
            seeded=False,
            cost_ms=0.04,
        ),
        Level(
            name="strong",
            label="Strong",
            description=(
                "plays the next few turns out on random deals of the hands it cannot see and"
                " keeps the bee that takes the fewest stings"
            ),
            policy=_strong,
            seeded=True,
            cost_ms=21.0,  # 44 at 8 players
        ),
        Level(
            name="expert",
            label="Expert",
            description=(
                "plays every deal it imagines out to the end of the game, the other players"
                " sometimes taking risks, and keeps the bee that takes the fewest stings"
            ),
            policy=_expert,
            seeded=True,
            cost_ms=130.0,  # 125 at 8 players (docs/benchmarks.md, "Bee players")
        ),
    )
}

# The heuristic stays the default: it is what every table had before levels, it decides in
# about 0.04 ms where the strong bee spends tens of milliseconds of the server's CPU, and a
# player who wants a harder game asks for it.
DEFAULT_LEVEL: BeeLevel = "heuristic"
THINKS_LONG_MS = 1.0

assert tuple(LEVELS) == get_args(BeeLevel), "every BeeLevel has one entry in LEVELS, in order"


def level(name: BeeLevel | None) -> Level:
    """A seat's level; a bee dealt before levels existed played the default."""
    return LEVELS[name or DEFAULT_LEVEL]


def levels_described() -> str:
    """The levels in one sentence, as the API documents them: "`heuristic` (the default) …"."""
    return "; ".join(
        f"`{lv.name}`{' (the default)' if lv.name == DEFAULT_LEVEL else ''} {lv.description}"
        for lv in LEVELS.values()
    )
