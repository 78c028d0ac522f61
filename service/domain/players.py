"""A person's `player-<id>` stream: the name they go by and the record of their finished online
games. Stats, XP and badges are the fold of `game_recorded` events (`service.domain.ledger`);
the rating, of `rating_changed` events (`service.domain.ratings`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from service.domain.ledger import GameRecord, PlayerStats, record_game
from service.domain.ratings import NEW, Rating, RatingChanged


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
    rating: Rating = NEW


def player_record(events: Iterable[tuple[str, bytes]]) -> PlayerRecord:
    """Fold a `player-<id>` stream, given as (type, JSON data) pairs: the name it goes by and
    the stats of its recorded games and its rating. The same fold rebuilds the `player_stats`
    projection."""
    name, stats, rating, version = "", PlayerStats(), NEW, 0
    for type_, data in events:
        version += 1
        if type_ == "game_recorded":
            stats = record_game(stats, _GAME_RECORDED.decode(data).record)
        elif type_ == "rating_changed":
            rating = _RATING_CHANGED.decode(data).after
        else:  # guest_created, account_registered
            name = _NAMED.decode(data).get("name", name)
    return PlayerRecord(version=version, name=name, stats=stats, rating=rating)


def rating_changes(events: Iterable[tuple[int, str, bytes]]) -> list[tuple[int, RatingChanged]]:
    """The rating changes on a `player-<id>` stream with their versions, in order, from its
    (version, type, JSON data)."""
    return [
        (version, _RATING_CHANGED.decode(data))
        for version, type_, data in events
        if type_ == "rating_changed"
    ]


def game_records(events: Iterable[tuple[str, bytes]]) -> list[GameRecord]:
    """The games on a `player-<id>` stream's record, in order, from its (type, JSON data)."""
    return [
        _GAME_RECORDED.decode(data).record for type_, data in events if type_ == "game_recorded"
    ]


_GAME_RECORDED = msgspec.json.Decoder(GameRecorded)
_RATING_CHANGED = msgspec.json.Decoder(RatingChanged)
_NAMED = msgspec.json.Decoder(dict[str, Any])
