"""What the table, lobby, seat and profile operations answer, on the wire: each struct described
here, and built by one function from its use case's result (a table as the caller sees it, the
lobby's rows, where the caller sits, a player's record). The use cases return those results;
only this module knows their shapes on the wire."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import msgspec

from service.domain.ledger import Badge, badges
from service.domain.ratings import Rating
from service.domain.rules.cards import TURNS
from service.domain.rules.events import BeeLevel, ClockSettings, EndReason, SeatInfo, SeatKind
from service.domain.table_events import TableMode
from service.domain.tables import TableStatus
from service.domain.views import GameView, ViewPhase, view_phase
from service.usecases.my_games import HistoryKind, Seated
from service.usecases.my_games import PastGame as PastGameRecord
from service.usecases.my_games import PastSeat as PastSeatRecord
from service.usecases.profiles import LeaderboardOrder, OwnRecord, PlayerRecord, Record
from service.usecases.tables import Listed, TableSeen

# --- a table -----------------------------------------------------------------------------------


class NextGame(msgspec.Struct, frozen=True, kw_only=True):
    """The table's next game, prepared when the last one ended.

    Attributes:
        game_id: The next game's id.
        commitment: SHA-256, hex.
        seeds: How many seeds were contributed.
        committed: How many people committed to a seed they have not revealed yet.
        seeds_closed: The deal waits for those reveals (docs/fairness.md)
    """

    game_id: str
    commitment: str
    seeds: int
    committed: int = 0
    seeds_closed: bool = False


class TableView(msgspec.Struct, frozen=True, kw_only=True):
    """A table as the caller sees it, with their view of its current game.

    Attributes:
        table_id: The table's id.
        mode: `solo` or `online`.
        status: Open (waiting for players), playing, between_games, closed.
        host: The host's player id.
        capacity: How many seats the table has, 2 to 8.
        stake: Coins each person puts in; 0 = a free table.
        clock: The turn clock of this table's games (None: untimed)
        seats: Who sits where, seat 1 first.
        you: Your seat, if you sit at the table.
        games: Every game dealt here, oldest first; the last is the current one. A new game (the
            table filled, the host started, or play again) appears here and as `game_opened` on the
            table's event stream.
        game: Your view of the current game, if you were dealt into it.
        next_game: The game that will be dealt next and the server's commitment to its deal,
            published before anyone contributes a seed (docs/fairness.md); null while a game is
            being played.
        your_seed: The seed you contributed to the next game, if any.
        rated: Its games change the ratings of the people with accounts (false: casual).
    """

    table_id: str
    mode: TableMode
    status: TableStatus
    host: str
    capacity: int
    stake: int
    clock: ClockSettings | None
    seats: tuple[SeatInfo, ...]  # in seat order; a game dealt now numbers its seats the same
    you: int | None
    games: tuple[str, ...]
    game: GameView | None
    next_game: NextGame | None = None
    your_seed: str | None = None
    rated: bool = False


def table_view(seen: TableSeen) -> TableView:
    """A table use case's answer on the wire."""
    table = seen.table
    next_game = None
    if table.next_game is not None and table.next_commitment is not None:
        next_game = NextGame(
            game_id=table.next_game,
            commitment=table.next_commitment,
            seeds=len(table.seeds),
            committed=len(table.seed_hashes),
            seeds_closed=table.seeds_closed,
        )
    return TableView(
        table_id=table.table_id,
        mode=table.mode,
        status=table.status,
        host=table.host,
        capacity=table.capacity,
        stake=table.stake,
        clock=table.clock,
        seats=table.seat_infos(),
        you=seen.you,
        games=table.games,
        game=seen.game,
        next_game=next_game,
        your_seed=seen.your_seed,
        rated=table.rated,
    )


# --- pages -------------------------------------------------------------------------------------


def next_offset(rows: Sequence[object], limit: int, offset: int) -> int | None:
    """The next page's offset, from a page read with one row more than `limit`; None on the
    last page."""
    return offset + limit if len(rows) > limit else None


# --- the lobby ---------------------------------------------------------------------------------


