"""A table: who sits where, and the games dealt there one after another (stream `table-<id>`).

The games themselves live in their own streams (`game-<id>`); the table stream records that each
game was opened, so "play again" is one atomic append to both streams.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from service.rules.events import SeatInfo

TableMode = Literal["solo", "online"]


class TableEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


class TableOpened(TableEvent, frozen=True, tag="table_opened"):
    table_id: str
    mode: TableMode
    host: str  # player id
    seats: tuple[SeatInfo, ...]


class GameOpened(TableEvent, frozen=True, tag="game_opened"):
    game_id: str
    number: int  # 1 for the first game at the table


TableEventUnion = TableOpened | GameOpened


class TableState(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str = ""
    mode: TableMode = "solo"
    host: str = ""
    seats: tuple[SeatInfo, ...] = ()
    games: tuple[str, ...] = ()
    version: int = 0

    @property
    def current_game(self) -> str | None:
        return self.games[-1] if self.games else None

    def seat_of(self, player_id: str) -> int | None:
        for seat in self.seats:
            if seat.player_id == player_id:
                return seat.seat
        return None


def evolve_table(state: TableState, event: TableEventUnion) -> TableState:
    match event:
        case TableOpened():
            return TableState(
                table_id=event.table_id,
                mode=event.mode,
                host=event.host,
                seats=event.seats,
                version=state.version + 1,
            )
        case GameOpened():
            return msgspec.structs.replace(
                state, games=(*state.games, event.game_id), version=state.version + 1
            )
    raise AssertionError(f"unknown table event {event!r}")  # pragma: no cover


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(TableEventUnion)


def encode_table_event(event: TableEvent) -> bytes:
    return _encoder.encode(event)


def decode_table_event(data: bytes | str) -> TableEventUnion:
    return _decoder.decode(data)


def table_event_type(event: TableEvent) -> str:
    tag = type(event).__struct_config__.tag
    assert isinstance(tag, str)
    return tag
