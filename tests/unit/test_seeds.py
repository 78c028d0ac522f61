"""Seeds that give nobody an edge (service/domain/seeds.py, docs/fairness.md): pure decisions.

A person gives a seed in the clear, or commits to one by its hash; when the deal is asked for
with a commitment outstanding, seeds close and the deal waits for every reveal, or for the
reveal window to end (the seat then deals with none). Nobody sees another person's seed before
the deal.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.domain import fairness
from service.domain.seeds import (
    REVEAL_WINDOW,
    NothingToReveal,
    RevealShown,
    SeedDoesNotMatch,
    SeedShown,
    SeedsStillOpen,
    decide_close_seeds,
    decide_commit_seed,
    decide_reveal,
    decide_withhold,
    reveal_window_over,
    seen_by,
)
from service.domain.table_events import (
    GameOpened,
    GamePrepared,
    SeatTaken,
    SeedContributed,
    SeedsClosed,
    SeedWithheld,
    TableEventUnion,
)
from service.domain.tables import (
    NoGameToSeed,
    SeedsAreClosed,
    TableState,
    decide_contribute,
    decide_leave,
    decide_open,
    evolve_table,
    fold_table,
)

GAME = "g-1"
PEOPLE = ("host", "ann", "bob")


def prepared(*joined: str) -> TableState:
    events: list[TableEventUnion] = list(decide_open("t", "host", "Hana", 4, 0, None))
    events += [SeatTaken(player_id=p, name=p.title(), kind="person") for p in joined]
    events.append(GamePrepared(game_id=GAME, commitment="c0" * 32))
    return fold_table(events)


def apply(state: TableState, events: list[TableEventUnion]) -> TableState:
    for event in events:
        state = evolve_table(state, event)
    return state


def commit(state: TableState, who: str, seed: bytes) -> TableState:
    digest = fairness.seed_commitment(GAME, who, seed).hex()
    return apply(state, decide_commit_seed(state, who, digest))


def test_a_table_with_no_commitment_deals_at_once() -> None:
    state = apply(prepared("ann"), decide_contribute(prepared("ann"), "ann", "aa"))
    assert state.ready_to_deal and decide_close_seeds(state) == []


def test_a_commitment_closes_seeds_and_the_deal_waits_for_its_reveal() -> None:
    state = commit(prepared("ann"), "ann", b"secret")
    assert not state.ready_to_deal and state.awaiting_reveals == ("ann",)
    with pytest.raises(SeedsStillOpen):
        decide_reveal(state, "ann", b"secret".hex())
    state = apply(state, decide_close_seeds(state))
    assert state.seeds_closed and decide_close_seeds(state) == []
    with pytest.raises(SeedsAreClosed):
        decide_contribute(state, "host", "bb")
    with pytest.raises(SeedsAreClosed):
        decide_commit_seed(state, "host", "ab" * 32)
    with pytest.raises(SeedDoesNotMatch):
        decide_reveal(state, "ann", b"another".hex())
    with pytest.raises(NothingToReveal):
        decide_reveal(state, "host", b"secret".hex())
    state = apply(state, decide_reveal(state, "ann", b"secret".hex()))
    assert state.ready_to_deal and state.seed_of("ann") == b"secret".hex()


def test_a_commitment_is_bound_to_its_game_and_person() -> None:
    """Bob copies Ann's commitment: he cannot open it, even knowing her seed afterwards."""
    state = prepared("ann", "bob")
    ann = fairness.seed_commitment(GAME, "ann", b"secret").hex()
    state = apply(state, decide_commit_seed(state, "ann", ann))
    state = apply(state, decide_commit_seed(state, "bob", ann))
    state = apply(state, decide_close_seeds(state))
    with pytest.raises(SeedDoesNotMatch):
        decide_reveal(state, "bob", b"secret".hex())
    assert fairness.seed_commitment("g-2", "ann", b"secret").hex() != ann


def test_a_seat_that_never_reveals_deals_with_none() -> None:
    state = commit(commit(prepared("ann", "bob"), "ann", b"a"), "bob", b"b")
    assert decide_withhold(state) == []  # seeds are still open: nothing to withhold yet
    state = apply(state, decide_close_seeds(state))
    state = apply(state, decide_reveal(state, "ann", b"a".hex()))
    withheld = decide_withhold(state)
    assert withheld == [SeedWithheld(game_id=GAME, player_id="bob")]
    state = apply(state, withheld)
    assert state.ready_to_deal and state.withheld == ("bob",)
    assert state.seed_of("bob") is None and state.seed_of("ann") == b"a".hex()