class LobbyEntry(msgspec.Struct, frozen=True, kw_only=True):
    """An open online table, as the lobby lists it.

    Attributes:
        table_id: The table's id.
        host_name: The host's name.
        seats_taken: Seats taken (people and bee players).
        people: People seated.
        capacity: How many seats the table has, 2 to 8.
        stake: Coins each person puts in; 0 for a free table.
        status: `open`, `playing` or `between_games`.
        opened_at: When the table opened (UTC).
        bee_levels: Each bee seat's level, in seat order.
        rated: Its games change ratings (false: a casual table).
        average_rating: The average rating (points) of the people with accounts seated
            there; null when there is none.
    """

    table_id: str
    host_name: str
    seats_taken: int
    people: int
    capacity: int
    stake: int
    status: TableStatus
    opened_at: datetime
    bee_levels: tuple[BeeLevel, ...] = ()
    rated: bool = False
    average_rating: int | None = None


class LobbyPage(msgspec.Struct):
    """A page of the lobby, newest tables first.

    Attributes:
        tables: The tables of this page.
        limit: The page size asked for.
        offset: How many entries come before this page.
        next_offset: The offset of the next page; null on the last page.
        partial: True while part of the database is away (a worker of a Citus cluster):
            this page holds only the tables whose part answered, and an average rating only
            the people whose records did; pages may shift once it is back. False: whole.
    """

    tables: list[LobbyEntry]
    limit: int
    offset: int
    next_offset: int | None
    partial: bool = False


def lobby_page(rows: Sequence[Listed], limit: int, offset: int, partial: bool = False) -> LobbyPage:
    """A page of the lobby, from its rows read with one more than `limit`."""
    return LobbyPage(
        tables=[
            LobbyEntry(
                table_id=t.listing.table_id,
                host_name=t.listing.host_name,
                seats_taken=t.listing.seats_taken,
                people=t.listing.people,
                capacity=t.listing.capacity,
                stake=t.listing.stake,
                status=t.listing.status,
                opened_at=t.opened_at,
                bee_levels=t.listing.bee_levels,
                rated=row.rated,
                average_rating=row.average_rating,
            )
            for row in rows[:limit]
            for t in (row.listed,)
        ],
        limit=limit,
        offset=offset,
        next_offset=next_offset(rows, limit, offset),
        partial=partial,
    )


# --- where the caller sits ---------------------------------------------------------------------


class MyTable(msgspec.Struct, frozen=True, kw_only=True):
    """A table the caller sits at, and its current game.

    Attributes:
        table_id: The table (getTable, streamTableEvents).
        mode: `solo` (against bee players) or `online`.
        status: The table's status: `open` (waiting for people), `playing`, `between_games`
            (a game ended; play again or leave) or `closed`.
        seat: The caller's seat at the table, from 1.
        stake: The buy-in, in coins; 0 for a free table.
        game_id: The table's current (or last) game, if one was dealt (getGame,
            streamGameEvents); null before the first.
        game_phase: That game's phase as the caller sees it: `picking`, `choosing` or `ended`;
            null when there is no game.
        turn: That game's turn, 1 to 10; null when there is no game.
        turns: How many turns a game lasts (seed §6: 10).
        your_move: The game waits for the caller: a pick not yet confirmed, or their too-low
            choice.
    """

    table_id: str
    mode: TableMode
    status: TableStatus
    seat: int
    stake: int
    game_id: str | None
    game_phase: ViewPhase | None
    turn: int | None
    your_move: bool
    turns: int


class MyGames(msgspec.Struct, frozen=True, kw_only=True):
    """Where the caller sits now, most recently joined first.

    Attributes:
        tables: Each table the caller sits at, with its current game.
        partial: True while part of the database is away (a worker of a Citus cluster):
            only the tables whose part answered are listed (the others cannot be played
            until it is back). False: every table you sit at.
    """

    tables: tuple[MyTable, ...]
    partial: bool = False


def my_games(seated: Sequence[Seated], partial: bool = False) -> MyGames:
    """`listMyGames`' answer, from where the caller sits."""
    return MyGames(
        tables=tuple(
            MyTable(
                table_id=s.table.table_id,
                mode=s.table.mode,
                status=s.table.status,
                seat=s.seat,
                stake=s.table.stake,
                game_id=s.game.game_id if s.game is not None else None,
                game_phase=view_phase(s.game.phase) if s.game is not None else None,
                turn=s.game.turn if s.game is not None else None,
                your_move=s.your_move,
                turns=TURNS,
            )
            for s in seated
        ),
        partial=partial,
    )


# --- the games a person has played -------------------------------------------------------------


