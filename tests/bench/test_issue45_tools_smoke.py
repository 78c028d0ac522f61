"""Smoke tests of issue 45's measuring tools (docs/benchmarks.md): the head-to-head format, the
clairvoyance bound, the learned own-turn policy, the arena's anchor and the margin objectives.
Strength is theirs to measure, never asserted here."""

from __future__ import annotations

import random

import numpy as np
import pytest

from service.domain.rules import batch, expert, rollout, simulate
from service.domain.rules.bees import BeeView
from service.domain.rules.cards import total_stings
from service.domain.rules.engine import GameState
from service.domain.rules.simulate import bee_seats, play_game
from tests.bench import bees, calibrate, clairvoyant, duplicate, fit_policy, mcs, own_policy


def test_a_duplicate_deal_is_played_in_both_seatings_and_each_side_holds_every_hand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mcs, "PLAYOUTS", 2)
    deal = duplicate.play_deal("easy", "mcs", 7)
    assert len(deal["gaps"]) == 2
    assert all(abs(g) <= total_stings(4) for g in deal["gaps"])
    assert len(deal["cpu"]["easy"]) == len(deal["cpu"]["mcs"]) == 2 * 2 * 10  # 2 seats, 2 games
    summary = duplicate.summary("easy", "mcs", [deal])
    assert summary["games"] == 2 and 0 <= summary["a_games_share"] <= 1


def test_the_clairvoyant_search_deals_exactly_the_true_hands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(simulate, "view_for", clairvoyant._watching_view_for)
    dealt: list[np.ndarray] = []

    def record(*args: object) -> batch.Ints:
        got = clairvoyant._true_deal(*args)  # type: ignore[arg-type]
        dealt.append(got)
        return got

    monkeypatch.setattr(batch, "deal_hidden", record)
    monkeypatch.setattr(clairvoyant, "EXPERT", expert.EXPERT._replace(work=20_000))
    truth: list[list[list[int]]] = []

    def seat_1(view: object) -> int:
        state = clairvoyant._playing[0]
        truth.append([sorted(s.hand) for s in state.seats[1:]])
        return clairvoyant.clairvoyant(view, b"seed")  # type: ignore[arg-type]

    rng = random.Random(3)
    others = [lambda view: rng.choice(view.hand)] * 3
    play_game(bee_seats(4), [seat_1, *others], random.Random("clairvoyant-smoke"))
    assert dealt and truth
    # every imagined deal of the first decision is the other seats' true hands
    first = dealt[0]
    assert all((deal == np.array(truth[0])).all() for deal in first)


def test_the_learned_policy_finds_a_planted_preference() -> None:
    rng = np.random.default_rng(0)
    data = []
    for _ in range(400):
        seen = rng.normal(size=(5, batch.FEATURES))
        data.append((seen, int(np.argmax(seen[:, 2]))))  # the bee with the most of feature 2
    net = own_policy.fit_net(data[:300], hidden=4, steps=300)
    _, hits = own_policy.net_score(net, data[300:])
    assert hits > 0.8
    logit = fit_policy.fit(data[:300])
    assert int(np.argmax(np.abs(logit))) == 2


def test_the_oracle_is_told_exactly_the_bees_the_others_then_play(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(batch, "deal_hidden", clairvoyant._true_deal)
    monkeypatch.setattr(batch, "mcs_tables", clairvoyant._oracle_tables)
    monkeypatch.setattr(bees.Timed, "__call__", clairvoyant._watching_timed_call)
    monkeypatch.setattr(clairvoyant, "EXPERT", expert.EXPERT._replace(work=20_000))
    monkeypatch.setattr(clairvoyant, "_against", ["mcs"])
    monkeypatch.setattr(mcs, "PLAYOUTS", 3)
    monkeypatch.setitem(bees.SEEDED, "oracle", clairvoyant.oracle)
    told: list[dict[int, int]] = []
    real_search = batch.search

    def search(view: BeeView, seed: bytes, how: batch.Search) -> tuple[int, list[batch.Estimate]]:
        told.append(dict(clairvoyant._picks))
        return real_search(view, seed, how)

    monkeypatch.setattr(batch, "search", search)
    revealed: list[dict[int, int]] = []

    def watching(state: GameState, seat: int) -> BeeView:
        if seat == 1 and state.turn > 1:  # the last turn's picks are public now
            revealed.append({p.seat: p.bee for p in state.revealed if p.seat != 1})
        return clairvoyant._watching_view_for(state, seat)

    monkeypatch.setattr(simulate, "view_for", watching)
    bees.play_one("oracle", "mcs", 4, 5)
    # what the oracle was told on each turn is what the others then revealed
    assert len(told) == 10 and all(len(t) == 3 for t in told)  # a search every turn
    assert len(revealed) == 9 and told[:9] == revealed


def test_the_arena_anchor_spends_its_playouts_on_the_decision_not_on_each_bee(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 2 players, bees 1-24: 6 is stem 1's sixth bee (6 stings every time), 23 is safe.
    stems = ((1, 2, 3, 4, 5), (10,), (22,), (24,))
    seen = frozenset({1, 2, 3, 4, 5, 10, 22, 24})
    view = BeeView(seat=1, players=2, hand=(6, 23), stems=stems, seen=seen)
    flights: list[int] = []
    real_fly = rollout.fly_tops

    def counted(*args: object) -> None:
        flights.append(1)
        real_fly(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(mcs, "fly_tops", counted)
    assert mcs.choose_bee_mcs_total(view, b"seed") == 23
    # a hand of 2: min(100, 10 x 2!) = 20 playouts of 2 turns, where MCS(100) plays 2 x 100
    assert len(flights) == 20 * 2
    flights.clear()
    mcs.choose_bee_mcs(view, b"seed")
    assert len(flights) == 2 * 100 * 2


def test_the_margin_objectives_count_the_stings_every_seat_already_has() -> None:
    # 1 candidate, 2 imagined games, 3 seats; before this turn the seats had 0, 5 and 9 stings
    scores = np.array([[[4, 1, 0], [0, 0, 0]]])
    now = np.array([0, 5, 9])
    assert batch._margins(scores, now).tolist() == [[4 - 6, 0 - 5]]
    soft = batch._loss(batch.Search(work=1, objective="soft"), scores, now, np.zeros((1, 2)))
    assert soft[0].tolist() == pytest.approx([-1 / (1 + np.exp(-1)), -1 / (1 + np.exp(-2.5))])
    stings = batch._loss(batch.Search(work=1), scores, now, np.zeros((1, 2)))
    assert stings.tolist() == [[4.0, 0.0]]
    with pytest.raises(ValueError, match="no such objective"):
        batch._loss(batch.Search(work=1, objective="wins"), scores, now, np.zeros((1, 2)))


def test_the_calibration_reads_every_decision_of_seat_one_and_fits_a_temperature() -> None:
    picks = calibrate.collect("mcs-total", 1, 4, 0)
    assert [len(values) for values, _ in picks] == list(range(10, 1, -1))  # hands of 10 to 2
    assert all(0 <= slot < len(values) for values, slot in picks)
    fitted = calibrate.report(picks)["all"]
    assert isinstance(fitted, dict) and fitted["picks"] == 9
    assert fitted["temperature"] in calibrate.GRID
