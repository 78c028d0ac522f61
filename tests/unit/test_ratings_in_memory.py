"""Ratings through the use cases on the in-memory store (issue 43): a rated table's game
changes the rating of each person with an account, once, through the outbox that pays coins;
a casual table's does not; guests and bees are left out; and the log recomputes to the same
numbers, also after a delivery cut short and relayed twice."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from service.bootstrap import Swarm
from service.domain.ratings import NEW, RatingChanged
from service.domain.rules.events import ClockSettings
from service.domain.transfers import RateGame, TransferUnion
from service.usecases.identity import Player
from service.usecases.money import RELAY_AFTER, Money
from service.usecases.ratings import recompute, seat_ratings
from tests.in_memory import FakeClock, account, play_to_the_end, swarm_in_memory

CLOCK = ClockSettings(turn_seconds=600, choice_seconds=600)


async def changes(swarm: Swarm, player: Player) -> list[RatingChanged]:
    rows = await swarm.ctx.store.read_stream(f"player-{player.player_id}")
    decoder = msgspec.json.Decoder(RatingChanged)
    return [decoder.decode(r.data) for r in rows if r.type == "rating_changed"]


async def full_table(swarm: Swarm, people: list[Player], *, rated: bool, bees: bool = False) -> str:
    """A table of `people` (plus a bee when `bees`), full, so its first game is dealt."""
    host, *others = people
    seats = len(people) + (1 if bees else 0)
    table = (await swarm.tables.create_table(host, seats, 0, CLOCK, rated=rated)).table
    seen = None
    for person in others:
        seen = await swarm.tables.join_table(person, table.table_id, None)
    if bees:
        seen = await swarm.tables.fill_with_bees(host, table.table_id, None)
    assert seen is not None and seen.game is not None
    return seen.game.game_id


async def test_a_rated_game_changes_each_account_holders_rating_once() -> None:
    swarm = swarm_in_memory()
    ann, ben, cy = [await account(swarm, n) for n in ("Ann", "Ben", "Cy")]
    game_id = await full_table(swarm, [ann, ben, cy], rated=True)
    await play_to_the_end(swarm, game_id, [ann, ben, cy])
    game = await swarm.repository.game(game_id)
    by_stings = {s.info.player_id: s.stings for s in game.seats}
    for person in (ann, ben, cy):
        [change] = await changes(swarm, person)
        assert change.game_id == game_id and change.before == NEW
        assert {p.player_id for p in change.field} == {ann.player_id, ben.player_id, cy.player_id}
        fewer = sum(1 for s in set(by_stings.values()) if s < by_stings[person.player_id])
        assert change.place == fewer + 1
        record = await swarm.repository.player_record(person.player_id)
        assert record.rating == change.after and record.rating.games == 1
    made = [(await changes(swarm, p))[0] for p in (ann, ben, cy)]
    if len({c.place for c in made}) > 1:  # not everyone tied: the winners gain
        assert all(c.after.mu > NEW.mu for c in made if c.place == 1)
    check = await recompute(swarm.ctx, swarm.repository)
    assert (check.people, check.changes, check.games, check.mismatches) == (3, 3, 1, [])


async def test_a_casual_game_changes_no_rating() -> None:
    swarm = swarm_in_memory()
    ann, ben = await account(swarm, "Ann"), await account(swarm, "Ben")
    game_id = await full_table(swarm, [ann, ben], rated=False)
    await play_to_the_end(swarm, game_id, [ann, ben])
    assert await changes(swarm, ann) == [] and await changes(swarm, ben) == []
    assert (await swarm.repository.player_record(ann.player_id)).stats.games_played == 1


async def test_guests_and_bees_take_no_rating_and_give_none() -> None:
    swarm = swarm_in_memory()
    ann, ben = await account(swarm, "Ann"), await account(swarm, "Ben")
    guest, _ = await swarm.identity.create_guest("Gus")
    game_id = await full_table(swarm, [ann, ben, guest], rated=True, bees=True)
    await play_to_the_end(swarm, game_id, [ann, ben, guest])
    [change] = await changes(swarm, ann)
    assert {p.player_id for p in change.field} == {ann.player_id, ben.player_id}
    assert await changes(swarm, guest) == []
    # One person with an account among guests and bees: nobody to be rated against.
    solo = await full_table(swarm, [ann, guest], rated=True, bees=True)
    await play_to_the_end(swarm, solo, [ann, guest])
    assert len(await changes(swarm, ann)) == 1


async def test_a_rating_cut_short_is_relayed_once_and_recomputes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    swarm = swarm_in_memory(clock)
    ann, ben = await account(swarm, "Ann"), await account(swarm, "Ben")
    game_id = await full_table(swarm, [ann, ben], rated=True)
    deliver = Money._deliver
    failing: list[TransferUnion] = []

    async def cut_short(self: Money, transfer: TransferUnion) -> None:
        if isinstance(transfer, RateGame):
            failing.append(transfer)
            raise ConnectionError("the database went away")
        await deliver(self, transfer)

    monkeypatch.setattr(Money, "_deliver", cut_short)
    await play_to_the_end(swarm, game_id, [ann, ben])
    assert len(failing) == 2 and await changes(swarm, ann) == []
    game = await swarm.repository.game(game_id)
    shown = await seat_ratings(swarm.ctx, swarm.repository, game)
    assert shown is not None and [(r.seat, r.status) for r in shown] == [
        (1, "pending"),
        (2, "pending"),
    ]
    monkeypatch.setattr(Money, "_deliver", deliver)
    clock.advance(RELAY_AFTER.total_seconds())
    relayed = await asyncio.gather(swarm.money.relay_due(), swarm.money.relay_due())
    assert sorted(relayed) == [0, 2]
    for transfer in failing:  # delivered again (a crash before the outbox row's delete)
        await deliver(swarm.money, transfer)
    assert len(await changes(swarm, ann)) == 1 and len(await changes(swarm, ben)) == 1
    # Each change is found at the version its delivery produced, after later events too.
    await play_to_the_end(swarm, await full_table(swarm, [ann, ben], rated=True), [ann, ben])
    shown = await seat_ratings(swarm.ctx, swarm.repository, game)
    assert shown is not None
    for view, person in zip(shown, (ann, ben), strict=True):
        [change, _] = await changes(swarm, person)
        assert (view.status, view.before, view.after) == (
            "delivered",
            change.before.points,
            change.after.points,
        )
    check = await recompute(swarm.ctx, swarm.repository)
    assert (check.changes, check.mismatches) == (4, [])  # two games, two people


async def test_a_walk_over_rates_the_leaver_alone_so_two_accounts_farm_nothing() -> None:
    """Issue 43's review: Ann opens a rated table, Ben joins (the game is dealt) and leaves at
    once, again and again. Ann wins each game (and its XP), and her rating does not move;
    Ben's falls; the recomputation agrees."""
    swarm = swarm_in_memory()
    ann, ben = await account(swarm, "Ann"), await account(swarm, "Ben")
    for _ in range(5):
        game_id = await full_table(swarm, [ann, ben], rated=True)
        game = await swarm.repository.game(game_id)
        await swarm.tables.leave_table(ben, game.table_id)
        await swarm.tables.leave_table(ann, game.table_id)
        ended = await swarm.repository.game(game_id)
        assert ended.end_reason == "last_person_standing"
    assert await changes(swarm, ann) == []
    assert (await swarm.repository.player_record(ann.player_id)).rating == NEW
    assert (await swarm.repository.player_record(ann.player_id)).stats.games_won == 5
    lost = await changes(swarm, ben)
    assert len(lost) == 5 and lost[-1].after.points < NEW.points
    check = await recompute(swarm.ctx, swarm.repository)
    assert (check.people, check.changes, check.games, check.mismatches) == (1, 5, 5, [])