class PastSeat(msgspec.Struct, frozen=True, kw_only=True):
    """A seat of a finished game.

    Attributes:
        seat: The seat's number, from 1.
        name: The name it played under.
        kind: `person` or `bee` (a bee player).
        level: A bee player's level; null for a person.
        player_id: A person's player id; null for a bee player.
        stings: Stings taken in the game.
        place: Its place at the table: 1 is best (fewest stings); seats with as many stings
            share a place; people who left come last.
        left: The person left before the end.
    """

    seat: int
    name: str
    kind: SeatKind
    level: BeeLevel | None
    player_id: str | None
    stings: int
    place: int
    left: bool


class RatingChange(msgspec.Struct, frozen=True, kw_only=True):
    """What a rated game did to your rating.

    Attributes:
        before: Your rating's points before the game.
        after: After it.
        change: `after` - `before`.
        provisional: The rating after it is still provisional.
    """

    before: int
    after: int
    change: int
    provisional: bool


class PastGame(msgspec.Struct, frozen=True, kw_only=True):
    """A finished game you were dealt into.

    Attributes:
        game_id: The game (getGame, listGameSteps for its replay, exportGame).
        table_id: Its table.
        mode: `solo` or `online`.
        rated: It was played at a rated table.
        ended_at: When it ended (UTC).
        end_reason: `finished`, `last_person_standing` or `abandoned` (by the clock).
        seats: How many seats it had.
        you: Your seat, stings and place.
        others: Every other seat: people by name, bee players by level.
        rating: What it did to your rating; null when it was not rated for you (a casual
            table, a guest, nobody else rated, abandoned) or the change is still on its way.
        replay: The path of its steps for a replay (listGameSteps).
        export: The path of its export for an offline audit (exportGame).
    """

    game_id: str
    table_id: str
    mode: TableMode
    rated: bool
    ended_at: datetime
    end_reason: EndReason | None
    seats: int
    you: PastSeat
    others: tuple[PastSeat, ...]
    rating: RatingChange | None
    replay: str
    export: str


class HistoryPage(msgspec.Struct, frozen=True, kw_only=True):
    """A page of your finished games, newest first.

    Attributes:
        games: The games of this page.
        kind: `all`, `rated` or `casual`: the filter asked for.
        limit: The page size asked for.
        offset: How many games come before this page.
        next_offset: The offset of the next page; null on the last page.
        partial: True while part of the database is away (a worker of a Citus cluster):
            this page holds only the games whose part answered; pages may shift once it is
            back. False: whole.
    """

    games: list[PastGame]
    kind: HistoryKind
    limit: int
    offset: int
    next_offset: int | None
    partial: bool = False


def _past_seat(seat: PastSeatRecord) -> PastSeat:
    return PastSeat(
        seat=seat.info.seat,
        name=seat.info.name,
        kind=seat.info.kind,
        level=seat.info.level,
        player_id=seat.info.player_id,
        stings=seat.stings,
        place=seat.place,
        left=seat.left,
    )


def history_page(
    games: Sequence[PastGameRecord],
    kind: HistoryKind,
    limit: int,
    offset: int,
    partial: bool = False,
) -> HistoryPage:
    """`listMyHistory`'s answer, from its games read with one more than `limit`."""
    return HistoryPage(
        games=[
            PastGame(
                game_id=g.played.game_id,
                table_id=g.played.table_id,
                mode=g.played.mode,
                rated=g.played.rated,
                ended_at=g.played.ended_at,
                end_reason=g.end_reason,
                seats=1 + len(g.others),
                you=_past_seat(g.you),
                others=tuple(_past_seat(s) for s in g.others),
                rating=RatingChange(
                    before=g.rating.before.points,
                    after=g.rating.after.points,
                    change=g.rating.change,
                    provisional=g.rating.after.provisional,
                )
                if g.rating is not None
                else None,
                replay=f"/games/{g.played.game_id}/steps",
                export=f"/games/{g.played.game_id}/export",
            )
            for g in games[:limit]
        ],
        kind=kind,
        limit=limit,
        offset=offset,
        next_offset=next_offset(games, limit, offset),
        partial=partial,
    )


# --- profiles and the leaderboard --------------------------------------------------------------


