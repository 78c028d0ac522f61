"""Skill ratings (issue 43), as pure rules: who is in a rated game's field and in what place,
what `openskill`'s Plackett–Luce makes of it, and the recomputation that checks every change."""

from __future__ import annotations

import math

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from service.domain.players import player_record, rating_changes
from service.domain.ratings import (
    NEW,
    PROVISIONAL_SIGMA,
    Placing,
    Rating,
    RatingChanged,
    changed_by,
    check_ratings,
    decide_rating,
    fold_rating,
    places,
    rate,
    rate_one,
)
from service.domain.rules.events import SeatInfo
from service.domain.rules.state import GameState, SeatState

TAU = 25.0 / 300.0  # the model's dynamics: how far sigma may grow in one game


def ended(
    *seats: tuple[str, int, bool] | tuple[str, int],
    reason: str = "finished",
    bees: tuple[int, ...] = (),
) -> GameState:
    """An ended game: seats as (player id, stings[, left]); bee seats by their stings."""
    states = [
        SeatState(
            info=SeatInfo(seat=n, name=s[0], kind="person", player_id=s[0]),
            hand=(),
            stings=s[1],
            left=len(s) > 2 and bool(s[2]),
        )
        for n, s in enumerate(seats, 1)
    ]
    states += [
        SeatState(info=SeatInfo(seat=len(states) + i, name="Bee", kind="bee"), hand=(), stings=b)
        for i, b in enumerate(bees, 1)
    ]
    return GameState(
        game_id="g",
        seats=tuple(states),
        phase="ended",
        end_reason=reason,  # type: ignore[arg-type]
    )


ratings = st.builds(
    Rating,
    mu=st.floats(min_value=0.0, max_value=50.0),
    sigma=st.floats(min_value=0.5, max_value=25.0 / 3.0),
    games=st.integers(min_value=0, max_value=500),
)


@st.composite
def fields(draw: st.DrawFn, min_size: int = 2) -> list[Placing]:
    n = draw(st.integers(min_value=min_size, max_value=8))
    return [
        Placing(player_id=f"p{i}", place=draw(st.integers(1, n)), rating=draw(ratings))
        for i in range(n)
    ]


# --- the field ------------------------------------------------------------------------------


def test_rule_rated_places_follow_stings_and_people_with_as_many_share_a_place() -> None:
    game = ended(("ann", 3), ("ben", 0), ("cy", 3), ("dee", 7))
    assert places(game, {"ann", "ben", "cy", "dee"}) == (
        ("ann", 2),
        ("ben", 1),
        ("cy", 2),
        ("dee", 3),
    )


def test_rule_bees_and_guests_take_no_rating_and_give_none() -> None:
    game = ended(("ann", 5), ("guest", 0), ("ben", 9), bees=(1, 2))
    # The guest and both bees did better than Ann; among the rated she is still first.
    assert places(game, {"ann", "ben"}) == (("ann", 1), ("ben", 2))
    assert places(ended(("ann", 5), ("guest", 0), bees=(1,)), {"ann"}) == ()


def test_rule_a_game_abandoned_by_the_clock_is_not_rated() -> None:
    game = ended(("ann", 0), ("ben", 0), reason="abandoned")
    assert places(game, {"ann", "ben"}) == ()
    unfinished = msgspec.structs.replace(game, phase="picking", end_reason=None)
    assert places(unfinished, {"ann", "ben"}) == ()


def test_rule_people_who_left_share_the_last_place() -> None:
    game = ended(("ann", 12), ("ben", 0, True), ("cy", 1, True), reason="last_person_standing")
    assert places(game, {"ann", "ben", "cy"}) == (("ann", 1), ("ben", 2), ("cy", 2))


def test_rule_a_walk_over_rates_the_leavers_alone() -> None:
    """Everyone else left: the one who stayed wins the game, not rating points (else two
    accounts, one joining and leaving at once, farm a rating: issue 43's review)."""
    walk_over = ended(("ann", 12), ("ben", 0, True), ("cy", 1, True), reason="last_person_standing")
    field = places(walk_over, {"ann", "ben", "cy"})
    assert changed_by(walk_over, field) == ("ben", "cy")
    played_out = ended(("ann", 12), ("ben", 0, True), ("cy", 1))
    assert changed_by(played_out, places(played_out, {"ann", "ben", "cy"})) == ("ann", "ben", "cy")


