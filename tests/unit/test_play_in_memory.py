"""A person's moves through the real use case (`service.usecases.play.Play`) on the in-memory
store (service/store/memory.py, `memory_ports`): the fast tier of the use cases, no database.

The game is dealt straight into the log (two people and two heuristic bees, untimed), as the
deal's use case would write it; moves are then decided, appended, repeated, refused and raced
between two instances that share the log but not their caches."""

from __future__ import annotations

import random
import uuid
from typing import cast

import msgspec
import pytest

from service.api.moves import ChooseStem, Confirm, person_move
from service.domain import chain
from service.domain.bee_answers import decide_with_bees
from service.domain.rules.commands import StartGame
from service.domain.rules.engine import GameState, initial_state
from service.domain.rules.errors import AlreadyConfirmed, BeeNotInHand
from service.domain.rules.events import SeatInfo, encode_event, event_type
from service.domain.rules.simulate import shuffled_deck
from service.store.log import NewEvent, StreamAppend
from service.store.memory import memory_ports
from service.store.port import Ports
from service.store.rows import DealSecret
from service.usecases.context import Context
from service.usecases.deals import Deals
from service.usecases.identity import Player
from service.usecases.money import Money
from service.usecases.play import MoveIdReused, Play
from service.usecases.repository import Repository
from service.usecases.retry import StreamTurns

PEOPLE = {1: Player(player_id="p1", name="Ada"), 2: Player(player_id="p2", name="Bo")}


class Instance:
    """One service instance's use cases (its own caches and turns) on a shared log."""

    def __init__(self, ports: Ports) -> None:
        ctx = Context(ports=ports)
        self.repository = Repository(ctx)
        turns = StreamTurns()
        self.play = Play(
            ctx, self.repository, Deals(ctx, Money(ctx, self.repository, turns)), turns
        )
        self.reads: list[str] = []
        read = self.repository.game

        async def counted(game_id: str) -> GameState:
            self.reads.append(game_id)
            return await read(game_id)

        self.repository.game = counted  # type: ignore[method-assign]


async def deal(ports: Ports) -> str:
    game_id = str(uuid.uuid4())
    seed = random.Random(game_id).randbytes(32)
    seats = (
        SeatInfo(seat=1, name="Ada", kind="person", player_id="p1"),
        SeatInfo(seat=2, name="Bo", kind="person", player_id="p2"),
        SeatInfo(seat=3, name="Buzz", kind="bee", level="heuristic"),
        SeatInfo(seat=4, name="Bumble", kind="bee", level="heuristic"),
    )
    start = StartGame(
        game_id=game_id, table_id="t", seats=seats, deck_order=shuffled_deck(4, random.Random(7))
    )
    _, events = decide_with_bees(initial_state, start)
    await ports.log.append(
        StreamAppend(
            f"game-{game_id}",
            0,
            [NewEvent(event_type(e), encode_event(e)) for e in events],
            seal_keys={game_id: chain.seal_key(game_id, seed)},
        ),
        also=[DealSecret(game_id=game_id, server_seed=seed)],
    )
    return game_id


def confirm(move_id: str, bee: int) -> Confirm:
    return Confirm(move_id=move_id, bee=bee)


async def settle(instance: Instance, game_id: str) -> GameState:
    """Take stem 1 for any too-low bee a person must place, until the game waits for picks."""
    state = await instance.repository.game(game_id)
    while state.phase == "choosing":
        assert state.pending is not None
        move = ChooseStem(move_id=uuid.uuid4().hex, stem=1)
        await instance.play.submit_move(PEOPLE[state.pending.seat], game_id, person_move(move))
        state = await instance.repository.game(game_id)
    return state


@pytest.fixture
def ports() -> Ports:
    return memory_ports()


async def test_a_move_is_decided_appended_and_answered_once(ports: Ports) -> None:
    store, secrets = ports.log, ports.secrets
    game_id = await deal(ports)
    a = Instance(ports)
    dealt = await a.repository.game(game_id)
    bee = dealt.seat(1).hand[-1]
    view, replayed = await a.play.submit_move(PEOPLE[1], game_id, person_move(confirm("m1", bee)))
    assert view.confirmed == bee and view.you == 1 and not replayed
    version = await store.stream_version(f"game-{game_id}")
    assert version == dealt.version + 1

    again, replayed = await a.play.submit_move(PEOPLE[1], game_id, person_move(confirm("m1", bee)))
    assert replayed  # told apart: nothing was written this time
    same = msgspec.structs.replace(again, server_time=view.server_time)
    assert same == view  # the same answer (but the server's clock), nothing written
    assert await store.stream_version(f"game-{game_id}") == version
    with pytest.raises(MoveIdReused):
        await a.play.submit_move(
            PEOPLE[1], game_id, person_move(confirm("m1", dealt.seat(1).hand[0]))
        )
    with pytest.raises(BeeNotInHand):
        await a.play.submit_move(PEOPLE[2], game_id, person_move(confirm("m2", bee)))
    assert await store.stream_version(f"game-{game_id}") == version
    sealed = await store.verify_stream(f"game-{game_id}", seal_keys={})
    assert sealed.ok is False  # sealed: needs its key
    keys = {game_id: chain.seal_key(game_id, cast(bytes, await secrets.server_seed(game_id)))}
    assert (await store.verify_stream(f"game-{game_id}", seal_keys=keys)).ok
    assert (await store.verify_stream(f"game-{game_id}")).ok  # its key from its secret


async def test_a_stale_cache_never_decides_a_move(ports: Ports) -> None:
    store = ports.log
    game_id = await deal(ports)
    a, b = Instance(ports), Instance(ports)
    dealt = await a.repository.game(game_id)
    assert (await b.repository.game(game_id)) == dealt  # B's cache: the game as dealt
    a.reads.clear()
    b.reads.clear()

    await a.play.submit_move(PEOPLE[1], game_id, person_move(confirm("h1", dealt.seat(1).hand[0])))
    await a.play.submit_move(PEOPLE[2], game_id, person_move(confirm("g1", dealt.seat(2).hand[0])))
    assert a.reads == []  # decided on A's current cache, with no read at all
    turn_2 = await settle(a, game_id)
    assert turn_2.turn == 2 and turn_2.phase == "picking"

    # B's cache is the deal: the host's confirm there looks like turn 1's; the append refuses
    # that version, and it is decided again on one fresh read.
    view, _ = await b.play.submit_move(
        PEOPLE[1], game_id, person_move(confirm("h2", turn_2.seat(1).hand[0]))
    )
    assert b.reads == [game_id]
    assert view.turn == 2 and view.confirmed == turn_2.seat(1).hand[0]

    # A's cache is now behind: a second confirm looks valid there, and is refused on the
    # fresh game, as it must be.
    a.reads.clear()
    with pytest.raises(AlreadyConfirmed):
        await a.play.submit_move(
            PEOPLE[1], game_id, person_move(confirm("h3", turn_2.seat(1).hand[-1]))
        )
    assert a.reads == [game_id]

    recorded = await store.read_stream(f"game-{game_id}")
    confirms = [  # the people's picks (the bees' are appended with the move that set them off)
        str(e.metadata["command_id"]).rsplit(":", 1)[-1]
        for e in recorded
        if e.type == "pick_confirmed" and msgspec.json.decode(e.data)["seat"] in PEOPLE
    ]
    assert confirms == ["h1", "g1", "h2"]
