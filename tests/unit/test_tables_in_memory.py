"""Tables through their use cases (`service.usecases.tables`) on the in-memory store: open, join,
start, fill with bees, leave, play again, the lobby and listMyGames, and a whole game's end
with its reveal, pot and rewards. The fast tier of what tests/e2e checks over HTTP."""

from __future__ import annotations

from datetime import timedelta

import pytest

from service.domain.ledger import SIGN_UP_COINS
from service.domain.rules.events import ClockSettings
from service.domain.tables import GameInProgress, NotHost
from service.usecases.errors import Forbidden
from tests.in_memory import account, play_to_the_end, swarm_in_memory

CLOCK = ClockSettings(turn_seconds=600, choice_seconds=600)


async def test_a_solo_table_deals_at_once_plays_again_and_closes() -> None:
    swarm = swarm_in_memory()
    ada, _ = await swarm.identity.create_guest("Ada")
    view = (await swarm.tables.create_solo_table(ada, 4)).table
    table = await swarm.repository.table(view.table_id)
    assert table.mode == "solo" and len(table.games) == 1 and table.status == "playing"
    first = await swarm.repository.game(table.games[0])
    assert first.phase == "picking" and [s.is_bee for s in first.seats] == [False, True, True, True]
    [mine] = await swarm.my_games.list(ada)
    assert mine.game is not None
    assert (mine.table.table_id, mine.game.game_id, mine.your_move) == (
        view.table_id,
        first.game_id,
        True,
    )
    assert (
        await swarm.tables.list_tables(stake="any", has_free_seat=False, limit=10, offset=0) == []
    )

    await play_to_the_end(swarm, first.game_id, [ada])
    ended = await swarm.repository.game(first.game_id)
    assert ended.phase == "ended" and ended.server_seed is not None  # the deal revealed
    assert (await swarm.exports.verify_game(first.game_id)).ok  # the audit, on this store
    between = await swarm.repository.table(view.table_id)
    assert between.status == "between_games" and between.next_game is not None

    await swarm.tables.play_again(ada, view.table_id, "ab" * 8)
    again = await swarm.repository.table(view.table_id)
    assert len(again.games) == 2 and again.games[1] == between.next_game
    await swarm.tables.leave_table(ada, view.table_id)
    assert (await swarm.repository.table(view.table_id)).closed
    assert await swarm.my_games.list(ada) == []
    with pytest.raises(Forbidden):
        await swarm.tables.get_table(ada, view.table_id)


