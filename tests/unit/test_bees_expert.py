"""The expert bee: blind to the hands it must not see, deterministic given its seed, legal through
whole games, and sensible where the answer is plain. Its strength is a benchmark (`make
bench-bees`), not a test."""

from __future__ import annotations

from itertools import pairwise

import pytest

from service.domain.rules import expert
from service.domain.rules.bees import (
    BeeView,
    bee_commands,
    bee_decision_seed,
    choose,
    decision_seeds,
    view_for,
)
from service.domain.rules.cards import pile_stings, total_stings
from service.domain.rules.commands import ConfirmPick
from service.domain.rules.engine import decide, fold
from tests.unit.test_bees_strong import SERVER_SEED, _advance, _interleaved, _started, _swap_hands

SMALL = 20_000  # a budget that keeps these tests fast; the code path is the same as WORK's


@pytest.mark.parametrize(("players", "turns"), [(3, 0), (4, 0), (4, 3), (5, 6), (8, 2), (8, 8)])
def test_the_expert_bee_decides_the_same_whatever_the_other_hands_hold(
    players: int, turns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(expert, "WORK", SMALL)
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
    decided = choose(view, "expert", seed)
    assert decided in state.seat(seat).hand
    analysis = expert.analyse(view, seed)
    for variant in variants:
        assert view_for(variant, seat) == view
        assert choose(view_for(variant, seat), "expert", seed) == decided
        assert expert.analyse(view_for(variant, seat), seed) == analysis
        commands = bee_commands(
            variant, levels={seat: "expert"}, seed_for=decision_seeds(SERVER_SEED, "g")
        )
        assert commands[0] == ConfirmPick(seat=seat, bee=decided)


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
    assert all(e.samples >= expert.MIN_SAMPLES and e.stings >= 0 for e in analysis.estimates)
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
    assert expert.analyse(view, b"seed", work=SMALL).pick == 23


@pytest.mark.parametrize("players", [2, 3, 8])
def test_whole_games_of_expert_bees_end_with_every_pick_legal(
    players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A smoke test of correctness (not strength): the expert level, on a small budget, on
    every seat through whole games."""
    monkeypatch.setattr(expert, "WORK", 4_000)
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