def test_a_person_who_leaves_takes_their_seed_along() -> None:
    state = prepared("ann", "bob")
    state = apply(state, decide_contribute(state, "ann", "aa"))
    state = commit(state, "bob", b"b")
    state = apply(state, decide_leave(state, "ann") + decide_leave(state, "bob")[:1])
    assert state.seed_of("ann") is None and state.ready_to_deal
    state = apply(state, [SeatTaken(player_id="ann", name="Ann", kind="person")])
    assert state.seed_of("ann") is None  # joining again, Ann may give another


def test_no_seed_before_a_game_is_prepared_or_after_it_is_dealt() -> None:
    state = apply(prepared("ann"), [GameOpened(game_id=GAME, number=1)])
    assert state.next_game is None and state.seeds == () and not state.seeds_closed
    with pytest.raises(NoGameToSeed):
        decide_commit_seed(state, "ann", "ab" * 32)
    with pytest.raises(NoGameToSeed):
        decide_reveal(state, "ann", "ab")


def test_another_persons_seed_is_hidden_until_the_deal() -> None:
    state = prepared("ann")
    given_ = SeedContributed(game_id=GAME, player_id="ann", seed="aa01")
    digest = fairness.seed_commitment(GAME, "ann", bytes.fromhex("aa01")).hex()
    assert seen_by(given_, "ann", state) == given_
    assert seen_by(given_, "host", state) == SeedShown(
        game_id=GAME, player_id="ann", seed_hash=digest
    )
    assert seen_by(given_, None, state).seed is None  # type: ignore[union-attr]
    dealt = apply(state, [GameOpened(game_id=GAME, number=1)])
    assert seen_by(given_, "host", dealt) == given_
    revealed = decide_reveal(
        apply(commit(state, "ann", b"x"), [SeedsClosed(game_id=GAME)]), "ann", b"x".hex()
    )[0]
    assert isinstance(seen_by(revealed, "host", state), RevealShown)


_actions = st.lists(
    st.tuples(st.sampled_from(PEOPLE), st.sampled_from(["give", "commit"]), st.binary(max_size=64)),
    max_size=12,
)


@given(_actions, st.sets(st.sampled_from(PEOPLE)))
def test_property_the_deal_gets_each_persons_last_seed_or_none(
    actions: list[tuple[str, str, bytes]], silent: set[str]
) -> None:
    """Whatever people give and commit in whatever order, once seeds close and everyone not in
    `silent` reveals, the deal gets each person's last seed; a silent committer's seat is none."""
    state = prepared("ann", "bob")
    last: dict[str, tuple[str, bytes]] = {}
    for who, how, seed in actions:
        if how == "give":
            state = apply(state, decide_contribute(state, who, seed.hex()))
        else:
            state = commit(state, who, seed)
        last[who] = (how, seed)
    state = apply(state, decide_close_seeds(state))
    for who, (how, seed) in last.items():
        if how == "commit" and who not in silent:
            state = apply(state, decide_reveal(state, who, seed.hex()))
    state = apply(state, decide_withhold(state))
    assert state.ready_to_deal
    for who in PEOPLE:
        how, seed = last.get(who, ("none", b""))
        withheld = how == "commit" and who in silent
        want = None if how == "none" or withheld else seed.hex()
        assert state.seed_of(who) == want
        assert (who in state.withheld) == withheld


def test_the_reveal_window_runs_from_when_seeds_closed() -> None:
    closed_at = datetime(2026, 1, 1, tzinfo=UTC)
    state = commit(prepared("ann"), "ann", b"a")
    assert not reveal_window_over(state, closed_at + timedelta(days=1))  # seeds still open
    state = apply(state, decide_close_seeds(state, closed_at))
    assert state.seeds_closed_at == closed_at
    assert not reveal_window_over(state, closed_at + REVEAL_WINDOW - timedelta(microseconds=1))
    assert reveal_window_over(state, closed_at + REVEAL_WINDOW)
    state = apply(state, [*decide_withhold(state), GameOpened(game_id=GAME, number=1)])
    assert state.seeds_closed_at is None and not state.seeds_closed
