"""Who is who through the use cases (`identity`, `accounts`, `watching`, `profiles`) on the
in-memory store: guests and their limit per address, registering (a guest keeps their id),
names compared by key, logging in with failures counted, logging out, a revoked token refused
inside a move's own append, stream tickets, profiles."""

from __future__ import annotations

import uuid

import pytest

from service.api.moves import Confirm, person_move
from service.domain.ledger import SIGN_UP_COINS
from service.store.memory import InMemoryAccessTokens
from service.usecases.accounts import (
    MAX_FAILURES,
    AlreadyRegistered,
    InvalidCredentials,
    NameTaken,
    TooManyAttempts,
)
from service.usecases.errors import Unauthorized
from service.usecases.identity import TooManySignUps, token_hash
from service.usecases.watching import Viewer, revocation_channel
from tests.in_memory import FakeClock, swarm_in_memory


async def test_guests_are_limited_per_address_and_hour() -> None:
    clock = FakeClock()
    swarm = swarm_in_memory(clock, guests_per_hour=2)
    for name in ("Ada", "Bo"):
        player, token = await swarm.identity.create_guest(name, "10.0.0.1")
        assert await swarm.identity.authenticate(token) == player
    with pytest.raises(TooManySignUps) as refused:
        await swarm.identity.create_guest("Cy", "10.0.0.1")
    assert refused.value.retry_after == 3600
    await swarm.identity.create_guest("Cy", "10.0.0.2")  # another address
    clock.advance(3601)
    await swarm.identity.create_guest("Cy", "10.0.0.1")  # an hour on


async def test_a_guest_registers_logs_in_and_out() -> None:
    swarm = swarm_in_memory()
    guest, guest_token = await swarm.identity.create_guest("Ada")
    name = f"Ada{uuid.uuid4().hex[:6]}"
    session = await swarm.accounts.register(name, "long enough", guest)
    assert session.player.player_id == guest.player_id and session.player.registered
    me = await swarm.profiles.me(session.player)
    assert (me.balance, me.held, me.name) == (SIGN_UP_COINS, 0, name)
    with pytest.raises(AlreadyRegistered):
        await swarm.accounts.register(f"Other{uuid.uuid4().hex[:6]}", "long enough", guest)
    with pytest.raises(NameTaken):  # the same name by its key: case and look-alikes
        await swarm.accounts.register(name.upper(), "long enough", None)
    # The guest's old token now stands for the account.
    assert (await swarm.identity.authenticate(guest_token)).registered

    logged_in = await swarm.accounts.login(name.lower(), "long enough", "10.0.0.1")
    assert logged_in.player.player_id == guest.player_id
    await swarm.accounts.logout(logged_in.token)
    with pytest.raises(Unauthorized):
        await swarm.identity.authenticate(logged_in.token)
    assert (await swarm.identity.authenticate(session.token)).player_id == guest.player_id


async def test_failed_logins_are_slowed_per_name() -> None:
    swarm = swarm_in_memory()
    name = f"Bo{uuid.uuid4().hex[:6]}"
    await swarm.accounts.register(name, "long enough", None)
    for _ in range(MAX_FAILURES):
        with pytest.raises(InvalidCredentials):
            await swarm.accounts.login(name, "wrong password", "10.0.0.9")
    with pytest.raises(TooManyAttempts):  # even with the right password, from anywhere
        await swarm.accounts.login(name, "long enough", "10.0.0.8")
    with pytest.raises(InvalidCredentials):  # an unknown name is refused the same way
        await swarm.accounts.login("Nobody", "long enough", "10.0.0.7")


async def test_a_revoked_token_is_refused_inside_the_moves_append() -> None:
    swarm = swarm_in_memory()
    ada, token = await swarm.identity.create_guest("Ada")
    view = (await swarm.tables.create_solo_table(ada, 2)).table
    game = await swarm.repository.game((await swarm.repository.table(view.table_id)).games[0])
    assert swarm.identity.check(token) is None  # not seen yet: the token is checked on its own
    await swarm.identity.authenticate(token)
    check = swarm.identity.check(token)
    assert check is not None  # this instance has seen the token: its check rides in the append
    await swarm.accounts.logout(token)
    move = Confirm(bee=game.seat(1).hand[0], move_id="m1")
    with pytest.raises(Unauthorized):
        await swarm.play.submit_move(ada, game.game_id, person_move(move), check=check)
    assert (await swarm.repository.game(game.game_id)).version == game.version
    assert swarm.identity.check(token) is None  # forgotten


async def test_a_stream_ticket_works_until_its_token_is_revoked() -> None:
    swarm = swarm_in_memory()
    ada, token = await swarm.identity.create_guest("Ada")
    bo, _ = await swarm.identity.create_guest("Bo")
    table = (await swarm.tables.create_table(ada, 2, 0, None)).table
    viewer = Viewer(player=ada, token_hash=token_hash(token))
    issued = await swarm.watching.issue_ticket(viewer, "table", table.table_id)
    assert await swarm.watching.redeem(issued.ticket, "table", table.table_id) == viewer
    with pytest.raises(Unauthorized):
        await swarm.watching.redeem(issued.ticket, "game", table.table_id)
    assert await swarm.watching.still_valid(viewer)
    await swarm.accounts.logout(token)
    await swarm.watching.token_revoked(viewer.token_hash)
    tokens = swarm.ctx.ports.tokens
    assert isinstance(tokens, InMemoryAccessTokens)
    assert tokens.tables.announced == [revocation_channel(viewer.token_hash)]
    assert not await swarm.watching.still_valid(viewer)
    with pytest.raises(Unauthorized):
        await swarm.watching.redeem(issued.ticket, "table", table.table_id)
    public = await swarm.profiles.player(bo.player_id)  # a guest has a public name
    assert (public.name, public.registered, public.stats.games_played) == ("Bo", False, 0)
