"""What every use case is given: the store's ports (service/store/port.py: the event log, the
deal secrets, timers, the outbox and holds, credentials, the read models), the clock, the
source of server seeds and the wake-ups of stream followers. Built once, in the composition
root (`service.bootstrap`), on PostgreSQL in the service or in memory in the fast tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from service.domain import fairness
from service.store.port import DealSecrets, EventLog, Followers, Ports

Clock = Callable[[], datetime]
# The secret seed a newly prepared game will be dealt from, given that game's id. The service's
# comes from the operating system's CSPRNG; a test may give a fixed or searched-for one.
ServerSeeds = Callable[[str], bytes]


def system_clock() -> datetime:
    return datetime.now(UTC)


def secure_server_seed(game_id: str) -> bytes:
    """A fresh 32-byte server seed per game, from the operating system's CSPRNG."""
    return fairness.new_server_seed()


@dataclass(frozen=True)
class Context:
    ports: Ports
    clock: Clock = system_clock
    server_seeds: ServerSeeds = secure_server_seed
    wakeups: Followers | None = None
    # New identities per client address in any hour (0: no limit): Settings.guests_per_hour
    # and accounts_per_hour, so sign-up grants cannot be farmed from one address.
    guests_per_hour: int = 30
    accounts_per_hour: int = 5
    # Seconds after which a buy-in held by a sit-down that never finished goes back
    # (Settings.hold_expiry; `Money.expire_holds`).
    hold_expiry: float = 60.0
    # Expert decisions a player may have made for them in an hour on one instance (analyseTurn,
    # analyseGame; kept answers are free); 0: no bound (Settings.analyses_per_hour, `Exports`).
    analyses_per_hour: int = 240

    @property
    def store(self) -> EventLog:
        """The event log."""
        return self.ports.log

    @property
    def secrets(self) -> DealSecrets:
        """Each prepared game's server seed, secret until the game ends."""
        return self.ports.secrets


def stream(kind: str, ident: str) -> str:
    """The name of a stream: `game-<id>`, `table-<id>`, `wallet-<id>`, `player-<id>`."""
    return f"{kind}-{ident}"
