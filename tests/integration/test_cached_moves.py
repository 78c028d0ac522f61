"""A move is decided on the instance's cached game without reading the store when that cache is
current (service/usecases/play.py): two instances on one database, each with its own caches,
show that a cached state that fell behind (the other instance moved) never decides anything:
an acceptance on it fails at the append and is decided again on the fresh game, and a refusal
on it is checked again on the fresh game before it is answered."""

from __future__ import annotations

import uuid

import pytest

from service.api.moves import ChooseStem, Confirm, person_move
from service.bootstrap import Swarm, bootstrap
from service.domain.rules.engine import GameState
from service.domain.rules.errors import AlreadyConfirmed
from service.store.pool import Pool
from service.store.postgres import postgres_ports
from service.usecases.identity import Player


def _counting_reads(swarm: Swarm) -> list[str]:
    """Record every read of a game from the store by this instance."""
    reads: list[str] = []
    read = swarm.repository.game

    async def counted(game_id: str) -> GameState:
        reads.append(game_id)
        return await read(game_id)

    swarm.repository.game = counted  # type: ignore[method-assign]
    return reads


async def _settle(swarm: Swarm, people: dict[int, Player], game_id: str) -> GameState:
    """Take any stem a person must choose, until the game waits for picks."""
    state = await swarm.repository.game(game_id)
    while state.phase == "choosing":
        assert state.pending is not None
        chooser = people[state.pending.seat]
        move = ChooseStem(move_id=uuid.uuid4().hex, stem=1)
        await swarm.play.submit_move(chooser, game_id, person_move(move))
        state = await swarm.repository.game(game_id)
    return state


async def test_a_stale_cache_never_decides_a_move(pool: Pool) -> None:
    # Two instances: their own event stores (head caches), repositories (game caches) and turns.
    a, b = bootstrap(postgres_ports(pool)), bootstrap(postgres_ports(pool))
    host, _ = await a.identity.create_guest("Host")
    guest, _ = await a.identity.create_guest("Guest")
    table = (await a.tables.create_table(host, 2, 0, None)).table
    await a.tables.join_table(guest, table.table_id, None)  # A deals, and caches the game
    game_id = (await a.repository.table(table.table_id)).current_game
    assert game_id is not None
    people = {1: host, 2: guest}
    dealt = await b.repository.game(game_id)  # B's cache: the game as dealt
    assert dealt.phase == "picking" and dealt.turn == 1
    reads_a, reads_b = _counting_reads(a), _counting_reads(b)

    # A's cache is current: both confirms of turn 1 are decided on it, with no read at all.
    await a.play.submit_move(host, game_id, person_move(_confirm("h1", dealt.seat(1).hand[0])))
    await a.play.submit_move(guest, game_id, person_move(_confirm("g1", dealt.seat(2).hand[0])))
    assert reads_a == []
    turn_2 = await _settle(a, people, game_id)
    assert turn_2.turn == 2 and turn_2.phase == "picking"
    reads_a.clear()

    # B's cache is stale (the deal): there the host's confirm looks like turn 1's. The append
    # refuses that version, and it is decided again on one fresh read: turn 2's confirm.
    view, _ = await b.play.submit_move(
        host, game_id, person_move(_confirm("h2", turn_2.seat(1).hand[0]))
    )
    assert reads_b == [game_id]
    assert view.turn == 2 and view.confirmed == turn_2.seat(1).hand[0]

    # Now A's cache is stale (turn 2 before the host's confirm): a second confirm looks valid
    # there; on the fresh game it is refused for the rule, as it must be.
    with pytest.raises(AlreadyConfirmed):
        await a.play.submit_move(
            host, game_id, person_move(_confirm("h3", turn_2.seat(1).hand[-1]))
        )
    assert reads_a == [game_id]
    await a.play.submit_move(guest, game_id, person_move(_confirm("g2", turn_2.seat(2).hand[0])))
    assert reads_a == [game_id]  # current again after that read
    turn_3 = await _settle(a, people, game_id)
    assert turn_3.turn == 3 and turn_3.phase == "picking"

    # B's cache (turn 2, the host confirmed) refuses the host's next confirm (already
    # confirmed): a refusal decided on a cache is checked on a fresh read before it is
    # answered, and there it is turn 3's confirm, accepted.
    reads_b.clear()
    view, _ = await b.play.submit_move(
        host, game_id, person_move(_confirm("h4", turn_3.seat(1).hand[0]))
    )
    assert reads_b == [game_id]
    assert view.turn == 3 and view.confirmed == turn_3.seat(1).hand[0]

    # Every move is in the log once, the refused one not at all, and the chain verifies.
    recorded = await a.ctx.store.read_stream(f"game-{game_id}")
    confirms = [
        str(e.metadata.get("command_id")).rsplit(":", 1)[-1]
        for e in recorded
        if e.type == "pick_confirmed"
    ]
    assert confirms == ["h1", "g1", "h2", "g2", "h4"]
    assert (await a.ctx.store.verify_stream(f"game-{game_id}")).ok


def _confirm(move_id: str, bee: int) -> Confirm:
    return Confirm(move_id=move_id, bee=bee)
