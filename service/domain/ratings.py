"""Skill ratings for people with accounts, from rated online games, pure.

Swarm is a free-for-all of 2–8 seats in which several seats may share a place, so a pairwise
system (Elo, Glicko-2) fits it badly: a game would have to be cut into made-up duels. The
Weng–Lin Bayesian ratings of `openskill` rank a whole field at once, ties included
(Plackett–Luce), with a mean `mu` and an uncertainty `sigma` per person, as TrueSkill does,
without its patent and in a maintained MIT library.

Who counts: only people with accounts, at a table opened as rated. Bees and guests take no
rating and give none: they are left out of the field, so a game of one person, bees and
guests rates nobody. A game the clock abandoned rates nobody. A person who left before the end
shares the last place of the field.

How it is written, so that it is exactly once and rebuilds by replay: when a rated game ends,
the table's append writes one `RateGame` transfer per person in the field (the same outbox that
pays coins, `service.domain.transfers`), carrying the field's places and every person's rating
as read then (with the version of their `player-<id>` stream it was read at). Its delivery
appends `rating_changed` to the person's stream, with the transfer's id as the command id: the
person's own rating before is their stream's fold at that point (so two games ending together
both count), the others' are the ones the transfer carries. `check_ratings` recomputes every
change from the streams alone and finds the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import msgspec
from openskill.models import PlackettLuce

from service.domain.rules.state import GameState

# The model's own defaults (mu 25, sigma 25/3); people see `points` = mu x 60 (1,500 to start).
MODEL = PlackettLuce()
MU = 25.0
SIGMA = 25.0 / 3.0
POINTS_PER_MU = 60
# A rating is provisional until its uncertainty falls below this: about a dozen games of 2-4
# seats (sigma starts at 8.33 and shrinks by 0.1-0.2 a game, less in bigger fields).
PROVISIONAL_SIGMA = 6.0


class Rating(msgspec.Struct, frozen=True, kw_only=True):
    """A person's rating: `mu`, the skill believed, and `sigma`, how unsure that is; `games`,
    the rated games it comes from."""

    mu: float = MU
    sigma: float = SIGMA
    games: int = 0

    @property
    def points(self) -> int:
        """The rating as shown: 1,500 to start."""
        return round(self.mu * POINTS_PER_MU)

    @property
    def provisional(self) -> bool:
        return self.sigma >= PROVISIONAL_SIGMA


NEW = Rating()


class Placing(msgspec.Struct, frozen=True, kw_only=True):
    """One person of a rated game's field: their place among the field (1 is best; people who
    tie share it) and their rating as read when the game ended, at `version` of their
    `player-<id>` stream (0: no event yet)."""

    player_id: str
    place: int
    rating: Rating = NEW
    version: int = 0


class RatingChanged(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="rating_changed"
):
    """A rated game's change to a person's rating (stream `player-<id>`): `before` is the
    fold of the stream up to it, `after` what `rate` gives from it and the others of `field`."""

    game_id: str
    table_id: str
    place: int
    field: tuple[Placing, ...]
    before: Rating
    after: Rating

    @property
    def change(self) -> int:
        return self.after.points - self.before.points


def places(game: GameState, rated: Iterable[str]) -> tuple[tuple[str, int], ...]:
    """The field of an ended game: each rated person (`rated`: the people with accounts) and
    their place among the field, fewest stings first, people with as many stings sharing a
    place, people who left sharing the last; () when nobody is rated (abandoned, unfinished,
    or fewer than two people in the field). Bees and guests are not in the field."""
    if game.phase != "ended" or game.end_reason == "abandoned":
        return ()
    accounts = set(rated)
    field = [
        s
        for s in game.seats
        if not s.is_bee and s.info.player_id is not None and s.info.player_id in accounts
    ]
    if len({s.info.player_id for s in field}) < 2:
        return ()
    stayed = sorted({s.stings for s in field if s.playing})
    last = len(stayed) + 1
    return tuple(
        (str(s.info.player_id), stayed.index(s.stings) + 1 if s.playing else last) for s in field
    )


def changed_by(game: GameState, field: Iterable[tuple[str, int]]) -> tuple[str, ...]:
    """Who of an ended rated game's field its result changes the rating of: everyone, except
    after a walk-over (everyone else left, `last_person_standing`), when only the leavers are
    rated. The one who stayed wins the game (and what it pays), not rating points: else two
    accounts, one joining and leaving at once, farmed a rating past every real player's (20
    such games in 10 s put one at 2,395, first on the leaderboard; issue 43's review). Leaving
    costs the leavers as before."""
    people = [player_id for player_id, _ in field]
    if game.end_reason != "last_person_standing":
        return tuple(people)
    stayed = {s.info.player_id for s in game.seats if s.playing}
    return tuple(p for p in people if p not in stayed)


def rate(field: Sequence[Placing]) -> dict[str, Rating]:
    """Everyone's rating after a game with this field (each with their rating before it)."""
    ordered = sorted(field, key=lambda p: (p.place, p.player_id))
    teams = [[MODEL.rating(mu=p.rating.mu, sigma=p.rating.sigma)] for p in ordered]
    rated = MODEL.rate(teams, ranks=[float(p.place) for p in ordered])
    return {
        p.player_id: Rating(mu=team[0].mu, sigma=team[0].sigma, games=p.rating.games + 1)
        for p, team in zip(ordered, rated, strict=True)
    }