def test_rule_a_walk_over_farmed_twenty_times_gains_the_winner_nothing() -> None:
    """The review's farm, on the rules: Ben joins and leaves at once, twenty times."""
    ann, ben = NEW, NEW
    for _ in range(20):
        game = ended(("ann", 0), ("ben", 0, True), reason="last_person_standing")
        field = [
            Placing(player_id=p, place=place, rating={"ann": ann, "ben": ben}[p])
            for p, place in places(game, {"ann", "ben"})
        ]
        after = rate(field)
        if "ann" in changed_by(game, places(game, {"ann", "ben"})):
            ann = after["ann"]
        ben = after["ben"]
    assert ann == NEW  # 2,395 points and first on the leaderboard before
    assert ben.points < NEW.points  # leaving costs the leaver, as before


# --- the model ------------------------------------------------------------------------------


def test_rule_a_newcomer_is_provisional_until_sigma_falls_below_the_bound() -> None:
    assert NEW.provisional and NEW.points == 1500 and NEW.games == 0
    a, b = NEW, NEW
    games = 0
    while a.provisional:
        after = rate(
            [Placing(player_id="a", place=1, rating=a), Placing(player_id="b", place=2, rating=b)]
        )
        a, b = after["a"], after["b"]
        games += 1
        assert games < 100
    assert a.sigma < PROVISIONAL_SIGMA and a.games == games
    assert 5 <= games <= 40, games  # settles within a season of play, not at once


def test_rule_the_winner_gains_and_the_last_loses_and_the_stronger_field_counts_more() -> None:
    field = [Placing(player_id=p, place=i) for i, p in enumerate(("a", "b", "c"), 1)]
    after = rate(field)
    assert after["a"].mu > NEW.mu > after["c"].mu
    strong = Rating(mu=35.0, sigma=3.0, games=50)
    beat_the_strong = rate(
        [Placing(player_id="a", place=1), Placing(player_id="s", place=2, rating=strong)]
    )
    beat_a_newcomer = rate([Placing(player_id="a", place=1), Placing(player_id="n", place=2)])
    assert beat_the_strong["a"].mu > beat_a_newcomer["a"].mu


@given(fields())
def test_rule_the_order_the_field_is_given_in_changes_nothing(field: list[Placing]) -> None:
    assert rate(field) == rate(list(reversed(field)))
    assert rate(field) == rate(sorted(field, key=lambda p: p.rating.mu))


@given(fields())
def test_rule_a_rating_stays_finite_and_sure_within_the_model_dynamics(
    field: list[Placing],
) -> None:
    after = rate(field)
    for p in field:
        new = after[p.player_id]
        assert math.isfinite(new.mu) and math.isfinite(new.sigma) and new.sigma > 0
        assert new.sigma <= math.hypot(p.rating.sigma, TAU) + 1e-9
        assert new.games == p.rating.games + 1


@given(ratings, st.integers(2, 8))
def test_rule_equals_who_tie_keep_their_skill(rating: Rating, n: int) -> None:
    after = rate([Placing(player_id=f"p{i}", place=1, rating=rating) for i in range(n)])
    assert all(math.isclose(r.mu, rating.mu, abs_tol=1e-9) for r in after.values())


@given(ratings, st.integers(2, 8))
def test_rule_among_equals_a_better_place_never_gains_less(rating: Rating, n: int) -> None:
    field = [Placing(player_id=f"p{i}", place=i + 1, rating=rating) for i in range(n)]
    after = rate(field)
    mus = [after[f"p{i}"].mu for i in range(n)]
    assert mus == sorted(mus, reverse=True) and mus[0] > rating.mu > mus[-1]


@given(fields(), ratings)
def test_rule_a_persons_own_rating_is_their_current_one(field: list[Placing], now: Rating) -> None:
    me = field[0].player_id
    assert rate_one(me, field[0].rating, field) == rate(field)[me]
    changed = decide_rating(me, "g", "t", field, now)
    assert changed.before == now and changed.place == field[0].place
    assert changed.after == rate_one(me, now, field)


