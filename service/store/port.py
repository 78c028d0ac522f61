"""What the use cases need from the store, as ports: `EventLog` (the event log) and
`DealSecrets` (each prepared game's server seed, kept out of the log until the game ends).

Two implementations pass the same contract suite (`tests/store_contract.py`: versions,
conflicts, atomic multi-stream appends, idempotent commands, reads, the whole log in order, the
hash chain): `events.EventStore` on PostgreSQL, the one the service runs on, and
`memory.InMemoryEventStore`, for fast tests of what builds on the log. The types they share
(`StreamAppend`, `RecordedEvent`, the errors) are `events.py`'s.

`also=` and `guard=` are SQL statements committed with the events (projection rows, timers,
the token check): only PostgreSQL runs them, and the in-memory store refuses an append that
carries any rather than pretend.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from service.domain import chain
from service.store.events import LogCursor, RecordedEvent, StreamAppend

T = TypeVar("T")


class EventLog(Protocol):
    async def append(
        self,
        *appends: StreamAppend,
        metadata: Mapping[str, Any] | None = None,
        command: tuple[str, str] | None = None,
        also: Sequence[tuple[str, Sequence[Any]]] = (),
        guard: tuple[str, Sequence[Any]] | None = None,
    ) -> list[RecordedEvent]:
        """Append to one or several streams atomically (each at its `expected_version`, else
        `ConcurrencyConflict`); `command=(stream, id)`: once only (`DuplicateCommand`)."""
        ...

    async def read_stream(
        self, stream: str, *, after_version: int = 0, up_to_version: int | None = None
    ) -> list[RecordedEvent]: ...

    async def read_events(
        self,
        stream: str,
        decode: Callable[[str], list[T]],
        *,
        after_version: int = 0,
        up_to_version: int | None = None,
    ) -> list[T]: ...

    async def verify_stream(
        self,
        stream: str,
        *,
        anchors: Mapping[int, bytes] | None = None,
        seal_keys: Mapping[str, bytes] | None = None,
    ) -> chain.ChainVerdict: ...

    async def stream_version(self, stream: str) -> int: ...

    async def command_version(self, stream: str, command_id: str) -> int | None: ...

    async def read_all(
        self,
        *,
        after: LogCursor | None = None,
        limit: int = 1000,
        stream_prefix: str | None = None,
        horizon: bool = True,
    ) -> list[RecordedEvent]: ...

    async def last_position(self) -> int: ...


class DealSecrets(Protocol):
    async def server_seed(self, game_id: str) -> bytes | None:
        """The secret seed a prepared game is dealt from; None for a game that has none (dealt
        before fair deals, or unknown)."""
        ...


if TYPE_CHECKING:  # both stores implement both ports (checked by mypy)
    from service.store.events import EventStore
    from service.store.memory import InMemoryDealSecrets, InMemoryEventStore
    from service.store.secrets import StoredDealSecrets

    def _conforms(
        pg: EventStore, memory: InMemoryEventStore, s: StoredDealSecrets, m: InMemoryDealSecrets
    ) -> tuple[EventLog, EventLog, DealSecrets, DealSecrets]:
        return pg, memory, s, m
