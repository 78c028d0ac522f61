"""What would the expert bee have played? For one seat at one turn of a finished game, and
for every turn of one seat (`analyse_game`: what each pick cost against the expert's).

The game's events are folded up to the start of that turn, and the expert level
(`rules/expert.py`) looks at the seat's `BeeView` there: its hand then, the stems then, the bees
whose place was public then. Nothing else of the game reaches the policy (not the other hands,
not what happened later), so the answer is what the seat could have worked out at the time. The
decision's seed is public and fixed by the question (`analysis_seed`), so the same question gets
the same answer, from any server, every time; its cost is one expert decision (`expert.WORK`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import msgspec

from service.domain.rules import expert
from service.domain.rules.bee_view import view_for
from service.domain.rules.engine import GameState, initial_state
from service.domain.rules.errors import GameNotOver, SeatNotPlaying
from service.domain.rules.events import Event, PickConfirmed, PicksRevealed, TurnStarted
from service.domain.rules.fold import evolve, fold


class BeeEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """The expert's estimate for one bee in the seat's hand.

    Attributes:
        bee: A bee's number.
        stings: The mean stings the seat takes from this turn to the end of the game when it plays
            this bee, over the imagined games (`samples`); the bees the expert dropped early have
            fewer.
        win: Its share of the win in those imagined games, 0 to 1 (a win shared by k seats counts
            1/k), counting the stings every seat had at the start of the turn.
        samples: How many imagined games (deals of the hidden hands, played out) it rests on.
    """

    bee: int
    # The mean stings the seat takes from this turn to the end of the game when it plays this
    # bee, over the imagined games (`samples`); the bees the expert dropped early have fewer.
    stings: float
    # Its share of the win in those imagined games, 0 to 1 (a win shared by k seats counts
    # 1/k), counting the stings every seat had at the start of the turn.
    win: float
    samples: int  # how many imagined games (deals of the hidden hands, played out) it rests on


class TurnAnalysis(msgspec.Struct, frozen=True, kw_only=True):
    """The expert level's look at one seat's decision of a finished game.

    Attributes:
        game_id: The game's id.
        seat: A seat number, from 1.
        turn: The turn, 1 to 10.
        level: The level that analysed: "expert".
        hand: The seat's hand at the start of the turn.
        stems: The stems at the start of the turn, bottom to top.
        pick: The bee the expert would have played.
        played: The bee the seat played (None if it had left by then)
        estimates: One for each bee in hand, ascending.
    """

    game_id: str
    seat: int
    turn: int
    level: str  # the level that analysed: "expert"
    hand: list[int]  # the seat's hand at the start of the turn
    stems: list[list[int]]  # the stems at the start of the turn, bottom to top
    pick: int  # the bee the expert would have played
    played: int | None  # the bee the seat played (None if it had left by then)
    estimates: list[BeeEstimate]  # one for each bee in hand, ascending


class TurnCost(msgspec.Struct, frozen=True, kw_only=True):
    """One turn of a seat's game, against the expert's pick at that turn (`analyse_turn`).

    Attributes:
        turn: The turn, 1 to 10.
        played: The bee the seat played (None if it left during the turn).
        pick: The bee the expert would have played.
        played_stings: The expert's estimate of the stings the seat takes from this turn to
            the end when it plays the bee it played (None with `played`).
        pick_stings: The same estimate for the expert's pick.
        cost: `played_stings` less `pick_stings`, never below 0: the stings the seat's pick
            cost against the best one (0 when it played the expert's pick; None with `played`).
    """

    turn: int
    played: int | None  # the bee the seat played (None if it left during the turn)
    pick: int  # the bee the expert would have played
    # the expert's estimate of the stings the seat takes from this turn to the end when it
    # plays the bee it played (None with `played`)
    played_stings: float | None
    pick_stings: float  # the same estimate for the expert's pick
    # `played_stings` less `pick_stings`, never below 0 (None with `played`)
    cost: float | None


class GameAnalysis(msgspec.Struct, frozen=True, kw_only=True):
    """The expert level's look at every decision of one seat in a finished game.

    Attributes:
        game_id: The game's id.
        seat: A seat number, from 1.
        level: The level that analysed: "expert".
        turns: One for each turn the seat began with bees in hand, in order.
        cost: The turns' costs added up: the stings the seat's picks cost in all.
        worst: The turns where its pick cost most, at most 3, the costliest first (only turns
            that cost something).
    """

    game_id: str
    seat: int
    level: str  # the level that analysed: "expert"
    turns: list[TurnCost]  # one for each turn the seat began with bees in hand, in order
    cost: float  # the turns' costs added up: the stings the seat's picks cost in all
    # the turns where its pick cost most, at most 3, the costliest first (only turns that
    # cost something)
    worst: list[int]


WORST_TURNS = 3


def analysis_seed(game_id: str, seat: int, turn: int) -> bytes:
    """The analysis's seed: SHA-256 of "analysis/{game}/{seat}/{turn}". Public on purpose: the
    game is over, and anyone can check the answer by running the same decision."""
    return hashlib.sha256(f"analysis/{game_id}/{seat}/{turn}".encode()).digest()


def analyse_turn(
    game_id: str, events: Sequence[Event], seat: int, turn: int, work: int | None = None
) -> TurnAnalysis:
    """The expert's pick and estimates for `seat` at the start of `turn` of an ended game.

    Raises `GameNotOver` while the game runs, and `SeatNotPlaying` for a seat the game does not
    have, one that had left by then, or a turn the game never reached."""
    final = fold(events)
    if final.phase != "ended":
        raise GameNotOver("A game is analysed once it has ended.")
    if not 1 <= seat <= len(final.seats):
        raise SeatNotPlaying(f"This game has seats 1 to {len(final.seats)}.")
    state: GameState = initial_state
    at: GameState | None = None
    played: int | None = None
    for event in events:
        state = evolve(state, event)
        if isinstance(event, TurnStarted) and event.turn == turn:
            at = state
        elif at is not None and isinstance(event, PickConfirmed) and event.seat == seat:
            played = event.bee
        elif at is not None and isinstance(event, PicksRevealed):
            break
    if at is None:
        raise SeatNotPlaying(f"This game never reached turn {turn}.")
    if not at.seat(seat).playing or not at.seat(seat).hand:
        raise SeatNotPlaying(f"Seat {seat} was not playing at turn {turn}.")
    view = view_for(at, seat)
    decided = expert.analyse(view, analysis_seed(game_id, seat, turn), work)
    return TurnAnalysis(
        game_id=game_id,
        seat=seat,
        turn=turn,
        level="expert",
        hand=list(view.hand),
        stems=[list(stem) for stem in at.stems],
        pick=decided.pick,
        played=played,
        estimates=[
            BeeEstimate(
                bee=e.bee, stings=round(e.stings, 2), win=round(e.win, 3), samples=e.samples
            )
            for e in decided.estimates
        ],
    )


def seat_turns(events: Sequence[Event], seat: int) -> list[int]:
    """The turns of an ended game at whose start `seat` was playing with bees in hand.

    Raises `GameNotOver` while the game runs, and `SeatNotPlaying` for a seat the game does not
    have or one that played no turn."""
    final = fold(events)
    if final.phase != "ended":
        raise GameNotOver("A game is analysed once it has ended.")
    if not 1 <= seat <= len(final.seats):
        raise SeatNotPlaying(f"This game has seats 1 to {len(final.seats)}.")
    state: GameState = initial_state
    turns: list[int] = []
    for event in events:
        state = evolve(state, event)
        if isinstance(event, TurnStarted) and state.seat(seat).playing and state.seat(seat).hand:
            turns.append(event.turn)
    if not turns:
        raise SeatNotPlaying(f"Seat {seat} played no turn of this game.")
    return turns


def turn_cost(analysis: TurnAnalysis) -> TurnCost:
    """What the seat's pick at one turn cost against the expert's (see `TurnCost`)."""
    by_bee = {e.bee: e.stings for e in analysis.estimates}
    pick_stings = by_bee[analysis.pick]
    played_stings = None if analysis.played is None else by_bee[analysis.played]
    return TurnCost(
        turn=analysis.turn,
        played=analysis.played,
        pick=analysis.pick,
        played_stings=played_stings,
        pick_stings=pick_stings,
        cost=None if played_stings is None else round(max(0.0, played_stings - pick_stings), 2),
    )


def game_analysis(game_id: str, seat: int, turns: Sequence[TurnAnalysis]) -> GameAnalysis:
    """The whole game's look from each turn's (`analyse_turn` for each of `seat_turns`)."""
    costs = [turn_cost(t) for t in turns]
    costly = sorted(
        (c for c in costs if c.cost is not None and c.cost > 0),
        key=lambda c: (-(c.cost or 0.0), c.turn),
    )
    return GameAnalysis(
        game_id=game_id,
        seat=seat,
        level="expert",
        turns=costs,
        cost=round(sum(c.cost or 0.0 for c in costs), 2),
        worst=[c.turn for c in costly[:WORST_TURNS]],
    )


def analyse_game(
    game_id: str, events: Sequence[Event], seat: int, work: int | None = None
) -> GameAnalysis:
    """Every turn of `seat` in an ended game against the expert's pick there: the answers of
    `analyse_turn` for each turn, so each turn's pick and estimates are analyseTurn's."""
    turns = seat_turns(events, seat)
    return game_analysis(
        game_id, seat, [analyse_turn(game_id, events, seat, turn, work) for turn in turns]
    )
