"""The bee players: who they are, and the picks they make at the start of each turn.

A bee sees only what its seat may see (`bee_view.BeeView`), never another hand. How it chooses
is its level's policy (`levels.py`: the one list of levels; `heuristic.py`, `strong.py`). Its
picks are recorded as events like anyone's: a replay never runs a policy again.

A level that needs randomness (`Level.seeded`) gets a seed a decision from `bee_decision_seed`,
an HMAC of the server seed that only the service holds: the policy gets the derived bytes, from
which the deal cannot be computed, and an auditor with the revealed server seed re-derives them
and re-runs the decision. A bee's too-low bee takes the cheapest stem by rule (seed §5, in the
engine), so a bee only ever decides its pick.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping, Sequence

from service.domain.rules.bee_view import BeeView, unseen_bees, view_for
from service.domain.rules.commands import ConfirmPick
from service.domain.rules.events import BeeLevel
from service.domain.rules.heuristic import bee_risk, choose_bee
from service.domain.rules.levels import DEFAULT_LEVEL, LEVELS, THINKS_LONG_MS, level
from service.domain.rules.state import GameState

__all__ = [  # BeeView, view_for, the heuristic and the levels, re-exported where they were
    "BEE_LEVELS",
    "BEE_NAMES",
    "DEFAULT_LEVEL",
    "PICK",
    "BeeView",
    "SeedFor",
    "bee_commands",
    "bee_decision_seed",
    "bee_risk",
    "bee_seats_to_pick",
    "choose",
    "choose_bee",
    "decision_seeds",
    "level_of",
    "needs_decision_seeds",
    "thinks_long",
    "unseen_bees",
    "view_for",
]

BEE_NAMES = ("Buzz", "Bumble", "Honey", "Clover", "Pollen", "Nectar", "Waggle")
BEE_LEVELS: tuple[BeeLevel, ...] = tuple(LEVELS)
PICK = "pick"  # the `kind` of decision a bee makes (see `bee_decision_seed`)

# (seat, turn, kind) -> the seed of that decision; the service binds the game and server seed.
SeedFor = Callable[[int, int, str], bytes]


def bee_seats_to_pick(state: GameState) -> Sequence[int]:
    if state.phase != "picking":
        return ()
    return [s.number for s in state.seats if s.is_bee and s.playing and s.confirmed is None]


def bee_decision_seed(server_seed: bytes, game_id: str, seat: int, turn: int, kind: str) -> bytes:
    """The seed of one bee decision: HMAC-SHA256(server_seed, "bee/{game}/{seat}/{turn}/{kind}").

    One-way, so the policy (and anyone who sees a seed) learns nothing of the server seed or the
    deal; after the game the server seed is revealed and an auditor derives the same bytes."""
    message = f"bee/{game_id}/{seat}/{turn}/{kind}".encode()
    return hmac.new(server_seed, message, hashlib.sha256).digest()


def decision_seeds(server_seed: bytes, game_id: str) -> SeedFor:
    """`bee_commands`' `seed_for` for one game."""
    return lambda seat, turn, kind: bee_decision_seed(server_seed, game_id, seat, turn, kind)


def choose(view: BeeView, level_name: BeeLevel, seed: bytes | None = None) -> int:
    """The bee a bee player of this level picks; a seeded level needs the decision's `seed`."""
    return level(level_name).policy(view, seed)


def level_of(state: GameState, seat: int) -> BeeLevel:
    """The seat's recorded level; the default for a bee dealt before levels existed."""
    return state.seat(seat).info.level or DEFAULT_LEVEL


def needs_decision_seeds(state: GameState) -> bool:
    """Whether a seat decides from seeds, so the server seed must be at hand to play on."""
    return any(s.is_bee and level(s.info.level).seeded for s in state.seats)


def thinks_long(state: GameState) -> bool:
    """Whether a bee seat's decisions cost enough CPU to be made off the event loop."""
    return any(s.is_bee and level(s.info.level).cost_ms >= THINKS_LONG_MS for s in state.seats)


def bee_commands(
    state: GameState,
    levels: Mapping[int, BeeLevel] | None = None,
    seed_for: SeedFor | None = None,
) -> list[ConfirmPick]:
    """The picks every bee player makes now (they pick at once, at the start of a turn).

    Each seat plays at `levels[seat]`, else at the level recorded in its `SeatInfo`, else the
    default. A seeded level needs `seed_for` (`decision_seeds(server_seed, game_id)`)."""
    commands = []
    for seat in bee_seats_to_pick(state):
        name = levels[seat] if levels is not None and seat in levels else level_of(state, seat)
        seed = None
        if level(name).seeded:
            if seed_for is None:
                raise ValueError(f"seat {seat} is a {name} bee: bee_commands needs seed_for")
            seed = seed_for(seat, state.turn, PICK)
        commands.append(ConfirmPick(seat=seat, bee=choose(view_for(state, seat), name, seed)))
    return commands
