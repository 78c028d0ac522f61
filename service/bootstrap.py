"""The composition root of the use cases: one `Swarm` per process, built from the store's ports
(`postgres_ports(pool)` in the service, `memory_ports()` in the fast tests), the clock, the
source of server seeds and the wake-ups. The HTTP app builds it in its lifespan
(`service.api.app`); tests build it with a fake clock or fixed seeds."""

from __future__ import annotations

from dataclasses import dataclass

from argon2 import PasswordHasher

from service.store.port import Ports
from service.store.wakeups import Wakeups
from service.usecases.accounts import Accounts
from service.usecases.clock import TurnClock
from service.usecases.context import (
    Clock,
    Context,
    ServerSeeds,
    secure_server_seed,
    system_clock,
)
from service.usecases.deals import Deals
from service.usecases.exports import Exports
from service.usecases.history import History
from service.usecases.identity import Identity
from service.usecases.money import Money
from service.usecases.my_games import MyGamesQuery
from service.usecases.play import Play
from service.usecases.play_now import PlayNow
from service.usecases.profiles import Profiles
from service.usecases.repository import Repository
from service.usecases.retry import StreamTurns
from service.usecases.streams import Streams
from service.usecases.tables import Tables
from service.usecases.watching import Watching


@dataclass(frozen=True)
class Swarm:
    ctx: Context
    repository: Repository
    identity: Identity
    accounts: Accounts
    profiles: Profiles
    tables: Tables
    play: Play
    turn_clock: TurnClock
    money: Money
    streams: Streams
    exports: Exports
    history: History
    watching: Watching
    my_games: MyGamesQuery
    play_now: PlayNow


def bootstrap(
    ports: Ports,
    *,
    clock: Clock = system_clock,
    server_seeds: ServerSeeds = secure_server_seed,
    wakeups: Wakeups | None = None,
    hasher: PasswordHasher | None = None,
    guests_per_hour: int = 30,
    accounts_per_hour: int = 5,
    hold_expiry: float = 60.0,
    analyses_per_hour: int = 240,
) -> Swarm:
    ctx = Context(
        ports=ports,
        clock=clock,
        server_seeds=server_seeds,
        wakeups=wakeups,
        guests_per_hour=guests_per_hour,
        accounts_per_hour=accounts_per_hour,
        hold_expiry=hold_expiry,
        analyses_per_hour=analyses_per_hour,
    )
    repository = Repository(ctx)
    turns = StreamTurns()  # one per process: moves of one stream take turns here
    money = Money(ctx, repository, turns)
    deals = Deals(ctx, money)
    play = Play(ctx, repository, deals, turns)
    watching = Watching(ctx, repository)
    tables = Tables(ctx, repository, deals, money, turns)
    return Swarm(
        ctx=ctx,
        repository=repository,
        identity=Identity(ctx),
        accounts=Accounts(ctx, hasher=hasher),
        profiles=Profiles(ctx),
        tables=tables,
        play=play,
        turn_clock=TurnClock(ctx, play),
        money=money,
        streams=Streams(ctx, repository, watching),
        exports=Exports(ctx, repository),
        history=History(ctx, repository),
        watching=watching,
        my_games=MyGamesQuery(ctx, repository),
        play_now=PlayNow(ctx, repository, tables, turns),
    )
