"""The bee players: who they are and how they choose a bee.

A bee sees only what its seat may see (`BeeView`: its own hand, the stems, the piles and the
bees revealed so far), never another hand, so it cannot cheat even by accident. Its picks are
recorded as events like anyone's: a replay never runs this policy again.

The heuristic scores each bee in hand by the stings it risks this turn:
- a sixth bee or a too-low bee costs what it takes, for certain;
- otherwise the bee is safe only if fewer than `5 - len(stem)` other bees land on that stem
  before it. Every unseen bee between the stem's top and ours would land there, and each other
  player throws one bee of a hand of `h`, so the count that arrives is about Poisson(gap / h);
  the risk is that tail times the stings the stem will hold.
It then plays the cheapest, preferring a tight fit (a small gap) on ties.

Levels (`BeeLevel`, recorded in each bee seat's `SeatInfo.level`): "heuristic" is the policy
above; "strong" is determinized Monte Carlo a few turns deep (`strong.py`) and "expert" the same
to the end of the game with a stochastic model of the other players (`expert.py`); both need a
seed a decision. The
seed comes from `bee_decision_seed`, an HMAC of the server seed that only the service holds:
the policy gets the derived bytes, from which the deal cannot be computed, and an auditor with
the revealed server seed re-derives them and re-runs the decision. A bee's too-low bee takes
the cheapest stem by rule (seed §5, in the engine), so a bee only ever decides its pick.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence

import msgspec

from service.domain.rules.cards import STEM_CAPACITY, deck, pile_stings, stings
from service.domain.rules.commands import ConfirmPick
from service.domain.rules.engine import GameState, Stems, cheapest_stem, landing_stem
from service.domain.rules.events import BeeLevel
from service.domain.rules.expert import choose_bee_expert
from service.domain.rules.strong import choose_bee_strong

BEE_NAMES = ("Buzz", "Bumble", "Honey", "Clover", "Pollen", "Nectar", "Waggle")
BEE_LEVELS: tuple[BeeLevel, ...] = ("heuristic", "strong", "expert")
# The heuristic stays the default: it is what every table had before levels, it decides in
# about 0.05 ms where the strong bee spends tens of milliseconds of the server's CPU, and a
# player who wants a harder game asks for it.
DEFAULT_LEVEL: BeeLevel = "heuristic"
PICK = "pick"  # the `kind` of decision a bee makes (see `bee_decision_seed`)

# (seat, turn, kind) -> the seed of that decision; the service binds the game and server seed.
SeedFor = Callable[[int, int, str], bytes]


class BeeView(msgspec.Struct, frozen=True, kw_only=True):
    """Everything one seat is allowed to know when it picks."""

    seat: int
    players: int
    hand: tuple[int, ...]
    stems: Stems
    seen: frozenset[int]  # bees whose place is public: on stems, in piles, already revealed
    # Seats that have left (public: `seat_left`): their hands are frozen and never play again.
    left: frozenset[int] = frozenset()


def view_for(state: GameState, seat: int) -> BeeView:
    seen: set[int] = set()
    for stem in state.stems:
        seen.update(stem)
    for other in state.seats:
        seen.update(other.pile)
    seen.update(p.bee for p in state.in_flight)
    return BeeView(
        seat=seat,
        players=len(state.seats),
        hand=state.seat(seat).hand,
        stems=state.stems,
        seen=frozenset(seen),
        left=frozenset(s.number for s in state.seats if s.left),
    )


def _poisson_at_least(k: int, mean: float) -> float:
    if k <= 0:
        return 1.0
    below = sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(k))
    return max(0.0, 1.0 - below)


def unseen_bees(view: BeeView) -> list[int]:
    """The bees this seat cannot place (they are in other hands), ascending."""
    mine = set(view.hand)
    return [b for b in deck(view.players) if b not in view.seen and b not in mine]


class _Decision:
    """What one decision needs about the table, built once for all the bees in hand: the
    unseen bees (sorted, so a gap is two bisections), each stem's stings, the cheapest stem's."""

    def __init__(self, view: BeeView) -> None:
        self.view = view
        self.unseen = unseen_bees(view)
        self.sums = [pile_stings(stem) for stem in view.stems]
        self.cheapest = self.sums[cheapest_stem(view.stems) - 1]
        self.hand_size = max(len(view.hand), 1)

    def risk(self, bee: int) -> float:
        stems = self.view.stems
        where = landing_stem(stems, bee)
        if where is None:
            return float(self.cheapest)
        stem = stems[where - 1]
        if len(stem) >= STEM_CAPACITY:
            return float(self.sums[where - 1])
        gap = bisect_left(self.unseen, bee) - bisect_right(self.unseen, stem[-1])
        needed = STEM_CAPACITY - len(stem)
        chance = _poisson_at_least(needed, gap / self.hand_size)
        return chance * (self.sums[where - 1] + 1.5 * needed) + 0.001 * gap


def bee_risk(view: BeeView, bee: int) -> float:
    """Expected stings that playing `bee` costs this turn (see the module's docstring)."""
    return _Decision(view).risk(bee)


def choose_bee(view: BeeView) -> int:
    """The heuristic bee's pick."""
    decision = _Decision(view)
    return min(view.hand, key=lambda bee: (decision.risk(bee), -stings(bee), bee))


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


def choose(view: BeeView, level: BeeLevel, seed: bytes | None = None) -> int:
    """The bee a bee player of `level` picks; "strong" and "expert" need the decision's `seed`."""
    if level == "heuristic":
        return choose_bee(view)
    if seed is None:
        raise ValueError(f"a {level} bee decides from a seed: pass the decision's seed")
    if level == "expert":
        return choose_bee_expert(view, seed)
    return choose_bee_strong(view, seed)


def level_of(state: GameState, seat: int) -> BeeLevel:
    """The seat's recorded level; the heuristic for a bee dealt before levels existed."""
    return state.seat(seat).info.level or DEFAULT_LEVEL


def bee_commands(
    state: GameState,
    levels: Mapping[int, BeeLevel] | None = None,
    seed_for: SeedFor | None = None,
) -> list[ConfirmPick]:
    """The picks every bee player makes now (they pick at once, at the start of a turn).

    Each seat plays at `levels[seat]`, else at the level recorded in its `SeatInfo`, else the
    heuristic. A strong seat needs `seed_for` (`decision_seeds(server_seed, game_id)`)."""
    commands = []
    for seat in bee_seats_to_pick(state):
        level = levels[seat] if levels is not None and seat in levels else level_of(state, seat)
        seed = None
        if level != "heuristic":
            if seed_for is None:
                raise ValueError(f"seat {seat} is a {level} bee: bee_commands needs seed_for")
            seed = seed_for(seat, state.turn, PICK)
        commands.append(ConfirmPick(seat=seat, bee=choose(view_for(state, seat), level, seed)))
    return commands