# --- stored, folded and checked -------------------------------------------------------------

_DECODER = msgspec.json.Decoder(RatingChanged)


@given(fields(), ratings)
def test_rule_a_rating_change_reads_back_exactly_from_json(
    field: list[Placing], now: Rating
) -> None:
    changed = decide_rating(field[0].player_id, "g", "t", field, now)
    assert _DECODER.decode(msgspec.json.encode(changed)) == changed
    data = msgspec.json.decode(msgspec.json.encode(changed))
    assert data["type"] == "rating_changed"


def play(
    streams: dict[str, list[tuple[int, RatingChanged]]], game: str, order: list[list[str]]
) -> None:
    """One rated game: the field read from every stream, then delivered to each in turn."""
    field = [
        Placing(
            player_id=p,
            place=place,
            rating=fold_rating(c for _, c in streams.get(p, [])),
            version=len(streams.get(p, [])),
        )
        for place, tied in enumerate(order, 1)
        for p in tied
    ]
    for p in (p for tied in order for p in tied):
        mine = streams.setdefault(p, [])
        before = fold_rating(c for _, c in mine)
        mine.append((len(mine) + 1, decide_rating(p, game, "t", field, before)))


@given(st.lists(st.permutations(["a", "b", "c", "d"]), min_size=1, max_size=12))
def test_rule_ratings_recomputed_from_the_log_are_the_stored_ones(
    games: list[list[str]],
) -> None:
    streams: dict[str, list[tuple[int, RatingChanged]]] = {}
    for n, order in enumerate(games):
        play(streams, f"g{n}", [[order[0]], [order[1], order[2]], [order[3]]])
    assert check_ratings(streams) == []


def test_rule_the_recomputation_finds_a_change_that_is_not_the_models() -> None:
    streams: dict[str, list[tuple[int, RatingChanged]]] = {}
    play(streams, "g1", [["a"], ["b"]])
    play(streams, "g2", [["b"], ["a"]])
    assert check_ratings(streams) == []
    version, change = streams["a"][1]
    bent = msgspec.structs.replace(
        change, after=msgspec.structs.replace(change.after, mu=change.after.mu + 1)
    )
    forged = {**streams, "a": [streams["a"][0], (version, bent)]}
    assert [m.problem.split(" ")[0] for m in check_ratings(forged)] == ["after"]
    # a stale own rating, another's rating they never had, a game rated twice:
    stale = msgspec.structs.replace(change, before=NEW)
    assert any(
        m.problem.startswith("before")
        for m in check_ratings({**streams, "a": [streams["a"][0], (2, stale)]})
    )
    other = msgspec.structs.replace(
        change,
        field=tuple(
            msgspec.structs.replace(p, rating=NEW) if p.player_id == "b" else p
            for p in change.field
        ),
    )
    assert any(
        "b's rating" in m.problem
        for m in check_ratings({**streams, "a": [streams["a"][0], (2, other)]})
    )
    twice = [*streams["a"], (3, msgspec.structs.replace(change, before=change.after))]
    assert any(m.problem == "rated twice" for m in check_ratings({**streams, "a": twice}))


def test_a_persons_record_folds_their_rating_and_lists_its_changes() -> None:
    streams: dict[str, list[tuple[int, RatingChanged]]] = {}
    play(streams, "g1", [["a"], ["b"]])
    play(streams, "g2", [["a"], ["b"]])
    named = (b'{"type":"account_registered","name":"Ann"}',)
    log = [("account_registered", named[0])] + [
        ("rating_changed", msgspec.json.encode(c)) for _, c in streams["a"]
    ]
    record = player_record(log)
    assert record.name == "Ann" and record.version == 3
    assert record.rating == streams["a"][-1][1].after and record.rating.games == 2
    listed = rating_changes((v, t, d) for v, (t, d) in enumerate(log, 1))
    assert [(v, c.game_id) for v, c in listed] == [(2, "g1"), (3, "g2")]
    assert player_record(log[:1]).rating == NEW