def rate_one(player_id: str, before: Rating, field: Sequence[Placing]) -> Rating:
    """`player_id`'s rating after a game of `field`, from `before` (their rating now, which
    may be newer than the one `field` carries for them)."""
    mine = [
        msgspec.structs.replace(p, rating=before) if p.player_id == player_id else p for p in field
    ]
    return rate(mine)[player_id]


def decide_rating(
    player_id: str, game_id: str, table_id: str, field: Sequence[Placing], before: Rating
) -> RatingChanged:
    """The `rating_changed` a rated game's field makes on `player_id`'s stream now."""
    place = next(p.place for p in field if p.player_id == player_id)
    return RatingChanged(
        game_id=game_id,
        table_id=table_id,
        place=place,
        field=tuple(field),
        before=before,
        after=rate_one(player_id, before, field),
    )


def fold_rating(changes: Iterable[RatingChanged]) -> Rating:
    rating = NEW
    for change in changes:
        rating = change.after
    return rating


class Mismatch(msgspec.Struct, frozen=True, kw_only=True):
    player_id: str
    version: int  # of the `rating_changed` on the person's stream
    game_id: str
    problem: str


def check_ratings(streams: Mapping[str, Sequence[tuple[int, RatingChanged]]]) -> list[Mismatch]:
    """Recompute every rating change from the log: `streams` maps each person to their
    `rating_changed` events with their versions, in order. Each change's `before` must be the
    fold of the changes before it, each other person's rating in its field must be the fold of
    their stream up to the version it names, and `after` must be what `rate` gives. Returns
    what does not hold (nothing, when the log is sound)."""
    problems: list[Mismatch] = []

    def at(player_id: str, version: int) -> Rating:
        return fold_rating(c for v, c in streams.get(player_id, ()) if v <= version)

    for player_id, changes in streams.items():
        rating = NEW
        seen: set[str] = set()
        for version, change in changes:
            found: list[str] = []
            if change.game_id in seen:
                found.append("rated twice")
            seen.add(change.game_id)
            if change.before != rating:
                found.append(f"before {change.before} but the stream's fold is {rating}")
            found += [
                f"{other.player_id}'s rating is not theirs at version {other.version}"
                for other in change.field
                if other.player_id != player_id
                and other.rating != at(other.player_id, other.version)
            ]
            if change.after != rate_one(player_id, change.before, change.field):
                found.append(f"after {change.after} is not what the field gives")
            problems += [
                Mismatch(player_id=player_id, version=version, game_id=change.game_id, problem=p)
                for p in found
            ]
            rating = change.after
    return problems