async def test_an_online_table_fills_deals_loses_a_player_and_fills_with_bees() -> None:
    swarm = swarm_in_memory()
    host, _ = await swarm.identity.create_guest("Host")
    bo, _ = await swarm.identity.create_guest("Bo")
    cy, _ = await swarm.identity.create_guest("Cy")
    view = (await swarm.tables.create_table(host, 3, 0, CLOCK)).table
    [listed] = await swarm.tables.list_tables(stake="free", has_free_seat=True, limit=10, offset=0)
    assert (
        listed.listing.table_id,
        listed.listing.host_name,
        listed.listing.seats_taken,
        listed.listing.people,
    ) == (
        view.table_id,
        "Host",
        1,
        1,
    )
    assert (
        await swarm.tables.list_tables(stake="buy_in", has_free_seat=False, limit=9, offset=0) == []
    )

    await swarm.tables.join_table(bo, view.table_id, None)
    with pytest.raises(NotHost):
        await swarm.tables.start_game(bo, view.table_id, None)
    await swarm.tables.start_game(host, view.table_id, None)  # two people: the host starts
    table = await swarm.repository.table(view.table_id)
    assert table.status == "playing" and len(table.games) == 1
    with pytest.raises(GameInProgress):
        await swarm.tables.join_table(cy, view.table_id, None)
    [entry] = await swarm.tables.list_tables(stake="any", has_free_seat=False, limit=10, offset=0)
    assert (entry.listing.status, entry.listing.people) == ("playing", 2)
    assert {t.table.table_id for t in await swarm.my_games.list(bo)} == {view.table_id}

    # Bo leaves mid-game: the host is the last person standing, and wins.
    await swarm.tables.leave_table(bo, view.table_id)
    game = await swarm.repository.game(table.games[0])
    assert game.phase == "ended" and game.end_reason == "last_person_standing"
    assert await swarm.my_games.list(bo) == []

    # Between games, Cy sits down; play again deals the two of them the next game.
    await swarm.tables.join_table(cy, view.table_id, None)
    await swarm.tables.play_again(host, view.table_id, None)
    table = await swarm.repository.table(view.table_id)
    second = await swarm.repository.game(table.games[-1])
    assert len(table.games) == 2 and second.phase == "picking"
    assert [s.info.player_id for s in second.seats] == [host.player_id, cy.player_id]

    # Another table: the host fills the seats left with bees, and the game is dealt.
    other = (await swarm.tables.create_table(host, 3, 0, None)).table
    await swarm.tables.join_table(bo, other.table_id, None)
    await swarm.tables.fill_with_bees(host, other.table_id, None, "strong")
    filled = await swarm.repository.table(other.table_id)
    game = await swarm.repository.game(filled.games[0])
    assert [(s.info.kind, s.info.level) for s in game.seats] == [
        ("person", None),
        ("person", None),
        ("bee", "strong"),
    ]
    open_seats = await swarm.tables.list_tables(stake="any", has_free_seat=True, limit=10, offset=0)
    assert [t.listing.table_id for t in open_seats] == [view.table_id]  # 2 of 3 seats taken there
    with pytest.raises(GameInProgress):
        await swarm.tables.join_table(cy, other.table_id, None)


async def test_a_buy_in_game_ends_with_its_reveal_pot_and_rewards() -> None:
    swarm = swarm_in_memory()
    ann, ben = await account(swarm, "Ann"), await account(swarm, "Ben")
    view = (await swarm.tables.create_table(ann, 2, 100, CLOCK)).table
    assert (await swarm.repository.wallet(ann.player_id)).held == 100
    await swarm.tables.join_table(ben, view.table_id, None)  # full: dealt, stakes in the pot
    table = await swarm.repository.table(view.table_id)
    assert sum(s.amount for s in table.pot) == 200
    for person in (ann, ben):
        wallet = await swarm.repository.wallet(person.player_id)
        assert (wallet.balance, wallet.held) == (SIGN_UP_COINS - 100, 0)  # committed, delivered

    game_id = table.games[0]
    await play_to_the_end(swarm, game_id, [ann, ben])
    game = await swarm.repository.game(game_id)
    assert game.phase == "ended" and game.end_reason == "finished"
    report = await swarm.exports.verify_game(game_id)
    assert report.ok, report.failure
    after = await swarm.repository.table(view.table_id)
    assert after.pot == () and after.status == "between_games"
    winners = {game.seat(n).info.player_id for n in game.winners}

    # The pot went to the winners (split, remainder to the first), rewards to both: each
    # delivered to its wallet and its record by the move that ended the game.
    profiles = {p.player_id: await swarm.profiles.me(p) for p in (ann, ben)}
    paid = {pid: p.balance - (SIGN_UP_COINS - 100) for pid, p in profiles.items()}
    for pid, profile in profiles.items():
        assert profile.stats.games_played == 1 and profile.stats.games_won == int(pid in winners)
        assert profile.stats.xp > 0 and "first_game" in profile.stats.badges
    rewards = {pid: (await swarm.repository.wallet(pid)).rewarded for pid in profiles}
    assert sum(paid[pid] - rewards[pid] for pid in profiles) == 200
    assert not await swarm.ctx.ports.outbox.any_due(timedelta(0))  # nothing left in flight

    board = await swarm.profiles.leaderboard("wins", 10, 0)
    assert {e.player_id for e in board} == set(profiles)
    assert board[0].player_id in winners
    public = await swarm.profiles.player(ben.player_id)
    assert public.registered and public.stats.games_played == 1
