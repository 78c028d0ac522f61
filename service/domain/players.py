"""A person's `player-<id>` stream: the name they go by and the record of their finished online
games. Stats, XP and badges are the fold of `game_recorded` events (`service.domain.ledger`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from service.domain.ledger import GameRecord, PlayerStats, record_game


class GameRecorded(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="game_recorded"
):
    """A finished online game on a person's record (stream `player-<id>`): stats, XP and
    badges are folds of these."""

    record: GameRecord


class PlayerRecord(msgspec.Struct, frozen=True, kw_only=True):
    version: int
    name: str
    stats: PlayerStats


def player_record(events: Iterable[tuple[str, bytes]]) -> PlayerRecord:
    """Fold a `player-<id>` stream, given as (type, JSON data) pairs: the name it goes by and
    the stats of its recorded games. The same fold rebuilds the `player_stats` projection."""
    name, stats, version = "", PlayerStats(), 0
    for type_, data in events:
        version += 1
        if type_ == "game_recorded":
            stats = record_game(stats, _GAME_RECORDED.decode(data).record)
        else:  # guest_created, account_registered
            name = _NAMED.decode(data).get("name", name)
    return PlayerRecord(version=version, name=name, stats=stats)


def game_records(events: Iterable[tuple[str, bytes]]) -> list[GameRecord]:
    """The games on a `player-<id>` stream's record, in order, from its (type, JSON data)."""
    return [
        _GAME_RECORDED.decode(data).record for type_, data in events if type_ == "game_recorded"
    ]


_GAME_RECORDED = msgspec.json.Decoder(GameRecorded)
_NAMED = msgspec.json.Decoder(dict[str, Any])
