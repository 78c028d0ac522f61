"""Each caller's analyses are bounded (`service.usecases.budget`, `Exports._admit`): a token
bucket per player and per client address, spent only for expert decisions made (an answer
already kept is free), refused with `TooManyAnalyses` before anything is spent or done, and
never before the game's own refusals (a running game is 409 whatever the budget holds)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from service.bootstrap import Swarm
from service.domain import analysis
from service.domain.rules import expert
from service.domain.rules.errors import GameNotOver, SeatNotPlaying
from service.usecases import exports
from service.usecases.budget import Budget
from service.usecases.errors import Busy
from service.usecases.exports import TooManyAnalyses
from service.usecases.identity import Player
from tests.in_memory import play_to_the_end, swarm_in_memory


async def _solo_game(swarm: Swarm, player: Player, *, end: bool = True) -> str:
    """A solo game of 3 seats for `player` (seat 1), played to its end unless `end` is False."""
    view = (await swarm.tables.create_solo_table(player, 3)).table
    game_id = (await swarm.repository.table(view.table_id)).games[-1]
    if end:
        await play_to_the_end(swarm, game_id, [player])
    return game_id


class Ticks:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_refills_evenly_up_to_what_it_holds_at_most() -> None:
    ticks = Ticks()
    budget = Budget(per_hour=360, burst=20, clock=ticks)  # one every 10 s
    assert budget.held("a") == 20 and budget.wait("a", 20) == 0
    budget.take("a", 18)
    assert budget.held("a") == 2
    assert budget.wait("a", 5) == pytest.approx(30.0)  # 3 more, one every 10 s
    assert budget.held("b") == 20  # another caller's is its own
    ticks.now += 30
    assert budget.wait("a", 5) == 0
    ticks.now += 10_000
    assert budget.held("a") == 20  # never more than it holds at most
    budget.take("a", 10)
    budget.give_back("a", 4)
    assert budget.held("a") == 14
    budget.give_back("a", 100)
    assert budget.held("a") == 20


def test_no_bound_at_zero_and_the_buckets_held_are_bounded() -> None:
    ticks = Ticks()
    off = Budget(per_hour=0, burst=0, clock=ticks)
    assert not off.bounded and off.wait("a", 1_000) == 0
    budget = Budget(per_hour=3600, burst=10, max_keys=3, clock=ticks)
    for key in "abcd":
        budget.take(key, 10)
    assert len(budget._buckets) == 3
    assert budget.held("a") == 10  # the least recently used went first: full again
    assert budget.held("d") == 0


async def test_a_player_s_decisions_are_bounded_and_kept_answers_are_free(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(expert, "WORK", 20_000)  # the same code path, fast
    swarm = swarm_in_memory(analyses_per_hour=60)  # 10 in hand at most, one a minute
    ada, _ = await swarm.identity.create_guest("Ada")
    game_id = await _solo_game(swarm, ada, end=False)
    with pytest.raises(GameNotOver):
        await swarm.exports.analyse_turn(game_id, 1, 1, ada, "10.0.0.1")
    assert swarm.exports.players.held(ada.player_id) == 10  # a refusal spends nothing
    await play_to_the_end(swarm, game_id, [ada])

    review = await swarm.exports.analyse_game(game_id, 1, ada, "10.0.0.1")
    assert len(review.turns) == 10
    assert swarm.exports.players.held(ada.player_id) == pytest.approx(0, abs=0.1)
    # asked again, or a turn of it: kept, free, never refused
    assert await swarm.exports.analyse_game(game_id, 1, ada, "10.0.0.1") == review
    turn = await swarm.exports.analyse_turn(game_id, 1, 4, ada, "10.0.0.1")
    assert turn.pick == review.turns[3].pick

    with pytest.raises(TooManyAnalyses) as refused:
        await swarm.exports.analyse_turn(game_id, 2, 4, ada, "10.0.0.1")
    assert 50 <= refused.value.retry_after <= 60  # one decision: a minute's refill
    assert "this player" in str(refused.value).lower()
    with pytest.raises(TooManyAnalyses):
        await swarm.exports.analyse_game(game_id, 2, ada, "10.0.0.1")
    assert (game_id, 2, 4) not in swarm.exports._analyses  # nothing was done
    assert swarm.exports._analysing == 0

    # another player, at the same address, is not refused
    bo, _ = await swarm.identity.create_guest("Bo")
    other = await _solo_game(swarm, bo)
    assert (await swarm.exports.analyse_turn(other, 1, 1, bo, "10.0.0.1")).turn == 1
    # and a game still running is 409 for the exhausted caller, as for anyone
    again = await _solo_game(swarm, ada, end=False)
    with pytest.raises(GameNotOver):
        await swarm.exports.analyse_turn(again, 1, 1, ada, "10.0.0.1")


async def test_a_client_address_has_a_budget_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guests made at one address share its budget: one player's worth here (ten by default)."""
    monkeypatch.setattr(expert, "WORK", 20_000)
    monkeypatch.setattr(exports, "ADDRESS_PLAYERS", 1)
    swarm = swarm_in_memory(analyses_per_hour=60)
    games = {}
    for name in ("Ada", "Bo"):
        player, _ = await swarm.identity.create_guest(name)
        games[name] = (player, await _solo_game(swarm, player))
    ada, ada_game = games["Ada"]
    bo, bo_game = games["Bo"]
    await swarm.exports.analyse_game(ada_game, 1, ada, "10.0.0.1")
    with pytest.raises(TooManyAnalyses) as refused:
        await swarm.exports.analyse_turn(bo_game, 1, 1, bo, "10.0.0.1")
    assert "client address" in str(refused.value)
    assert swarm.exports.players.held(bo.player_id) == 10  # nothing spent of Bo's either
    assert (await swarm.exports.analyse_turn(bo_game, 1, 1, bo, "10.0.0.2")).turn == 1
    # the server's own analyses (no caller) are not charged
    assert (await swarm.exports.analyse_turn(bo_game, 2, 1)).seat == 2


