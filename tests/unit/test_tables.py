"""The table's rules (seed §9), as pure decisions: given a table, this request yields these
events or this refusal."""

from __future__ import annotations

import pytest

from service.domain.rules.bees import BEE_NAMES
from service.domain.table_events import (
    GameFinished,
    GameOpened,
    HostChanged,
    SeatFreed,
    SeatTaken,
    TableClosedEvent,
    TableEventUnion,
    TableOpened,
    decode_table_event,
)
from service.domain.tables import (
    AlreadySeated,
    BeesNotAllowed,
    BuyInNeedsAccount,
    GameInProgress,
    InvalidTable,
    NoGameToReplay,
    NotEnoughPeople,
    NotHost,
    NotSeated,
    TableClosed,
    TableFull,
    TableState,
    decide_fill_with_bees,
    decide_join,
    decide_leave,
    decide_open,
    decide_play_again,
    decide_start,
    evolve_table,
    fold_table,
    should_start_when_full,
)


def table(capacity: int = 4, *joined: str) -> TableState:
    events: list[TableEventUnion] = list(decide_open("t", "host", "Hana", capacity, 0, None))
    events += [SeatTaken(player_id=p, name=p.title(), kind="person") for p in joined]
    return fold_table(events)


def apply(state: TableState, events: list[TableEventUnion]) -> TableState:
    for event in events:
        state = evolve_table(state, event)
    return state


def test_rule_a_table_has_2_to_8_seats_4_to_start() -> None:
    assert table().capacity == 4
    for bad in (1, 9):
        with pytest.raises(InvalidTable):
            decide_open("t", "host", "Hana", bad, 0, None)


def test_rule_the_host_takes_the_first_seat() -> None:
    state = table()
    assert state.host == "host" and state.seat_of("host") == 1 and state.status == "open"


def test_rule_a_buy_in_table_needs_an_account() -> None:
    with pytest.raises(BuyInNeedsAccount):
        decide_open("t", "host", "Hana", 4, 100, None)
    opened = fold_table(decide_open("t", "host", "Hana", 4, 100, None, registered=True))
    assert opened.stake == 100 and opened.holds_stakes
    with pytest.raises(BuyInNeedsAccount):
        decide_join(opened, "guest", "Gus")
    decide_join(opened, "member", "Mia", registered=True)


def test_rule_joining_takes_the_next_seat() -> None:
    state = apply(table(), decide_join(table(), "bob", "Bob"))
    assert state.seat_of("bob") == 2


def test_rule_you_cannot_sit_twice_or_at_a_full_table() -> None:
    with pytest.raises(AlreadySeated):
        decide_join(table(4, "bob"), "bob", "Bob")
    with pytest.raises(TableFull):
        decide_join(table(2, "bob"), "cat", "Cat")


def test_rule_the_game_starts_when_the_table_is_full() -> None:
    assert not should_start_when_full(table(3, "bob"))
    assert should_start_when_full(table(3, "bob", "cat"))


def test_rule_the_host_starts_with_at_least_two_people() -> None:
    with pytest.raises(NotEnoughPeople):
        decide_start(table(), "host")
    decide_start(table(4, "bob"), "host")
    with pytest.raises(NotHost):
        decide_start(table(4, "bob"), "bob")


def test_rule_bees_fill_every_empty_seat_once_a_second_person_joined() -> None:
    with pytest.raises(NotEnoughPeople):
        decide_fill_with_bees(table(), "host", BEE_NAMES)
    bees = decide_fill_with_bees(table(5, "bob"), "host", BEE_NAMES)
    assert [(e.name, e.kind) for e in bees if isinstance(e, SeatTaken)] == [
        ("Buzz", "bee"),
        ("Bumble", "bee"),
        ("Honey", "bee"),
    ]
    with pytest.raises(NotHost):
        decide_fill_with_bees(table(5, "bob"), "bob", BEE_NAMES)


def test_rule_bees_only_fill_free_tables() -> None:
    paid = TableState(
        table_id="t",
        mode="online",
        host="host",
        capacity=4,
        stake=100,
        seats=table(4, "bob").seats,
    )
    with pytest.raises(BeesNotAllowed):
        decide_fill_with_bees(paid, "host", BEE_NAMES)


def test_rule_if_the_host_leaves_before_the_start_the_next_person_hosts() -> None:
    events = decide_leave(table(4, "bob", "cat"), "host")
    assert events == [SeatFreed(player_id="host"), HostChanged(host="bob")]
    state = apply(table(4, "bob", "cat"), events)
    assert state.host == "bob" and state.seat_of("bob") == 1 and state.seat_of("cat") == 2


def test_rule_a_table_that_empties_closes() -> None:
    events = decide_leave(table(), "host")
    assert events == [SeatFreed(player_id="host"), TableClosedEvent()]
    closed = apply(table(), events)
    assert closed.status == "closed"
    with pytest.raises(TableClosed):
        decide_join(closed, "bob", "Bob")


def test_rule_bees_do_not_keep_a_table_open() -> None:
    state = apply(table(4, "bob"), decide_fill_with_bees(table(4, "bob"), "host", BEE_NAMES))
    state = apply(state, decide_leave(state, "bob"))
    assert isinstance(decide_leave(state, "host")[-1], TableClosedEvent)


def test_rule_only_a_seated_person_leaves() -> None:
    with pytest.raises(NotSeated):
        decide_leave(table(), "stranger")


def test_rule_nobody_joins_during_a_game() -> None:
    playing = evolve_table(table(4, "bob"), GameOpened(game_id="g", number=1))
    with pytest.raises(GameInProgress):
        decide_join(playing, "cat", "Cat")


def test_rule_play_again_follows_a_finished_game_with_everyone_still_there() -> None:
    with pytest.raises(NoGameToReplay):
        decide_play_again(table(4, "bob"), "host")
    playing = evolve_table(table(4, "bob"), GameOpened(game_id="g", number=1))
    with pytest.raises(GameInProgress):
        decide_play_again(playing, "host")
    done = evolve_table(playing, GameFinished(game_id="g"))
    decide_play_again(done, "bob")
    with pytest.raises(NotSeated):
        decide_play_again(done, "stranger")
    alone = apply(done, decide_leave(done, "bob"))
    with pytest.raises(NotEnoughPeople):
        decide_play_again(alone, "host")


def test_rule_a_table_fills_at_the_first_deal_only() -> None:
    done = evolve_table(
        evolve_table(table(2, "bob"), GameOpened(game_id="g", number=1)),
        GameFinished(game_id="g"),
    )
    assert not should_start_when_full(done)


def test_seat_numbers_follow_joining_order_and_games_use_them() -> None:
    state = table(4, "bob", "cat")
    assert [(s.seat, s.player_id) for s in state.seat_infos()] == [
        (1, "host"),
        (2, "bob"),
        (3, "cat"),
    ]


def test_old_solo_table_events_fold_with_defaults() -> None:
    opened = TableOpened(table_id="t", mode="solo", host="p", seats=table(3, "b", "c").seat_infos())
    state = fold_table([opened])
    assert state.capacity == 3 and state.stake == 0 and state.clock is None


def test_rule_a_table_is_rated_or_casual_as_it_is_opened_and_casual_by_default() -> None:
    assert not table().rated
    rated = fold_table(decide_open("t", "host", "Hana", 4, 100, None, registered=True, rated=True))
    assert rated.rated and rated.stake == 100  # a buy-in table may be rated too
    # A table opened before ratings existed reads as casual.
    old = b'{"type":"table_opened","table_id":"t","mode":"online","host":"h","seats":[]}'
    assert not fold_table([decode_table_event(old)]).rated
