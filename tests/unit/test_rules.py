"""The rules of Swarm (seed §1–6, §8, §9) as "given these events, this command yields these events".

Every scenario starts from a deal written out by hand, so the hands and the stems are known:

    DEAL_T (2 players, bees 1–24): stems 5, 10, 15, 20
        seat 1: 1 3 6 7 11 12 16 17 21 22
        seat 2: 2 4 8 9 13 14 18 19 23 24
    DEAL_S (2 players, bees 1–24): stems 1, 12, 18, 22
        seat 1: 2 4 6 7 8 9 10 11 13 14
        seat 2: 3 5 15 16 17 19 20 21 23 24
    DEAL_3 (3 players, bees 1–34): stems 5, 15, 25, 34
        seat 1: 1 2 3 4 6 7 8 9 10 11
        seat 2: 12 13 14 16 17 18 19 20 21 22
        seat 3: 23 24 26 27 28 29 30 31 32 33
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from service.domain.rules import errors
from service.domain.rules.cards import HAND_SIZE, deck
from service.domain.rules.commands import (
    Command,
    ConfirmPick,
    LeaveGame,
    StartGame,
    TakeStem,
    TapBee,
)
from service.domain.rules.engine import (
    Forecast,
    GameState,
    SeatState,
    StemCost,
    awaiting,
    cheapest_stem,
    decide,
    evolve,
    fold,
    forecast,
    initial_state,
    is_terminal,
    landing_stem,
    stem_costs,
    winners_of,
)
from service.domain.rules.events import (
    BeeLanded,
    BeeTapped,
    ClockSettings,
    Event,
    GameEnded,
    GameStarted,
    Pick,
    PickConfirmed,
    PicksRevealed,
    SeatInfo,
    SeatLeft,
    StemChoiceRequired,
    StemTaken,
    TurnStarted,
)

# ---------------------------------------------------------------------------------------------
# Helpers


def person(n: int) -> SeatInfo:
    return SeatInfo(seat=n, name=f"Player {n}", kind="person", player_id=f"p{n}")


def bee_player(n: int) -> SeatInfo:
    return SeatInfo(seat=n, name=f"Bee {n}", kind="bee")


def people(count: int) -> tuple[SeatInfo, ...]:
    return tuple(person(n) for n in range(1, count + 1))


T_HANDS = ((1, 3, 6, 7, 11, 12, 16, 17, 21, 22), (2, 4, 8, 9, 13, 14, 18, 19, 23, 24))
T_STEMS = (5, 10, 15, 20)
S_HANDS = ((2, 4, 6, 7, 8, 9, 10, 11, 13, 14), (3, 5, 15, 16, 17, 19, 20, 21, 23, 24))
S_STEMS = (1, 12, 18, 22)
H3_HANDS = (
    (1, 2, 3, 4, 6, 7, 8, 9, 10, 11),
    (12, 13, 14, 16, 17, 18, 19, 20, 21, 22),
    (23, 24, 26, 27, 28, 29, 30, 31, 32, 33),
)
H3_STEMS = (5, 15, 25, 34)
# A deal where both players always play their lowest bee and tie on 6 stings.
TIE_DECK = (16, 23, 3, 10, 24, 18, 17, 15, 4, 19, 7, 11, 9, 12, 21, 6, 2, 5, 13, 22, 8, 1, 14, 20)


def order(hands: Sequence[Sequence[int]], stems: Sequence[int]) -> tuple[int, ...]:
    return tuple(bee for hand in hands for bee in hand) + tuple(stems)


def start(
    hands: Sequence[Sequence[int]] = T_HANDS,
    stems: Sequence[int] = T_STEMS,
    seats: tuple[SeatInfo, ...] | None = None,
    clock: ClockSettings | None = None,
    at: datetime | None = None,
) -> StartGame:
    return StartGame(
        game_id="g1",
        table_id="t1",
        seats=seats if seats is not None else people(len(hands)),
        deck_order=order(hands, stems),
        clock=clock,
        at=at,
    )


def dealt(
    hands: Sequence[Sequence[int]] = T_HANDS,
    stems: Sequence[int] = T_STEMS,
    seats: tuple[SeatInfo, ...] | None = None,
) -> GameStarted:
    return GameStarted(
        game_id="g1",
        table_id="t1",
        seats=seats if seats is not None else people(len(hands)),
        hands=tuple(tuple(hand) for hand in hands),
        stems=tuple(stems),
    )


def given(*events: Event) -> GameState:
    return fold(events)


def run(state: GameState, *commands: Command) -> GameState:
    for command in commands:
        for event in decide(command, state):
            state = evolve(state, event)
    return state


def picks(*pairs: tuple[int, int]) -> tuple[Pick, ...]:
    return tuple(Pick(seat=seat, bee=bee) for seat, bee in pairs)


def play_lowest_to_the_end(state: GameState) -> tuple[GameState, list[Event]]:
    """Every playing seat confirms its lowest bee; too-low people take the cheapest stem."""
    last: list[Event] = []
    while not is_terminal(state):
        if state.phase == "choosing":
            assert state.pending is not None
            command: Command = TakeStem(seat=state.pending.seat, stem=cheapest_stem(state.stems))
        else:
            seat = awaiting(state)[0]
            command = ConfirmPick(seat=seat, bee=state.seat(seat).hand[0])
        last = decide(command, state)
        state = fold(last, state)
    return state, last


T_TURN_1 = (dealt(), TurnStarted(turn=1))

# ---------------------------------------------------------------------------------------------
# §1 The bees and the stems: the deal


def test_rule_the_deal_gives_each_seat_10_and_the_next_4_start_stem_1_to_stem_4() -> None:
    assert decide(start(), initial_state) == [
        GameStarted(
            game_id="g1", table_id="t1", seats=people(2), hands=T_HANDS, stems=(5, 10, 15, 20)
        ),
        TurnStarted(turn=1),
    ]


@pytest.mark.parametrize("players", range(2, 9))
def test_rule_every_bee_is_in_someones_hand_or_on_a_stem_after_the_deal(players: int) -> None:
    deck_order = tuple(reversed(deck(players)))
    command = StartGame(game_id="g", table_id="t", seats=people(players), deck_order=deck_order)
    state = run(initial_state, command)
    for index, seat in enumerate(state.seats):
        assert seat.hand == tuple(sorted(deck_order[HAND_SIZE * index : HAND_SIZE * (index + 1)]))
    assert state.stems == tuple((bee,) for bee in deck_order[HAND_SIZE * players :])
    everywhere = [bee for s in state.seats for bee in s.hand] + [
        b for st in state.stems for b in st
    ]
    assert sorted(everywhere) == list(deck(players))
    assert (state.phase, state.turn, awaiting(state)) == (
        "picking",
        1,
        tuple(range(1, players + 1)),
    )


def test_rule_a_hand_is_kept_in_order_low_to_high() -> None:
    state = given(dealt(hands=((22, 1, 17, 3, 12, 6, 16, 7, 21, 11), T_HANDS[1])))
    assert state.seat(1).hand == T_HANDS[0]


# ---------------------------------------------------------------------------------------------
# §3 A turn: secret picks, tap and confirm


def test_rule_picks_stay_secret_until_everyone_is_in() -> None:
    state = given(*T_TURN_1)
    events = decide(ConfirmPick(seat=1, bee=11), state)
    assert events == [PickConfirmed(seat=1, bee=11)]
    after = fold(events, state)
    assert after.phase == "picking"
    assert awaiting(after) == (2,)
    assert after.seat(1).hand == T_HANDS[0]  # nothing has flown yet


def test_rule_when_the_last_pick_is_in_all_picks_are_revealed_together_low_to_high() -> None:
    state = given(*T_TURN_1, PickConfirmed(seat=1, bee=11))
    assert decide(ConfirmPick(seat=2, bee=8), state) == [
        PickConfirmed(seat=2, bee=8),
        PicksRevealed(turn=1, picks=picks((2, 8), (1, 11))),
        BeeLanded(seat=2, bee=8, stem=1),
        BeeLanded(seat=1, bee=11, stem=2),
        TurnStarted(turn=2),
    ]


def test_rule_tap_is_changeable() -> None:
    state = given(*T_TURN_1)
    assert decide(TapBee(seat=1, bee=3), state) == [BeeTapped(seat=1, bee=3)]
    state = given(*T_TURN_1, BeeTapped(seat=1, bee=3))
    assert decide(TapBee(seat=1, bee=6), state) == [BeeTapped(seat=1, bee=6)]
    state = given(*T_TURN_1, BeeTapped(seat=1, bee=3), BeeTapped(seat=1, bee=6))
    assert state.seat(1).tapped == 6
    assert decide(ConfirmPick(seat=1), state) == [PickConfirmed(seat=1, bee=6)]


def test_rule_a_tap_is_not_a_pick_the_game_still_waits_for_confirm() -> None:
    state = given(*T_TURN_1, BeeTapped(seat=1, bee=3), PickConfirmed(seat=2, bee=8))
    assert state.phase == "picking"
    assert awaiting(state) == (1,)


def test_rule_a_confirmed_pick_is_final() -> None:
    state = given(*T_TURN_1, PickConfirmed(seat=1, bee=6))
    with pytest.raises(errors.AlreadyConfirmed):
        decide(TapBee(seat=1, bee=7), state)
    with pytest.raises(errors.AlreadyConfirmed):
        decide(ConfirmPick(seat=1, bee=7), state)
    with pytest.raises(errors.AlreadyConfirmed):
        decide(ConfirmPick(seat=1), state)


def test_rule_confirm_with_nothing_tapped_names_the_bee_in_one_step() -> None:
    assert decide(ConfirmPick(seat=1, bee=6), given(*T_TURN_1)) == [PickConfirmed(seat=1, bee=6)]


def test_rule_confirm_with_nothing_tapped_and_no_bee_named_is_refused() -> None:
    with pytest.raises(errors.NothingTapped):
        decide(ConfirmPick(seat=1), given(*T_TURN_1))


def test_rule_confirm_naming_a_bee_overrides_the_tapped_one() -> None:
    state = given(*T_TURN_1, BeeTapped(seat=1, bee=3))
    assert decide(ConfirmPick(seat=1, bee=7), state) == [PickConfirmed(seat=1, bee=7)]


def test_rule_taps_and_confirms_are_cleared_for_the_next_turn() -> None:
    state = run(given(*T_TURN_1), ConfirmPick(seat=1, bee=11), ConfirmPick(seat=2, bee=8))
    assert state.turn == 2
    assert all(s.tapped is None and s.confirmed is None for s in state.seats)
    assert state.seat(1).hand == (1, 3, 6, 7, 12, 16, 17, 21, 22)
    assert state.seat(2).hand == (2, 4, 9, 13, 14, 18, 19, 23, 24)


# ---------------------------------------------------------------------------------------------
# §3 Flying: lowest first, onto the closest lower top


def test_rule_bees_fly_lowest_first_whatever_the_seat_or_confirm_order() -> None:
    # 12 flies first and tops stem 2, so 13 lands on 12; were 13 first, 12 would go to stem 1.
    state = given(*T_TURN_1, PickConfirmed(seat=2, bee=13))
    assert decide(ConfirmPick(seat=1, bee=12), state) == [
        PickConfirmed(seat=1, bee=12),
        PicksRevealed(turn=1, picks=picks((1, 12), (2, 13))),
        BeeLanded(seat=1, bee=12, stem=2),
        BeeLanded(seat=2, bee=13, stem=2),
        TurnStarted(turn=2),
    ]
    state = run(given(*T_TURN_1, PickConfirmed(seat=2, bee=13)), ConfirmPick(seat=1, bee=12))
    assert state.stems == ((5,), (10, 12, 13), (15,), (20,))


@pytest.mark.parametrize(
    ("bee", "stem"),
    [(12, 4), (11, 4), (17, 3), (19, 3), (21, 1), (84, 1), (7, 2), (6, 2)],
)
def test_rule_a_bee_lands_on_the_stem_whose_top_is_lower_and_closest(bee: int, stem: int) -> None:
    stems = ((20,), (5,), (15,), (10,))
    assert landing_stem(stems, bee) == stem


def test_rule_a_bee_goes_on_top_of_the_nearest_number_below_it_not_the_nearest_above() -> None:
    # 14 is closer to 15 than to 10, but 15 is above it.
    assert landing_stem(((5,), (10,), (15,), (20,)), 14) == 2


def test_rule_a_bee_lower_than_every_top_lands_nowhere() -> None:
    assert landing_stem(((5,), (10,), (15,), (20,)), 4) is None


def test_rule_only_the_top_bee_of_a_stem_counts() -> None:
    # stem 1 holds 1..4 under its top 9: a 5 is lower than every top
    stems = ((1, 2, 3, 4, 9), (10,), (15,), (20,))
    assert landing_stem(stems, 5) is None
    assert landing_stem(stems, 10) == 1


# ---------------------------------------------------------------------------------------------
# §4 The sixth bee

S_TURN_3 = (
    dealt(S_HANDS, S_STEMS),
    TurnStarted(turn=1),
    PickConfirmed(seat=1, bee=2),
    PickConfirmed(seat=2, bee=3),
    PicksRevealed(turn=1, picks=picks((1, 2), (2, 3))),
    BeeLanded(seat=1, bee=2, stem=1),
    BeeLanded(seat=2, bee=3, stem=1),
    TurnStarted(turn=2),
    PickConfirmed(seat=1, bee=4),
    PickConfirmed(seat=2, bee=5),
    PicksRevealed(turn=2, picks=picks((1, 4), (2, 5))),
    BeeLanded(seat=1, bee=4, stem=1),
    BeeLanded(seat=2, bee=5, stem=1),
    TurnStarted(turn=3),
)


def test_rule_a_stem_holds_5_bees_the_fifth_lands_normally() -> None:
    state = given(*S_TURN_3)
    assert state.stems == ((1, 2, 3, 4, 5), (12,), (18,), (22,))
    assert all(s.stings == 0 for s in state.seats)


def test_rule_sixth_bee_takes_the_five_and_starts_the_stem_again() -> None:
    state = given(*S_TURN_3, PickConfirmed(seat=2, bee=15))
    events = decide(ConfirmPick(seat=1, bee=6), state)
    assert events == [
        PickConfirmed(seat=1, bee=6),
        PicksRevealed(turn=3, picks=picks((1, 6), (2, 15))),
        BeeLanded(seat=1, bee=6, stem=1, taken=(1, 2, 3, 4, 5)),
        BeeLanded(seat=2, bee=15, stem=2),
        TurnStarted(turn=4),
    ]
    after = fold(events, state)
    assert after.stems == ((6,), (12, 15), (18,), (22,))
    assert after.seat(1).pile == (1, 2, 3, 4, 5)
    assert after.seat(1).stings == 6  # 1 + 1 + 1 + 1 + 2 (the 5 ends in 5)
    assert after.seat(2).stings == 0


def test_rule_the_stem_started_by_the_sixth_bee_takes_later_bees_of_the_same_turn() -> None:
    # 6 took stem 1 and started it again; 7 then lands on the 6, not on the 5 it took.
    state = given(
        *S_TURN_3,
        PicksRevealed(turn=3, picks=picks((1, 6), (2, 16))),
        BeeLanded(seat=1, bee=6, stem=1, taken=(1, 2, 3, 4, 5)),
        BeeLanded(seat=2, bee=16, stem=2),
        TurnStarted(turn=4),
        PickConfirmed(seat=2, bee=17),
    )
    assert decide(ConfirmPick(seat=1, bee=7), state) == [
        PickConfirmed(seat=1, bee=7),
        PicksRevealed(turn=4, picks=picks((1, 7), (2, 17))),
        BeeLanded(seat=1, bee=7, stem=1),
        BeeLanded(seat=2, bee=17, stem=2),
        TurnStarted(turn=5),
    ]


def test_rule_a_full_stem_is_marked_sixth_bee_with_the_stings_it_holds() -> None:
    stems = given(*S_TURN_3).stems
    assert forecast(stems, 6) == Forecast(
        bee=6, too_low=False, stem=1, sixth=True, takes=(1, 2, 3, 4, 5), takes_stings=6
    )


# ---------------------------------------------------------------------------------------------
# §3–5 The forecast and the costs of the stems


def test_rule_forecast_shows_where_the_bee_would_land() -> None:
    assert forecast(((5,), (10,), (15,), (20,)), 12) == Forecast(bee=12, too_low=False, stem=2)


def test_rule_forecast_of_a_stem_with_4_bees_is_not_a_sixth() -> None:
    assert forecast(((1, 2, 3, 4), (12,), (18,), (22,)), 6) == Forecast(
        bee=6, too_low=False, stem=1
    )


def test_rule_forecast_of_a_too_low_bee_names_no_stem() -> None:
    assert forecast(((5,), (10,), (15,), (20,)), 3) == Forecast(bee=3, too_low=True)


def test_rule_the_forecast_is_only_what_would_happen_lower_bees_fly_first() -> None:
    # Seat 2's 13 is forecast onto stem 2 (top 10); seat 1's 11 flies first, then 13 lands on it.
    state = given(*T_TURN_1)
    assert forecast(state.stems, 13).stem == 2
    after = run(state, ConfirmPick(seat=2, bee=13), ConfirmPick(seat=1, bee=11))
    assert after.stems[1] == (10, 11, 13)


def test_rule_stem_costs_show_the_bees_and_stings_each_stem_would_cost() -> None:
    stems = ((1, 2, 3, 4, 5), (10,), (55, 11), (20, 21))
    assert stem_costs(stems) == (
        StemCost(stem=1, bees=5, stings=6),
        StemCost(stem=2, bees=1, stings=3),
        StemCost(stem=3, bees=2, stings=12),
        StemCost(stem=4, bees=2, stings=4),
    )
    assert cheapest_stem(stems) == 2


@pytest.mark.parametrize(
    ("stems", "cheapest"),
    [
        # fewest stings wins over fewer bees and a lower number: stem 4 has 2 stings
        (((10,), (20,), (30,), (1, 2)), 4),
        # equal stings (3 each): fewest bees wins over a lower number
        (((1, 2, 3), (4, 6, 7), (10,), (8, 9, 12)), 3),
        # equal stings and bees (stems 2 and 3): the lowest stem number
        (((1, 2, 3, 4), (10,), (20,), (5, 6)), 2),
        # everything equal: stem 1
        (((1,), (2,), (3,), (4,)), 1),
    ],
    ids=["fewest-stings", "then-fewest-bees", "then-lowest-number", "all-equal"],
)
def test_rule_the_cheapest_stem_is_fewest_stings_then_fewest_bees_then_lowest_number(
    stems: tuple[tuple[int, ...], ...], cheapest: int
) -> None:
    assert cheapest_stem(stems) == cheapest


# ---------------------------------------------------------------------------------------------
# §5 Too low


def test_rule_too_low_a_person_must_choose_a_stem_and_the_game_waits() -> None:
    state = given(*T_TURN_1, PickConfirmed(seat=2, bee=13))
    events = decide(ConfirmPick(seat=1, bee=3), state)
    assert events == [
        PickConfirmed(seat=1, bee=3),
        PicksRevealed(turn=1, picks=picks((1, 3), (2, 13))),
        StemChoiceRequired(seat=1, bee=3),
    ]
    after = fold(events, state)
    assert after.phase == "choosing"
    assert awaiting(after) == (1,)
    assert after.pending == Pick(seat=1, bee=3)
    assert after.in_flight == picks((1, 3), (2, 13))  # 13 waits for the choice
    assert after.stems == ((5,), (10,), (15,), (20,))


T_CHOOSING = (
    *T_TURN_1,
    PickConfirmed(seat=2, bee=13),
    PickConfirmed(seat=1, bee=3),
    PicksRevealed(turn=1, picks=picks((1, 3), (2, 13))),
    StemChoiceRequired(seat=1, bee=3),
)


def test_rule_take_stem_takes_all_its_bees_the_bee_starts_it_alone_then_the_rest_fly() -> None:
    state = given(*T_CHOOSING)
    events = decide(TakeStem(seat=1, stem=4), state)
    assert events == [
        StemTaken(seat=1, bee=3, stem=4, taken=(20,), chosen_by="player"),
        BeeLanded(seat=2, bee=13, stem=2),
        TurnStarted(turn=2),
    ]
    after = fold(events, state)
    assert after.stems == ((5,), (10, 13), (15,), (3,))
    assert after.seat(1).stings == 3
    assert after.seat(1).pile == (20,)
    assert after.phase == "picking"
    assert after.pending is None


T_FULL_STEM_CHOOSING = (
    *T_TURN_1,
    PickConfirmed(seat=1, bee=11),
    PickConfirmed(seat=2, bee=8),
    PicksRevealed(turn=1, picks=picks((2, 8), (1, 11))),
    BeeLanded(seat=2, bee=8, stem=1),
    BeeLanded(seat=1, bee=11, stem=2),
    TurnStarted(turn=2),
    PickConfirmed(seat=1, bee=12),
    PickConfirmed(seat=2, bee=13),
    PicksRevealed(turn=2, picks=picks((1, 12), (2, 13))),
    BeeLanded(seat=1, bee=12, stem=2),
    BeeLanded(seat=2, bee=13, stem=2),
    TurnStarted(turn=3),
    PickConfirmed(seat=1, bee=16),
    PickConfirmed(seat=2, bee=14),
    PicksRevealed(turn=3, picks=picks((2, 14), (1, 16))),
    BeeLanded(seat=2, bee=14, stem=2),
    BeeLanded(seat=1, bee=16, stem=3),
    TurnStarted(turn=4),
    PickConfirmed(seat=2, bee=2),
    PickConfirmed(seat=1, bee=1),
    PicksRevealed(turn=4, picks=picks((1, 1), (2, 2))),
    StemChoiceRequired(seat=1, bee=1),
)


def test_rule_a_too_low_person_may_take_any_stem_even_a_full_one() -> None:
    state = given(*T_FULL_STEM_CHOOSING)
    assert state.stems == ((5, 8), (10, 11, 12, 13, 14), (15, 16), (20,))
    events = decide(TakeStem(seat=1, stem=2), state)
    assert events == [
        StemTaken(seat=1, bee=1, stem=2, taken=(10, 11, 12, 13, 14), chosen_by="player"),
        BeeLanded(seat=2, bee=2, stem=2),
        TurnStarted(turn=5),
    ]
    assert fold(events, state).seat(1).stings == 11  # 3 + 5 (the 11) + 1 + 1 + 1


def test_rule_once_the_too_low_bee_starts_a_stem_every_later_bee_has_a_lower_top() -> None:
    # 3 and 4 are both below every top; 3 flies first, takes stem 2 and 4 lands on it.
    state = given(
        *T_TURN_1,
        PickConfirmed(seat=2, bee=4),
        PickConfirmed(seat=1, bee=3),
        PicksRevealed(turn=1, picks=picks((1, 3), (2, 4))),
        StemChoiceRequired(seat=1, bee=3),
    )
    assert decide(TakeStem(seat=1, stem=2), state) == [
        StemTaken(seat=1, bee=3, stem=2, taken=(10,), chosen_by="player"),
        BeeLanded(seat=2, bee=4, stem=2),
        TurnStarted(turn=2),
    ]


def test_rule_at_most_one_bee_a_turn_is_too_low_and_it_is_the_lowest() -> None:
    state = given(*T_TURN_1, PickConfirmed(seat=2, bee=2))
    events = decide(ConfirmPick(seat=1, bee=1), state)
    assert events[-1] == StemChoiceRequired(seat=1, bee=1)
    events = decide(TakeStem(seat=1, stem=3), fold(events, state))
    assert events == [
        StemTaken(seat=1, bee=1, stem=3, taken=(15,), chosen_by="player"),
        BeeLanded(seat=2, bee=2, stem=3),
        TurnStarted(turn=2),
    ]


def test_rule_while_choosing_each_stem_shows_take_with_its_stings_and_the_cheapest() -> None:
    state = given(*T_CHOOSING)
    assert stem_costs(state.stems) == (
        StemCost(stem=1, bees=1, stings=2),
        StemCost(stem=2, bees=1, stings=3),
        StemCost(stem=3, bees=1, stings=2),
        StemCost(stem=4, bees=1, stings=3),
    )
    assert cheapest_stem(state.stems) == 1


T_BEE_SEATS = (person(1), bee_player(2))


def test_rule_bee_player_too_low_takes_the_cheapest_stem_lowest_number_on_a_full_tie() -> None:
    # stems 5 and 15 both cost 2 stings and 1 bee: stem 1.
    state = given(dealt(seats=T_BEE_SEATS), TurnStarted(turn=1), PickConfirmed(seat=2, bee=2))
    assert decide(ConfirmPick(seat=1, bee=11), state) == [
        PickConfirmed(seat=1, bee=11),
        PicksRevealed(turn=1, picks=picks((2, 2), (1, 11))),
        StemTaken(seat=2, bee=2, stem=1, taken=(5,), chosen_by="rule"),
        BeeLanded(seat=1, bee=11, stem=2),
        TurnStarted(turn=2),
    ]


def test_rule_bee_player_too_low_takes_the_fewest_bees_when_stings_tie() -> None:
    # stems (5 6) (10) (15 18) (20): 3 stings each; stems 2 and 4 hold 1 bee: stem 2.
    state = given(
        dealt(seats=T_BEE_SEATS),
        TurnStarted(turn=1),
        PicksRevealed(turn=1, picks=picks((1, 6), (2, 18))),
        BeeLanded(seat=1, bee=6, stem=1),
        BeeLanded(seat=2, bee=18, stem=3),
        TurnStarted(turn=2),
        PickConfirmed(seat=2, bee=2),
    )
    assert [(c.stings, c.bees) for c in stem_costs(state.stems)] == [(3, 2), (3, 1), (3, 2), (3, 1)]
    assert decide(ConfirmPick(seat=1, bee=7), state) == [
        PickConfirmed(seat=1, bee=7),
        PicksRevealed(turn=2, picks=picks((2, 2), (1, 7))),
        StemTaken(seat=2, bee=2, stem=2, taken=(10,), chosen_by="rule"),
        BeeLanded(seat=1, bee=7, stem=1),
        TurnStarted(turn=3),
    ]


def test_rule_bee_player_too_low_takes_the_fewest_stings_first() -> None:
    # stems (5 6) (10) (15) (20 23): 3, 3, 2, 4 stings: stem 3 although stem 2 is lower.
    state = given(
        dealt(seats=T_BEE_SEATS),
        TurnStarted(turn=1),
        PicksRevealed(turn=1, picks=picks((1, 6), (2, 23))),
        BeeLanded(seat=1, bee=6, stem=1),
        BeeLanded(seat=2, bee=23, stem=4),
        TurnStarted(turn=2),
        PickConfirmed(seat=2, bee=2),
    )
    assert decide(ConfirmPick(seat=1, bee=7), state) == [
        PickConfirmed(seat=1, bee=7),
        PicksRevealed(turn=2, picks=picks((2, 2), (1, 7))),
        StemTaken(seat=2, bee=2, stem=3, taken=(15,), chosen_by="rule"),
        BeeLanded(seat=1, bee=7, stem=1),
        TurnStarted(turn=3),
    ]


# ---------------------------------------------------------------------------------------------
# §6 How a game ends


def test_rule_after_10_turns_the_game_ends_and_the_fewest_stings_wins() -> None:
    state, last = play_lowest_to_the_end(run(initial_state, start()))
    assert last[-1] == GameEnded(stings=(3, 5), winners=(1,), reason="finished")
    assert not any(isinstance(e, TurnStarted) for e in last)
    assert is_terminal(state)
    assert state.turn == 10
    assert all(s.hand == () for s in state.seats)
    assert state.winners == (1,)
    assert state.end_reason == "finished"


def test_rule_players_tied_for_the_fewest_share_the_win() -> None:
    state = run(
        initial_state, StartGame(game_id="g", table_id="t", seats=people(2), deck_order=TIE_DECK)
    )
    state, last = play_lowest_to_the_end(state)
    assert last[-1] == GameEnded(stings=(6, 6), winners=(1, 2), reason="finished")


def _seat(n: int, stings: int, left: bool = False) -> SeatState:
    return SeatState(info=person(n), hand=(), stings=stings, left=left)


@pytest.mark.parametrize(
    ("stings", "winners"),
    [((3, 1, 1, 5), (2, 3)), ((0, 7), (1,)), ((4, 4, 4), (1, 2, 3))],
)
def test_rule_fewest_stings_wins_ties_share(
    stings: tuple[int, ...], winners: tuple[int, ...]
) -> None:
    seats = [_seat(n, s) for n, s in enumerate(stings, start=1)]
    assert winners_of(seats) == winners


def test_rule_no_command_is_allowed_after_the_end() -> None:
    state, _ = play_lowest_to_the_end(run(initial_state, start()))
    for command in (
        TapBee(seat=1, bee=1),
        ConfirmPick(seat=1, bee=1),
        ConfirmPick(seat=1),
        TakeStem(seat=1, stem=1),
        LeaveGame(seat=1),
    ):
        with pytest.raises(errors.GameOver):
            decide(command, state)
    with pytest.raises(errors.GameAlreadyStarted):
        decide(start(), state)


# ---------------------------------------------------------------------------------------------
# §7 The clock: deadlines are facts computed from the command's time


AT = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def test_rule_each_online_turn_has_a_20_second_clock() -> None:
    events = decide(start(clock=ClockSettings(), at=AT), initial_state)
    assert events[-1] == TurnStarted(turn=1, deadline=AT + timedelta(seconds=20))
    assert fold(events).deadline == AT + timedelta(seconds=20)


def test_rule_a_too_low_person_gets_10_seconds_to_choose_online() -> None:
    state = run(initial_state, start(clock=ClockSettings(), at=AT), ConfirmPick(seat=2, bee=13))
    later = AT + timedelta(seconds=5)
    events = decide(ConfirmPick(seat=1, bee=3, at=later), state)
    assert events[-1] == StemChoiceRequired(seat=1, bee=3, deadline=later + timedelta(seconds=10))


def test_rule_on_your_own_nothing_is_timed() -> None:
    events = decide(start(at=AT), initial_state)
    assert events[-1] == TurnStarted(turn=1, deadline=None)


# ---------------------------------------------------------------------------------------------
# §9 Leaving

H3_TURN_1 = (dealt(H3_HANDS, H3_STEMS), TurnStarted(turn=1))


def test_rule_leaving_withdraws_an_unrevealed_pick() -> None:
    state = given(*H3_TURN_1, PickConfirmed(seat=1, bee=6), PickConfirmed(seat=2, bee=16))
    assert decide(LeaveGame(seat=1), state) == [SeatLeft(seat=1)]
    state = given(
        *H3_TURN_1, PickConfirmed(seat=1, bee=6), PickConfirmed(seat=2, bee=16), SeatLeft(seat=1)
    )
    assert state.seat(1).confirmed is None
    assert awaiting(state) == (3,)
    assert decide(ConfirmPick(seat=3, bee=26), state) == [
        PickConfirmed(seat=3, bee=26),
        PicksRevealed(turn=1, picks=picks((2, 16), (3, 26))),
        BeeLanded(seat=2, bee=16, stem=2),
        BeeLanded(seat=3, bee=26, stem=3),
        TurnStarted(turn=2),
    ]


def test_rule_when_the_last_awaited_seat_leaves_the_picks_are_revealed() -> None:
    state = given(*H3_TURN_1, PickConfirmed(seat=1, bee=6), PickConfirmed(seat=2, bee=16))
    assert decide(LeaveGame(seat=3), state) == [
        SeatLeft(seat=3),
        PicksRevealed(turn=1, picks=picks((1, 6), (2, 16))),
        BeeLanded(seat=1, bee=6, stem=1),
        BeeLanded(seat=2, bee=16, stem=2),
        TurnStarted(turn=2),
    ]


def test_rule_a_leaver_picks_no_more_bees() -> None:
    state = given(*H3_TURN_1, SeatLeft(seat=1))
    with pytest.raises(errors.SeatNotPlaying):
        decide(TapBee(seat=1, bee=6), state)
    with pytest.raises(errors.SeatNotPlaying):
        decide(ConfirmPick(seat=1, bee=6), state)
    with pytest.raises(errors.SeatNotPlaying):
        decide(LeaveGame(seat=1), state)
    assert awaiting(state) == (2, 3)


def test_rule_a_leavers_pending_choice_is_taken_as_the_cheapest_by_rule() -> None:
    state = given(
        *H3_TURN_1,
        PickConfirmed(seat=2, bee=16),
        PickConfirmed(seat=3, bee=26),
        PickConfirmed(seat=1, bee=1),
        PicksRevealed(turn=1, picks=picks((1, 1), (2, 16), (3, 26))),
        StemChoiceRequired(seat=1, bee=1),
    )
    # stems 5, 15, 25, 34 cost 2, 2, 2, 1 stings: the 34 is cheapest
    assert decide(LeaveGame(seat=1), state) == [
        SeatLeft(seat=1),
        StemTaken(seat=1, bee=1, stem=4, taken=(34,), chosen_by="rule"),
        BeeLanded(seat=2, bee=16, stem=2),
        BeeLanded(seat=3, bee=26, stem=3),
        TurnStarted(turn=2),
    ]


def test_rule_another_seat_leaving_does_not_take_the_choice_away() -> None:
    state = given(
        *H3_TURN_1,
        PickConfirmed(seat=2, bee=16),
        PickConfirmed(seat=3, bee=26),
        PickConfirmed(seat=1, bee=1),
        PicksRevealed(turn=1, picks=picks((1, 1), (2, 16), (3, 26))),
        StemChoiceRequired(seat=1, bee=1),
    )
    events = decide(LeaveGame(seat=3), state)
    assert events == [SeatLeft(seat=3)]
    assert fold(events, state).phase == "choosing"


def test_rule_last_person_standing_wins_at_once_and_a_leavers_stings_do_not_count() -> None:
    state = run(given(*T_CHOOSING), TakeStem(seat=1, stem=4))  # seat 1 holds 3 stings
    assert decide(LeaveGame(seat=2), state) == [
        SeatLeft(seat=2),
        GameEnded(stings=(3, 0), winners=(1,), reason="last_person_standing"),
    ]


def test_rule_the_bee_players_do_not_keep_a_game_going_for_one_person() -> None:
    seats = (person(1), person(2), bee_player(3), bee_player(4))
    deck_order = tuple(range(1, 45))
    state = run(
        initial_state, StartGame(game_id="g", table_id="t", seats=seats, deck_order=deck_order)
    )
    assert decide(LeaveGame(seat=1), state) == [
        SeatLeft(seat=1),
        GameEnded(stings=(0, 0, 0, 0), winners=(2,), reason="last_person_standing"),
    ]


def test_leaving_a_solo_game_abandons_it_with_no_winner() -> None:
    state = given(dealt(seats=T_BEE_SEATS), TurnStarted(turn=1))
    assert decide(LeaveGame(seat=1), state) == [
        SeatLeft(seat=1),
        GameEnded(stings=(0, 0), winners=(), reason="abandoned"),
    ]


def test_rule_leavers_stings_do_not_count_for_winning() -> None:
    assert winners_of([_seat(1, 0, left=True), _seat(2, 4), _seat(3, 2)]) == (3,)
    assert winners_of([_seat(1, 0, left=True), _seat(2, 2), _seat(3, 2)]) == (2, 3)
    # a whole game: seat 1 leaves at once with 0 stings, the others play on to the end
    state = run(initial_state, start(H3_HANDS, H3_STEMS), LeaveGame(seat=1))
    state, last = play_lowest_to_the_end(state)
    ended = last[-1]
    assert isinstance(ended, GameEnded)
    assert ended.reason == "finished"
    assert ended.stings[0] == 0
    assert 1 not in ended.winners
    assert ended.winners == winners_of(state.seats[1:])
    assert state.seat(1).hand == H3_HANDS[0]  # the leaver's bees never flew


# ---------------------------------------------------------------------------------------------
# Refusals


def test_error_bee_not_in_hand() -> None:
    state = given(*T_TURN_1)
    with pytest.raises(errors.BeeNotInHand):
        decide(TapBee(seat=1, bee=2), state)  # seat 2's bee
    with pytest.raises(errors.BeeNotInHand):
        decide(ConfirmPick(seat=1, bee=5), state)  # on a stem
    with pytest.raises(errors.BeeNotInHand):
        decide(ConfirmPick(seat=1, bee=99), state)


def test_a_refused_bee_says_nothing_of_whose_hand_it_is_in() -> None:
    """No error channel: refusing a bee in another seat's hand reads exactly as refusing one
    that was never dealt (same class, code and message, bee number aside)."""
    state = given(*T_TURN_1)
    refusals = []
    for bee in (2, 99):  # seat 2's bee; no bee of the deck
        with pytest.raises(errors.BeeNotInHand) as info:
            decide(TapBee(seat=1, bee=bee), state)
        refusals.append((type(info.value), info.value.code, str(info.value).replace(str(bee), "N")))
    assert refusals[0] == refusals[1]


def test_error_a_played_bee_is_no_longer_in_hand() -> None:
    state = run(given(*T_TURN_1), ConfirmPick(seat=1, bee=11), ConfirmPick(seat=2, bee=8))
    with pytest.raises(errors.BeeNotInHand):
        decide(ConfirmPick(seat=1, bee=11), state)


def test_error_not_your_decision_take_stem_when_no_bee_is_too_low() -> None:
    with pytest.raises(errors.NotYourDecision):
        decide(TakeStem(seat=1, stem=1), given(*T_TURN_1))


def test_error_not_your_decision_take_stem_by_the_wrong_seat() -> None:
    with pytest.raises(errors.NotYourDecision):
        decide(TakeStem(seat=2, stem=1), given(*T_CHOOSING))


@pytest.mark.parametrize(
    "command",
    [TapBee(seat=2, bee=14), ConfirmPick(seat=2, bee=14), TapBee(seat=1, bee=6)],
)
def test_error_not_your_decision_picking_while_someone_chooses(command: Command) -> None:
    with pytest.raises(errors.NotYourDecision):
        decide(command, given(*T_CHOOSING))


@pytest.mark.parametrize("stem", [0, 5, -1, 7])
def test_error_stem_out_of_range(stem: int) -> None:
    with pytest.raises(errors.StemOutOfRange):
        decide(TakeStem(seat=1, stem=stem), given(*T_CHOOSING))


@pytest.mark.parametrize(
    "deck_order",
    [
        tuple(range(1, 24)),  # one bee short
        (*range(1, 24), 23),  # a bee twice
        tuple(range(1, 26)),  # one bee too many
        tuple(range(2, 26)),  # the wrong bees
        tuple(range(1, 45)),  # a four-player deck
    ],
    ids=["short", "duplicate", "long", "wrong-bees", "other-table"],
)
def test_error_invalid_deal(deck_order: tuple[int, ...]) -> None:
    with pytest.raises(errors.InvalidDeal):
        decide(
            StartGame(game_id="g", table_id="t", seats=people(2), deck_order=deck_order),
            initial_state,
        )


@pytest.mark.parametrize(
    "seats",
    [
        (person(1),),
        people(9),
        (person(2), person(1)),
        (person(1), person(3)),
        (),
    ],
    ids=["one", "nine", "out-of-order", "gap", "none"],
)
def test_error_invalid_seats(seats: tuple[SeatInfo, ...]) -> None:
    players = max(len(seats), 2)
    with pytest.raises(errors.InvalidSeats):
        decide(
            StartGame(game_id="g", table_id="t", seats=seats, deck_order=tuple(deck(players))),
            initial_state,
        )


def test_error_game_already_started() -> None:
    with pytest.raises(errors.GameAlreadyStarted):
        decide(start(), given(*T_TURN_1))


@pytest.mark.parametrize(
    "command",
    [
        TapBee(seat=1, bee=1),
        ConfirmPick(seat=1, bee=1),
        TakeStem(seat=1, stem=1),
        LeaveGame(seat=1),
    ],
)
def test_error_game_not_started(command: Command) -> None:
    with pytest.raises(errors.GameNotStarted):
        decide(command, initial_state)


@pytest.mark.parametrize("seat", [0, 3, -1])
def test_error_no_such_seat(seat: int) -> None:
    with pytest.raises(errors.SeatNotPlaying):
        decide(TapBee(seat=seat, bee=1), given(*T_TURN_1))


def test_errors_split_into_malformed_and_not_allowed_now() -> None:
    for malformed in (errors.StemOutOfRange, errors.InvalidDeal, errors.InvalidSeats):
        assert issubclass(malformed, errors.InvalidMove)
    for not_now in (
        errors.BeeNotInHand,
        errors.AlreadyConfirmed,
        errors.NothingTapped,
        errors.NotYourDecision,
        errors.SeatNotPlaying,
        errors.GameNotStarted,
        errors.GameAlreadyStarted,
        errors.GameOver,
    ):
        assert issubclass(not_now, errors.IllegalMove)
    assert errors.GameOver("x").code == "game-over"


# ---------------------------------------------------------------------------------------------
# The Decider itself


def test_decide_never_changes_the_state_it_is_given() -> None:
    state = given(*T_CHOOSING)
    before = state
    decide(TakeStem(seat=1, stem=4), state)
    assert state == before


HISTORIES = {
    "T_CHOOSING": (
        T_CHOOSING,
        (start(), ConfirmPick(seat=2, bee=13), ConfirmPick(seat=1, bee=3)),
    ),
    "S_TURN_3": (
        S_TURN_3,
        (
            start(S_HANDS, S_STEMS),
            ConfirmPick(seat=1, bee=2),
            ConfirmPick(seat=2, bee=3),
            ConfirmPick(seat=1, bee=4),
            ConfirmPick(seat=2, bee=5),
        ),
    ),
    "T_FULL_STEM_CHOOSING": (
        T_FULL_STEM_CHOOSING,
        (
            start(),
            ConfirmPick(seat=1, bee=11),
            ConfirmPick(seat=2, bee=8),
            ConfirmPick(seat=1, bee=12),
            ConfirmPick(seat=2, bee=13),
            ConfirmPick(seat=1, bee=16),
            ConfirmPick(seat=2, bee=14),
            ConfirmPick(seat=2, bee=2),
            ConfirmPick(seat=1, bee=1),
        ),
    ),
}


@pytest.mark.parametrize("name", HISTORIES)
def test_the_hand_written_histories_are_what_the_engine_decides(name: str) -> None:
    events, commands = HISTORIES[name]
    state = initial_state
    produced: list[Event] = []
    for command in commands:
        new = decide(command, state)
        produced.extend(new)
        state = fold(new, state)
    assert produced == list(events)
    assert state == given(*events)


def test_version_counts_the_events_folded() -> None:
    assert given(*T_CHOOSING).version == len(T_CHOOSING)
