"""What one caller may see of a game: pure functions from state (or events) to views.

The single rule: nobody sees a bee the rules hide from them. Until the game ends that is every
other seat's hand, and every other seat's tapped or confirmed bee before the picks are revealed.
Everything a client receives about a game passes through `game_view` or `visible_event`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import msgspec

from service.domain.rules.bees import level_of
from service.domain.rules.cards import STEM_CAPACITY, pile_stings
from service.domain.rules.engine import (
    Forecast,
    GameState,
    StemCost,
    cheapest_stem,
    forecast,
    stem_costs,
)
from service.domain.rules.events import (
    BeeLevel,
    BeeTapped,
    EndReason,
    Event,
    GameStarted,
    Pick,
    PickConfirmed,
    SeatKind,
)

SeatStatus = Literal["picking", "tapped", "confirmed", "waiting", "left"]
ViewPhase = Literal["picking", "choosing", "ended"]


class SeatView(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    name: str
    kind: SeatKind
    stings: int
    bees_taken: int
    status: SeatStatus
    # How a bee player chooses (README "The bee players"); None for a person.
    level: BeeLevel | None = None


class StemView(msgspec.Struct, frozen=True, kw_only=True):
    stem: int
    bees: tuple[int, ...]  # bottom → top
    stings: int
    sixth_bee: bool  # full: the next bee to land here takes these 5


class ChoiceView(msgspec.Struct, frozen=True, kw_only=True):
    """A too-low bee is waiting for its player to choose a stem to take."""

    seat: int
    bee: int
    yours: bool
    costs: tuple[StemCost, ...]
    cheapest: int
    deadline: datetime | None = None


class ResultView(msgspec.Struct, frozen=True, kw_only=True):
    stings: tuple[int, ...]  # by seat, seat 1 first
    winners: tuple[int, ...]
    reason: EndReason


class GameView(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    table_id: str
    version: int  # the number of events in the game's log; pass it as `after` to follow on
    turn: int
    phase: ViewPhase
    you: int | None  # your seat, if you sit at this game
    hand: tuple[int, ...]  # your hand, ascending (empty for a spectator)
    tapped: int | None
    confirmed: int | None
    seats: tuple[SeatView, ...]
    stems: tuple[StemView, ...]
    forecast: tuple[Forecast, ...]  # for each bee in your hand, while you pick
    last_picks: tuple[Pick, ...]  # the picks most recently revealed, lowest first
    choice: ChoiceView | None = None
    deadline: datetime | None = None  # when the running turn or choice clock runs out
    server_time: datetime | None = None  # the server's clock as it answered, to draw the line
    result: ResultView | None = None
    # getGame: the hash-chain link of event `version`, the head (docs/fairness.md); keep it to
    # hold the game's export to it (`--expect-head VERSION:HASH`). Null in other responses.
    head_hash: str | None = None


def _status(state: GameState, seat_number: int) -> SeatStatus:
    seat = state.seat(seat_number)
    if seat.left:
        return "left"
    if state.phase != "picking":
        return "waiting"
    if seat.confirmed is not None:
        return "confirmed"
    if seat.tapped is not None:
        return "tapped"
    return "picking"


def game_view(state: GameState, viewer: int | None, now: datetime | None = None) -> GameView:
    """The game as seen from seat `viewer` (None: a spectator, who sees no hand)."""
    me = state.seat(viewer) if viewer is not None else None
    phase: ViewPhase = (
        "ended"
        if state.phase == "ended"
        else "choosing"
        if state.phase == "choosing"
        else "picking"
    )
    hand = me.hand if me is not None else ()
    choice = None
    if state.phase == "choosing" and state.pending is not None:
        choice = ChoiceView(
            seat=state.pending.seat,
            bee=state.pending.bee,
            yours=state.pending.seat == viewer,
            costs=stem_costs(state.stems),
            cheapest=cheapest_stem(state.stems),
            deadline=state.deadline,
        )
    result = None
    if state.phase == "ended":
        assert state.end_reason is not None
        result = ResultView(
            stings=tuple(s.stings for s in state.seats),
            winners=state.winners,
            reason=state.end_reason,
        )
    picking = state.phase == "picking" and me is not None and me.playing
    return GameView(
        game_id=state.game_id,
        table_id=state.table_id,
        version=state.version,
        turn=state.turn,
        phase=phase,
        you=viewer,
        hand=hand,
        tapped=me.tapped if me is not None else None,
        confirmed=me.confirmed if me is not None else None,
        seats=tuple(
            SeatView(
                seat=s.number,
                name=s.info.name,
                kind=s.info.kind,
                stings=s.stings,
                bees_taken=len(s.pile),
                status=_status(state, s.number),
                level=level_of(state, s.number) if s.is_bee else None,
            )
            for s in state.seats
        ),
        stems=tuple(
            StemView(
                stem=i + 1,
                bees=bees,
                stings=pile_stings(bees),
                sixth_bee=len(bees) >= STEM_CAPACITY,
            )
            for i, bees in enumerate(state.stems)
        ),
        forecast=tuple(forecast(state.stems, bee) for bee in hand) if picking else (),
        last_picks=state.revealed,
        choice=choice,
        deadline=state.deadline if state.phase in ("picking", "choosing") else None,
        server_time=now,
        result=result,
    )


def visible_event(event: Event, viewer: int | None, game_over: bool) -> dict[str, Any]:
    """An event as `viewer` may see it: hidden bees become null until the game is over."""
    data: dict[str, Any] = msgspec.to_builtins(event)
    if game_over:
        return data
    match event:
        case GameStarted():
            data["hands"] = [
                list(hand) if seat.seat == viewer else None
                for seat, hand in zip(event.seats, event.hands, strict=True)
            ]
        case BeeTapped() if event.seat != viewer:
            data["bee"] = None
        case PickConfirmed() if event.seat != viewer:
            # Whether the clock played a seat's lowest bee says something of the rest of its
            # hand, so it stays hidden with the bee itself.
            data["bee"] = None
            data.pop("by_clock", None)
        case _:
            pass
    return data