async def test_a_caller_who_goes_away_mid_analysis_frees_nothing_early(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The request cancelled while the worker thread searches: the place stays taken until the
    thread ends (else ask-and-hang-up would run any number of searches at once) and the
    decisions stay spent (else it would cost nothing); a failed analysis gives them back."""
    monkeypatch.setattr(expert, "WORK", 20_000)
    swarm = swarm_in_memory(analyses_per_hour=60)
    ada, _ = await swarm.identity.create_guest("Ada")
    game_id = await _solo_game(swarm, ada)
    searching, finish = threading.Event(), threading.Event()
    real = analysis.analyse_turn

    def slow(*args: Any) -> Any:
        searching.set()
        finish.wait(10)
        return real(*args)

    monkeypatch.setattr(exports, "analyse_turn", slow)
    asked = asyncio.create_task(swarm.exports.analyse_turn(game_id, 1, 2, ada, "10.0.0.1"))
    await asyncio.to_thread(searching.wait, 10)
    asked.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asked
    assert swarm.exports._analysing == 1  # still searching: still in its place
    with pytest.raises(Busy):
        await swarm.exports.analyse_turn(game_id, 1, 3, ada, "10.0.0.1")
    finish.set()
    for _ in range(500):
        if swarm.exports._analysing == 0:
            break
        await asyncio.sleep(0.01)
    assert swarm.exports._analysing == 0
    assert swarm.exports.players.held(ada.player_id) == pytest.approx(9, abs=0.1)

    monkeypatch.setattr(exports, "analyse_turn", real)
    with pytest.raises(SeatNotPlaying):  # seat 4 of 3: refused before any search
        await swarm.exports.analyse_turn(game_id, 4, 1, ada, "10.0.0.1")
    assert swarm.exports.players.held(ada.player_id) == pytest.approx(9, abs=0.1)
    assert swarm.exports._analysing == 0
