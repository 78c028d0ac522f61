"""The hard and expert bees: blind to the hands they must not see, deterministic given their seed,
legal through whole games, and sensible where the answer is plain; their array playouts fly and
cost bees exactly as the rules and the heuristic do. Their strength is a benchmark (`make
bench-bees`), not a test."""

from __future__ import annotations

import random
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from service.domain.rules import batch, expert
from service.domain.rules.bee_view import unseen_bees
from service.domain.rules.bees import (
    BeeView,
    bee_commands,
    bee_decision_seed,
    choose,
    decision_seeds,
    view_for,
)
from service.domain.rules.cards import deck, pile_stings, total_stings
from service.domain.rules.commands import ConfirmPick
from service.domain.rules.engine import GameState, decide, fold
from service.domain.rules.events import BeeLevel
from service.domain.rules.flight import landing_stem
from service.domain.rules.heuristic import bee_risk, choose_bee
from service.domain.rules.rollout import fly_tops
from tests.unit.test_bees_strong import SERVER_SEED, _advance, _interleaved, _started, _swap_hands

SMALL = 20_000  # a budget that keeps these tests fast; the code path is the same as WORK's


@pytest.mark.parametrize("level", ["hard", "expert"])
@pytest.mark.parametrize(
    ("players", "turns"),
    [
        (3, 0),
        (4, 0),
        (4, 3),
        (5, 6),
        pytest.param(8, 2, marks=pytest.mark.slow),
        pytest.param(8, 8, marks=pytest.mark.slow),
    ],
)
def test_the_expert_bee_decides_the_same_whatever_the_other_hands_hold(
    players: int, turns: int, level: BeeLevel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(expert, "WORK", SMALL)
    monkeypatch.setattr(expert, "HARD_WORK", SMALL)
    state = _advance(_started(players, _interleaved(players)), turns)
    assert state.phase == "picking" and state.turn == turns + 1
    seat = 1
    variants = [state]
    for first, second in pairwise(range(2, players + 1)):
        variants.append(_swap_hands(state, first, second))
    assert len(variants) == players - 1
    for variant in variants[1:]:
        assert variant.seat(seat) == state.seat(seat)
        assert [s.hand for s in variant.seats] != [s.hand for s in state.seats]
    seed = bee_decision_seed(SERVER_SEED, "g", seat, state.turn, "pick")
    view = view_for(state, seat)
    decided = choose(view, level, seed)
    assert decided in state.seat(seat).hand
    analysis = expert.analyse(view, seed)
    for variant in variants:
        assert view_for(variant, seat) == view
        assert choose(view_for(variant, seat), level, seed) == decided
        assert expert.analyse(view_for(variant, seat), seed) == analysis
        commands = bee_commands(
            variant, levels={seat: level}, seed_for=decision_seeds(SERVER_SEED, "g")
        )
        assert commands[0] == ConfirmPick(seat=seat, bee=decided)


@pytest.mark.slow
def test_the_expert_bee_is_deterministic_given_its_seed_and_uses_the_seed() -> None:
    view = view_for(_started(4, _interleaved(4)), 2)
    seeds = [bee_decision_seed(SERVER_SEED, "g", 2, 1, f"try-{i}") for i in range(8)]
    small = [expert.analyse(view, seed, work=SMALL) for seed in seeds]
    assert small == [expert.analyse(view, seed, work=SMALL) for seed in seeds]
    # the estimates come from the sampled deals, so another seed gives other estimates
    assert len({a.estimates for a in small}) == len(seeds)


def test_the_analysis_estimates_every_bee_in_hand_and_plays_the_best_survivor() -> None:
    view = view_for(_started(4, _interleaved(4)), 3)
    analysis = expert.analyse(view, b"seed", work=SMALL)
    assert [e.bee for e in analysis.estimates] == sorted(view.hand)
    assert all(e.samples >= expert.EXPERT.min_deals for e in analysis.estimates)
    assert all(e.stings >= 0 and 0 <= e.win <= 1 for e in analysis.estimates)
    most = max(e.samples for e in analysis.estimates)
    finalists = [e for e in analysis.estimates if e.samples == most]
    assert analysis.pick == min(finalists, key=lambda e: (e.stings, e.bee)).bee
    # the last bee in hand needs no thought
    last = BeeView(seat=1, players=4, hand=(7,), stems=view.stems, seen=view.seen)
    assert expert.analyse(last, b"seed").pick == 7


def test_the_expert_bee_keeps_away_from_a_sixth_bee() -> None:
    # 2 players, bees 1-24. Stem 1 holds five bees: 6 is its sixth bee (the 5 bees' stings, 6).
    # 23 lands on 22 with nobody's bee between them: safe.
    stems = ((1, 2, 3, 4, 5), (10,), (22,), (24,))
    seen = frozenset({1, 2, 3, 4, 5, 10, 22, 24})
    view = BeeView(seat=1, players=2, hand=(6, 23), stems=stems, seen=seen)
    # 100k looks: the MCS table's 2,000 playouts count in the work, and SMALL leaves 8 deals,
    # too few to tell 6 (always 6 stings) from 23 (6 only when the other bee misses stem 1)
    assert expert.analyse(view, b"seed", work=100_000).pick == 23


@pytest.mark.parametrize(
    "players", [2, pytest.param(3, marks=pytest.mark.slow), pytest.param(8, marks=pytest.mark.slow)]
)
def test_whole_games_of_expert_bees_end_with_every_pick_legal(
    players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A smoke test of correctness (not strength): the expert level, on a small budget, on
    every seat through whole games."""
    monkeypatch.setattr(expert, "WORK", 20_000)
    state = _started(players, _interleaved(players), level="expert")
    seeds = decision_seeds(SERVER_SEED, "g")
    while state.phase == "picking":
        commands = bee_commands(state, seed_for=seeds)
        assert sorted(c.seat for c in commands) == list(range(1, players + 1))
        for command in commands:
            assert command.bee in state.seat(command.seat).hand
            state = fold(decide(command, state), state)
    assert state.phase == "ended" and state.turn == 10
    on_stems = sum(pile_stings(stem) for stem in state.stems)
    assert sum(s.stings for s in state.seats) + on_stems == total_stings(players)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.integers(2, 8), st.randoms(use_true_random=False))
def test_the_array_flight_is_the_rules_flight(players: int, rng: random.Random) -> None:
    """`batch.fly` over many imagined games at once flies each as `rollout.fly_tops` does (which
    tests/unit/test_bees_rollout.py holds to the engine)."""
    games = []
    for _ in range(5):
        bees = rng.sample(range(1, 10 * players + 5), 4 + players)
        tops = bees[:4]
        lens = [rng.randint(1, 5) for _ in range(4)]
        games.append((tops, lens, [rng.randint(1, 20) for _ in range(4)], bees[4:]))
    arrays = [np.array([g[i] for g in games], dtype=np.int64) for i in range(4)]
    scores = np.zeros((len(games), players), dtype=np.int64)
    batch.fly(arrays[0], arrays[1], arrays[2], scores, arrays[3])
    for n, (tops, lens, sums, picks) in enumerate(games):
        tops, lens, sums, mine = list(tops), list(lens), list(sums), [0] * players
        fly_tops(tops, lens, sums, mine, [(bee, seat) for seat, bee in enumerate(picks)])
        got = [arrays[i][n].tolist() for i in range(3)]
        assert [tops, lens, sums, mine] == [*got, scores[n].tolist()]


def test_an_imagined_player_costs_its_bees_as_the_heuristic_does() -> None:
    """The players of the imagined games see what a seat sees: `batch.features`' risk of each bee
    is the heuristic's (`heuristic.bee_risk`), but for its tie-breaks (under 0.1 sting) and the
    half sting added to a too-low bee."""
    rng = random.Random(29)
    checked = 0
    for players in (2, 4, 8):
        order = list(_interleaved(players))
        rng.shuffle(order)
        state = _started(players, order)
        for _ in range(9):
            for seat in range(1, players + 1):
                view = view_for(state, seat)
                risks = batch.view_features(view)[:, 0]
                for bee, risk in zip(sorted(view.hand), risks, strict=True):
                    expected = bee_risk(view, bee)
                    too_low = landing_stem(view.stems, bee) is None
                    assert abs(risk - expected - (0.5 if too_low else 0.0)) < 0.1
                    checked += 1
            state = _advance(state, state.turn)
    assert checked > 300


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 8), st.integers(1, 6), st.integers(2, 6), st.randoms(use_true_random=False))
def test_an_imagined_mcs_player_never_plays_a_sure_sixth_bee_when_a_safe_one_is_in_hand(
    k: int, depth: int, size: int, rng: random.Random
) -> None:
    # Stems 1-3 are full (tops 10, 20, 30), stem 4 is 40 alone. The second seat holds 11 (the
    # sixth on stem 1 for sure: nothing flies before it) and 41 and up; every other bee of the
    # deal is above its highest, so they all fly after its bee this turn.
    opponent = [11, *range(41, 40 + size)]
    rest = list(range(40 + size, 40 + size + 2 * size))
    rng.shuffle(rest)
    per_deal = np.array([[sorted(rest[:size]), opponent, sorted(rest[size:])]], dtype=np.int64)
    tops = np.array([10, 20, 30, 40], dtype=np.int64)
    lens = np.array([5, 5, 5, 1], dtype=np.int64)
    sums = np.array([7, 7, 7, 3], dtype=np.int64)
    gen = np.random.Generator(np.random.PCG64(rng.getrandbits(64)))
    picks = batch.mcs_picks(per_deal, tops, lens, sums, k, depth, gen)
    assert picks.shape == (1, 2)
    assert all(0 <= p < size for p in picks[0])
    if depth == 1:  # only this turn counts: 11 costs 7 stings for sure, 41 none
        assert picks[0, 0] != 0


@pytest.mark.parametrize("share", [1.0, 0.5])
def test_the_others_imagined_as_mcs_players_keep_the_search_blind_and_deterministic(
    share: float,
) -> None:
    state = _started(4, _interleaved(4))
    how = expert.NESTED._replace(work=200_000, nested=4, nested_depth=3, nested_share=share)
    seed = bee_decision_seed(SERVER_SEED, "g", 1, 1, "pick")
    view = view_for(state, 1)
    pick, estimates = batch.search(view, seed, how)
    assert pick in view.hand and [e.bee for e in estimates] == sorted(view.hand)
    assert batch.search(view, seed, how) == (pick, estimates)
    for first, second in pairwise(range(2, 5)):
        assert batch.search(view_for(_swap_hands(state, first, second), 1), seed, how) == (
            pick,
            estimates,
        )


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 8), st.integers(0, 6), st.randoms(use_true_random=False))
def test_the_mcs_table_values_a_last_turn_bee_at_what_it_takes(
    seats: int, spare: int, rng: random.Random
) -> None:
    # Stems 1-3 full (tops 10, 20, 30, 7 stings each), stem 4 is 40 alone; the last turn (one
    # bee a hand, so no later turn: the table is what a bee takes now). 11 is the lowest bee
    # of every playout it is dealt in: the sixth on stem 1, 7 stings. 41 is the lowest above
    # 40: it lands second on stem 4, nothing taken.
    pool = np.array([11, *range(41, 41 + seats - 1 + spare)], dtype=np.int64)
    tops = np.array([10, 20, 30, 40], dtype=np.int64)
    lens = np.array([5, 5, 5, 1], dtype=np.int64)
    sums = np.array([7, 7, 7, 3], dtype=np.int64)
    gen = np.random.Generator(np.random.PCG64(rng.getrandbits(64)))
    table = batch.mcs_table(pool, seats, 1, tops, lens, sums, 256, gen)
    assert table.shape == (pool.max() + 2,)
    assert table[11] == 7.0  # played in each playout it is dealt in, always the sixth
    assert table[41] == 0.0  # the lowest on stem 4: it lands second there
    assert np.isinf(table[12]) and np.isinf(table[40])  # not in the pool


def test_the_mcs_later_table_holds_what_a_bee_kept_cost() -> None:
    # Two turns left, 4 seats: the pick table is now - later, so later + pick is what a bee
    # played now took, and both are finite exactly on the pool.
    pool = np.arange(30, 50, dtype=np.int64)
    tops = np.array([10, 20, 28, 60], dtype=np.int64)
    lens = np.array([4, 2, 5, 1], dtype=np.int64)
    sums = np.array([4, 5, 9, 3], dtype=np.int64)
    tables = batch.mcs_tables(pool, 4, 2, tops, lens, sums, 400, np.random.default_rng(7))
    alone = batch.mcs_table(pool, 4, 2, tops, lens, sums, 400, np.random.default_rng(7))
    assert np.array_equal(tables.pick, alone)
    assert np.isfinite(tables.later[pool]).all() and np.isinf(tables.later[29])
    # 30 is the lowest bee of the pool: played now it flies first, onto the full stem topped
    # by 28, the sixth bee, so now(30) = 9 stings in every playout
    assert tables.pick[30] + tables.later[30] == pytest.approx(9.0)


@pytest.mark.parametrize(
    ("players", "turns", "later"),
    [(4, 0, False), (8, 0, False), (8, 5, False), (4, 3, True), (8, 5, True)],
)
def test_the_others_imagined_from_an_mcs_table_keep_the_search_blind_and_deterministic(
    players: int, turns: int, later: bool
) -> None:
    state = _started(players, _interleaved(players))
    state = _advance(state, turns)
    how = expert.EXPERT_LARGE._replace(work=300_000, table=200, table_temperature=0.5, later=later)
    seed = bee_decision_seed(SERVER_SEED, "g", 1, turns + 1, "pick")
    view = view_for(state, 1)
    pick, estimates = batch.search(view, seed, how)
    assert pick in view.hand and [e.bee for e in estimates] == sorted(view.hand)
    assert batch.search(view, seed, how) == (pick, estimates)
    for first, second in pairwise(range(2, players + 1)):
        assert batch.search(view_for(_swap_hands(state, first, second), 1), seed, how) == (
            pick,
            estimates,
        )


def _one_game(view: BeeView) -> tuple[np.ndarray, ...]:
    """`view` as the arrays of one imagined game with one seat: its hand, the stems, and every
    bee still in a hand (its own and those it cannot see)."""
    hand = sorted(view.hand)
    alive = np.zeros((1, len(deck(view.players)) + 2), dtype=np.int64)
    alive[0, unseen_bees(view)] = 1
    alive[0, hand] = 1
    return (
        np.array([[hand]], dtype=np.int64),
        np.array([[stem[-1] for stem in view.stems]], dtype=np.int64),
        np.array([[len(stem) for stem in view.stems]], dtype=np.int64),
        np.array([[pile_stings(stem) for stem in view.stems]], dtype=np.int64),
        alive,
    )


def test_an_imagined_easy_player_picks_the_easy_levels_bee() -> None:
    """`batch.heuristic_slots`, how the expert imagines an easy (or medium) bee, picks exactly
    the bee `heuristic.choose_bee` picks from the same view, at every turn and table size."""
    rng = random.Random(29)
    checked = 0
    for players in (2, 3, 4, 6, 8):
        for _ in range(3):
            order = list(_interleaved(players))
            rng.shuffle(order)
            state = _started(players, order)
            while state.phase == "picking":
                for seat in range(1, players + 1):
                    view = view_for(state, seat)
                    cards, *table = _one_game(view)
                    slot = batch.heuristic_slots(cards, *table)[0, 0]  # type: ignore[arg-type]
                    assert sorted(view.hand)[slot] == choose_bee(view)
                    checked += 1
                state = _advance(state, state.turn)
    assert checked == 3 * (2 + 3 + 4 + 6 + 8) * 10  # every seat, every turn of 15 games


def _seated(state: GameState, plays: list[str]) -> GameState:
    """`state` with seat s played by `plays[s - 1]`: "person" or a bee level."""
    seats = tuple(
        replace(
            s,
            info=replace(s.info, kind="person", player_id=f"p{s.number}", level=None)
            if how == "person"
            else replace(s.info, kind="bee", level=how),
        )
        for s, how in zip(state.seats, plays, strict=True)
    )
    return replace(state, seats=seats)


@pytest.mark.parametrize(
    ("players", "turns"), [(4, 0), (5, 4), pytest.param(6, 0, marks=pytest.mark.slow), (8, 5)]
)
def test_the_expert_imagines_each_seat_as_its_public_level_plays(players: int, turns: int) -> None:
    """Who plays each seat is public (`BeeView.plays`): the expert at every table size imagines an
    easy bee picking as the easy level does, and anyone else (a person, a medium, hard or expert
    bee) by its model. Seats of people give the same decision as a view that names nobody; easy
    bees change the estimates; and a table of easy bees stays blind to their hands and
    deterministic."""
    state = _advance(_started(players, _interleaved(players)), turns)
    seed = bee_decision_seed(SERVER_SEED, "g", 1, turns + 1, "pick")
    small = 300_000
    people = _seated(state, ["expert"] + ["person"] * (players - 1))
    nobody = replace(view_for(people, 1), plays=())
    assert view_for(people, 1).plays == ("expert", *["person"] * (players - 1))
    assert expert.analyse(view_for(people, 1), seed, work=small) == expert.analyse(
        nobody, seed, work=small
    )
    hard = _seated(state, (["expert"] + ["medium", "hard", "expert", "person"] * players)[:players])
    assert expert.analyse(view_for(hard, 1), seed, work=small) == expert.analyse(
        nobody, seed, work=small
    )
    easy = _seated(state, ["expert"] + ["easy"] * (players - 1))
    mixed = _seated(state, (["expert"] + ["easy", "medium"] * players)[:players])
    analysis = expert.analyse(view_for(easy, 1), seed, work=small)
    assert analysis.pick in state.seat(1).hand
    assert analysis.estimates != expert.analyse(nobody, seed, work=small).estimates
    assert expert.analyse(view_for(mixed, 1), seed, work=small).estimates not in (
        analysis.estimates,
        expert.analyse(nobody, seed, work=small).estimates,
    )
    for first, second in pairwise(range(2, players + 1)):
        swapped = view_for(_swap_hands(easy, first, second), 1)
        assert swapped == view_for(easy, 1)
        assert expert.analyse(swapped, seed, work=small) == analysis
