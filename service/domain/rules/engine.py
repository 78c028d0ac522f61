"""The rules of Swarm as a Decider, in one import: `initial_state`, `decide`, `evolve`,
`is_terminal` (and `fold`, `decide_and_evolve`, the pure queries).

Where each part lives:
- `state.py`: `GameState` and the questions anyone may ask of it (`awaiting`, `winners_of`);
- `fold.py`: the one event applier, `fold` and `evolve` (`evolve(s, e)` is `fold((e,), s)`);
- `decide.py`: `decide` and `decide_and_evolve`, the rules of each command, which only emit;
- `flight.py`: where a bee lands, the sixth bee and the too-low bee, named (seed §3–§5);
- `clock.py`: the deadlines, what the clock plays, the idle turn (seed §7).
"""

from __future__ import annotations

from service.domain.rules.clock import IDLE_TURNS_TO_ABANDON
from service.domain.rules.decide import decide, decide_and_evolve
from service.domain.rules.flight import (
    Forecast,
    StemCost,
    cheapest_stem,
    forecast,
    is_sixth,
    landing_stem,
    stem_costs,
    too_low_stem,
)
from service.domain.rules.fold import evolve, fold
from service.domain.rules.state import (
    GameState,
    Phase,
    SeatState,
    Stems,
    awaiting,
    initial_state,
    is_terminal,
    winners_of,
)

__all__ = [
    "IDLE_TURNS_TO_ABANDON",
    "Forecast",
    "GameState",
    "Phase",
    "SeatState",
    "StemCost",
    "Stems",
    "awaiting",
    "cheapest_stem",
    "decide",
    "decide_and_evolve",
    "evolve",
    "fold",
    "forecast",
    "initial_state",
    "is_sixth",
    "is_terminal",
    "landing_stem",
    "stem_costs",
    "too_low_stem",
    "winners_of",
]