class Coins(msgspec.Struct, frozen=True, kw_only=True):
    """A player's coins.

    Attributes:
        balance: Spendable coins.
        held: Coins held for buy-in tables whose game has not started yet.
    """

    balance: int
    held: int


class RatingView(msgspec.Struct, frozen=True, kw_only=True):
    """A skill rating from rated online games (Weng–Lin Plackett–Luce, `openskill`).

    Attributes:
        points: The rating as shown: 1500 to start (mu × 60, rounded).
        provisional: Still settling: its uncertainty (sigma) is 6 or more, about the first
            dozen rated games.
        games: Rated games it comes from.
        mu: The skill believed (25 to start).
        sigma: How unsure that is (25/3 to start; it shrinks as games are played).
    """

    points: int
    provisional: bool
    games: int
    mu: float
    sigma: float


def rating_view(rating: Rating) -> RatingView:
    return RatingView(
        points=rating.points,
        provisional=rating.provisional,
        games=rating.games,
        mu=rating.mu,
        sigma=rating.sigma,
    )


class PublicProfile(msgspec.Struct, frozen=True, kw_only=True):
    """Anyone's public profile (never their coins).

    Attributes:
        registered: An account, not only a guest.
        level: 1 + xp // 500.
        games_played: Finished online games.
        badges: In the order they were earned.
        player_id: The player's id.
        name: The name shown to others.
        xp: Experience points from online games.
        games_won: Online games won (a shared win counts).
        rating: The skill rating from rated online games.
    """

    player_id: str
    name: str
    registered: bool
    xp: int
    level: int
    games_played: int
    games_won: int
    badges: tuple[Badge, ...]
    rating: RatingView


class Profile(PublicProfile, frozen=True, kw_only=True):
    """The caller's own profile: the public one plus their coins.

    Attributes:
        player_id: Your player id.
        name: The name shown to others.
        xp: Experience points from online games.
        games_won: Online games won (a shared win counts).
        coins: Your coins: spendable and held.
    """

    coins: Coins


def public_profile(record: PlayerRecord) -> PublicProfile:
    """`getPlayer`'s answer: a player's record, without coins."""
    stats = record.stats
    return PublicProfile(
        player_id=record.player_id,
        name=record.name,
        registered=record.registered,
        xp=stats.xp,
        level=stats.level,
        games_played=stats.games_played,
        games_won=stats.games_won,
        badges=badges(stats.badges),
        rating=rating_view(record.rating),
    )


def profile(record: OwnRecord) -> Profile:
    """`getMe`'s answer: the caller's own record, with their coins."""
    public = public_profile(record)
    coins = Coins(balance=record.balance, held=record.held)
    return Profile(**msgspec.structs.asdict(public), coins=coins)


class LeaderboardEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One ranked player.

    Attributes:
        rank: 1 is first.
        player_id: The player's id.
        name: The name shown to others.
        games_won: Online games won (a shared win counts).
        games_played: Online games finished.
        xp: Experience points from online games.
        level: 1 + XP ÷ 500, rounded down.
        rating: The skill rating from rated online games.
    """

    rank: int
    player_id: str
    name: str
    games_won: int
    games_played: int
    xp: int
    level: int
    rating: RatingView


class LeaderboardPage(msgspec.Struct, frozen=True, kw_only=True):
    """A page of the leaderboard.

    Attributes:
        by: `wins`, `xp` or `rating`: what the ranking is by.
        entries: The ranked players of this page.
        limit: The page size asked for.
        offset: How many entries come before this page.
        next_offset: The offset of the next page; null on the last page.
    """

    by: LeaderboardOrder
    entries: list[LeaderboardEntry]
    limit: int
    offset: int
    next_offset: int | None


def leaderboard_page(
    by: LeaderboardOrder, ranked: Sequence[Record], limit: int, offset: int
) -> LeaderboardPage:
    """A page of the leaderboard, from its records read in rank order, one more than `limit`."""
    return LeaderboardPage(
        by=by,
        entries=[
            LeaderboardEntry(
                rank=offset + i + 1,
                player_id=r.player_id,
                name=r.name,
                games_won=r.stats.games_won,
                games_played=r.stats.games_played,
                xp=r.stats.xp,
                level=r.stats.level,
                rating=rating_view(r.rating),
            )
            for i, r in enumerate(ranked[:limit])
        ],
        limit=limit,
        offset=offset,
        next_offset=next_offset(ranked, limit, offset),
    )
