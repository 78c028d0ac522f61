"""Every port on PostgreSQL (`port.Ports`): the store the service runs on."""

from __future__ import annotations

from service.store.credentials import (
    StoredAccessTokens,
    StoredAccounts,
    StoredLoginAttempts,
    StoredSignUps,
    StoredStreamTickets,
)
from service.store.events import EventStore
from service.store.outbox import StoredOutbox, StoredStakeHolds
from service.store.pool import Pool
from service.store.port import Ports
from service.store.reads import StoredLobby, StoredStandings, StoredTableMembership
from service.store.secrets import StoredDealSecrets
from service.store.timers import StoredTimers


def postgres_ports(pool: Pool, log: EventStore | None = None) -> Ports:
    """The ports on `pool`; `log`: an event store to share (its head cache), else a new one."""
    return Ports(
        log=log or EventStore(pool),
        secrets=StoredDealSecrets(pool),
        timers=StoredTimers(pool),
        outbox=StoredOutbox(pool),
        holds=StoredStakeHolds(pool),
        accounts=StoredAccounts(pool),
        logins=StoredLoginAttempts(pool),
        sign_ups=StoredSignUps(pool),
        tokens=StoredAccessTokens(pool),
        tickets=StoredStreamTickets(pool),
        lobby=StoredLobby(pool),
        members=StoredTableMembership(pool),
        standings=StoredStandings(pool),
    )
