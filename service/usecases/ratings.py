"""Ratings (issue 43; the rules in `service.domain.ratings`): the field of a rated game as its
end reads it, a rating change delivered to a person's record, and every rating recomputed
from the log (`swarm ratings`).

A rating change travels like a reward: the table's append at a rated game's end writes a
`RateGame` transfer per person of the field into its outbox (`Money.reward`), and its delivery
(`Money.deliver`, or the relay after a crash) appends `rating_changed` to the person's
`player-<id>` stream with the transfer's id as the command id, so it lands exactly once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from service.domain.players import rating_changes
from service.domain.ratings import (
    Mismatch,
    Placing,
    RatingChanged,
    changed_by,
    check_ratings,
    decide_rating,
    places,
)
from service.domain.rules.engine import GameState
from service.domain.transfers import RateGame, rating_transfer_id
from service.domain.views import SeatRatingView, seat_rating_view
from service.store.log import LogCursor, RecordedEvent
from service.usecases.context import Context, stream
from service.usecases.repository import Repository
from service.usecases.unit_of_work import UnitOfWork


async def field_of(
    repository: Repository, game: GameState, holders: Iterable[str]
) -> tuple[Placing, ...]:
    """The field of an ended game at a rated table: each person with an account (`holders`)
    in their place, with their rating as their record reads now and the record's version."""
    placed = places(game, holders)
    out = []
    for player_id, place in placed:
        record = await repository.player_record(player_id)
        out.append(
            Placing(player_id=player_id, place=place, rating=record.rating, version=record.version)
        )
    return tuple(out)


def rating_transfers(game: GameState, table_id: str, field: Iterable[Placing]) -> list[RateGame]:
    """One `rate_game` for each person the game's result changes (`changed_by`), each with
    the whole field."""
    chosen = tuple(field)
    changed = changed_by(game, ((p.player_id, p.place) for p in chosen))
    return [
        RateGame(player_id=p, table_id=table_id, game_id=game.game_id, field=chosen)
        for p in changed
    ]


async def rate(uow: UnitOfWork, transfer: RateGame) -> None:
    """A rated game's change, decided on the person's record as it is now."""
    before = (await uow.player_record(transfer.player_id)).rating
    change = decide_rating(
        transfer.player_id, transfer.game_id, transfer.table_id, transfer.field, before
    )
    await uow.record(transfer.player_id, change)


async def seat_ratings(
    ctx: Context, repository: Repository, game: GameState
) -> tuple[SeatRatingView, ...] | None:
    """What an ended rated game did to each rated person's rating, seat by seat (pending
    while the change is on its way); None for a game no rating comes from."""
    if game.phase != "ended" or game.end_reason == "abandoned":
        return None
    table = await repository.table(game.table_id)
    if not table.rated or table.mode != "online":
        return None
    people = {s.info.player_id: s.number for s in game.seats if s.info.player_id and not s.is_bee}
    field = places(game, await ctx.ports.accounts.holders(list(people)))
    if not field:
        return None
    out = []
    for player_id in changed_by(game, field):
        change = await _change_of(ctx, player_id, game.game_id)
        out.append(seat_rating_view(people[player_id], change))
    return tuple(sorted(out, key=lambda v: v.seat))


async def _change_of(ctx: Context, player_id: str, game_id: str) -> RatingChanged | None:
    """The change a game made to one person's rating, None while it is on its way. Its
    delivery appended one event under the transfer's id (`Money._deliver_once`), so the
    version that command produced is the change's: one short read, whatever the person's
    history (reading their whole stream made an ended game's view cost grow with it,
    docs/benchmarks.md "Reading ratings at a game's end"). The whole stream only if that
    version does not hold it."""
    player = stream("player", player_id)
    version = await ctx.store.command_version(player, rating_transfer_id(game_id, player_id))
    if version is None:
        return None

    def found(rows: Iterable[RecordedEvent]) -> RatingChanged | None:
        changes = rating_changes((r.version, r.type, r.data) for r in rows)
        return next((c for _, c in changes if c.game_id == game_id), None)

    at = found(
        await ctx.store.read_stream(player, after_version=version - 1, up_to_version=version)
    )
    return at if at is not None else found(await ctx.store.read_stream(player))


@dataclass(kw_only=True)
class RatingsCheck:
    """What recomputing every rating from the log found: how many people, changes and games,
    and every change that does not hold (none, when the log is sound)."""

    people: int = 0
    changes: int = 0
    games: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)


async def recompute(ctx: Context, repository: Repository) -> RatingsCheck:
    """Every rating recomputed from the log: each change from the person's stream before it
    and the others' streams at the versions it names (`check_ratings`), and each game's field
    from the game itself (its table rated, its places those the game's end gives)."""
    people: set[str] = set()
    cursor: LogCursor | None = None
    while True:
        # Every committed row, not only those below the horizon of transactions still running
        # (anywhere on the server): a check reads what is there, it does not follow the log.
        rows = await ctx.store.read_all(
            after=cursor, limit=1000, stream_prefix="player-", horizon=False
        )
        if not rows:
            break
        cursor = rows[-1].cursor
        people.update(r.stream.removeprefix("player-") for r in rows if r.type == "rating_changed")
    # Each person's changes from their own stream, in version order: the log's pages find who
    # was rated, the stream is what each change is checked against (in `make test` a paged
    # read once handed the checker a person's one change twice, while the stream held it once).
    streams: dict[str, list[tuple[int, RatingChanged]]] = {}
    games: dict[str, tuple[str, set[tuple[str, int]]]] = {}
    for player_id in sorted(people):
        rows = await ctx.store.read_stream(stream("player", player_id))
        changes = rating_changes((r.version, r.type, r.data) for r in rows)
        streams[player_id] = changes
        for _, change in changes:
            games.setdefault(
                change.game_id,
                (change.table_id, {(p.player_id, p.place) for p in change.field}),
            )
    check = RatingsCheck(
        people=len(streams),
        changes=sum(len(c) for c in streams.values()),
        games=len(games),
        mismatches=check_ratings(streams),
    )
    changed: dict[str, set[str]] = {}
    for game_id, (table_id, placed) in games.items():
        table = await repository.table(table_id)
        game = await repository.game(game_id)
        changed[game_id] = set(changed_by(game, placed))
        problem = None
        if not table.rated:
            problem = "a casual table's game was rated"
        elif set(places(game, {p for p, _ in placed})) != placed:
            problem = "the field is not the game's result"
        if problem is not None:
            check.mismatches.append(
                Mismatch(player_id="", version=0, game_id=game_id, problem=problem)
            )
    for player_id, changes in streams.items():
        for version, change in changes:
            if (player_id, change.place) not in games[change.game_id][1]:
                check.mismatches.append(
                    Mismatch(
                        player_id=player_id,
                        version=version,
                        game_id=change.game_id,
                        problem="not in the game's field as the others' changes give it",
                    )
                )
            elif player_id not in changed[change.game_id]:
                check.mismatches.append(
                    Mismatch(
                        player_id=player_id,
                        version=version,
                        game_id=change.game_id,
                        problem="rated for a walk-over they won (only its leavers are rated)",
                    )
                )
    return check
