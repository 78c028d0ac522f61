"""The named rules of `flight.py` and `clock.py` against the seed's words, on random stems.

The engine's cascade, the rollouts and the bees call these functions in their hot loops, so they
are written for speed (counters, one pass); these hold each to a plain statement of its rule.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from service.domain.rules.cards import STEM_CAPACITY, pile_stings
from service.domain.rules.clock import is_idle_turn
from service.domain.rules.events import ClockPlay, Pick, SeatInfo, SeatKind
from service.domain.rules.flight import is_sixth, landing_stem, too_low_stem
from service.domain.rules.state import SeatState


@st.composite
def stems_and_bee(draw: st.DrawFn) -> tuple[tuple[tuple[int, ...], ...], int]:
    """Four stems of 1 to 5 distinct bees of the biggest deck, and a bee on none of them."""
    sizes = draw(st.lists(st.integers(1, STEM_CAPACITY), min_size=4, max_size=4))
    bees = draw(st.permutations(range(1, 85)))
    stems, at = [], 0
    for size in sizes:
        stems.append(tuple(bees[at : at + size]))
        at += size
    return tuple(stems), bees[at]


@given(stems_and_bee())
def test_property_a_bee_lands_on_the_stem_whose_top_is_lower_and_closest(
    case: tuple[tuple[tuple[int, ...], ...], int],
) -> None:
    stems, bee = case
    below = [(stem[-1], number) for number, stem in enumerate(stems, start=1) if stem[-1] < bee]
    assert landing_stem(stems, bee) == (max(below)[1] if below else None)
    assert landing_stem([list(stem) for stem in stems], bee) == landing_stem(stems, bee)


@given(stems_and_bee())
def test_property_the_too_low_stem_is_the_fewest_stings_then_bees_then_lowest_number(
    case: tuple[tuple[tuple[int, ...], ...], int],
) -> None:
    stems, _ = case
    expected = min(range(4), key=lambda i: (pile_stings(stems[i]), len(stems[i]), i)) + 1
    assert too_low_stem(stems) == expected
    assert too_low_stem(stems, [pile_stings(stem) for stem in stems]) == expected


@given(st.lists(st.integers(1, 84), min_size=0, max_size=8))
def test_property_the_sixth_bee_is_one_landing_on_a_full_stem(stem: list[int]) -> None:
    assert is_sixth(stem) == (len(stem) >= STEM_CAPACITY)


seat_cases = st.lists(
    st.tuples(
        st.sampled_from(["person", "bee"]),
        st.sampled_from(["none", "tapped", "lowest"]),
        st.booleans(),
    ),
    min_size=2,
    max_size=8,
)


@given(seat_cases)
def test_property_a_turn_is_idle_when_the_clock_chose_every_persons_pick_as_their_lowest(
    cases: list[tuple[SeatKind, ClockPlay, bool]],
) -> None:
    seats = [
        SeatState(info=SeatInfo(seat=n, name=f"s{n}", kind=kind), hand=(n,), by_clock=by_clock)
        for n, (kind, by_clock, _) in enumerate(cases, start=1)
    ]
    picks = [
        Pick(seat=s.number, bee=s.number)
        for s, (_, _, picked) in zip(seats, cases, strict=True)
        if picked
    ]
    people = [seats[p.seat - 1] for p in picks if seats[p.seat - 1].info.kind == "person"]
    expected = bool(people) and all(s.by_clock == "lowest" for s in people)
    assert is_idle_turn(seats, picks) == expected
