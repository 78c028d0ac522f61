"""What one caller may see of a game: pure functions from state (or events) to views.

One piece, on purpose: this is the one place where hiding is decided, for views and for every
event type alike, so that a reviewer checking that nothing leaks reads one module.

The single rule: nobody sees a bee the rules hide from them. Until the game ends that is every
other seat's hand, and every other seat's tapped or confirmed bee before the picks are revealed.
Everything a client receives about a game passes through `game_view` or `visible_event`.

A spectator (`viewer=None`) is nobody's seat: every hand and every unrevealed pick is hidden.

Views are drawn directly by a board: every bee number comes with its stings beside it
(`hand_stings`, `bee_stings`, `pile_stings`, and a `stings` field on picks, forecasts and the
too-low choice), so no client re-implements seed §2.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Literal

import msgspec

from service.domain import fairness
from service.domain.ledger import (
    DAILY_REWARD_COINS,
    Badge,
    CoinsGranted,
    GameRecord,
    PaidReason,
    PlayerStats,
    WalletEventUnion,
    badges,
    earned_badges,
    record_game,
    reward,
)
from service.domain.ratings import RatingChanged
from service.domain.rules.bees import level_of
from service.domain.rules.cards import STEM_CAPACITY, TURNS, pile_stings, stings
from service.domain.rules.clock import IDLE_TURNS_TO_ABANDON
from service.domain.rules.engine import (
    Forecast,
    GameState,
    Phase,
    cheapest_stem,
    forecast,
    is_sixth,
    stem_costs,
)
from service.domain.rules.events import (
    BeeLevel,
    BeeTapped,
    ClockPlay,
    ClockSettings,
    DealProof,
    EndReason,
    Event,
    GameStarted,
    PickConfirmed,
    SeatInfo,
    SeatKind,
)
from service.domain.seeds import seen_by
from service.domain.table_events import (
    PotFormed,
    PotSettled,
    SeedContributed,
    SeedRevealed,
    TableEventUnion,
)
from service.domain.tables import TableState
from service.domain.transfers import GrantReward

SeatStatus = Literal["picking", "tapped", "confirmed", "waiting", "left"]
ViewPhase = Literal["picking", "choosing", "ended"]


def view_phase(phase: Phase) -> ViewPhase:
    """A game's phase as a client sees it: `choosing` and `ended` as they are, anything else
    (dealt, flying, and before the first turn) `picking`."""
    return "ended" if phase == "ended" else "choosing" if phase == "choosing" else "picking"


class SeatView(msgspec.Struct, frozen=True, kw_only=True):
    """One seat of the game, as everyone sees it.

    Attributes:
        seat: The seat number, from 1.
        name: The name shown for the seat (a bee player's is Buzz, Bumble, …).
        kind: `person` or `bee` (a bee player, played by the server).
        stings: Stings on this seat's pile so far (the score: fewest wins).
        bees_taken: How many bees are on this seat's pile.
        pile: The bees this seat has taken, in the order taken (public: they came off stems).
        pile_stings: The stings of each bee in `pile`, index by index.
        status: `picking` (nothing tapped yet), `tapped`, `confirmed`, `waiting` (not a
            picking phase) or `left` (left the game; their stings stop counting).
        level: How a bee player chooses (README "The bee players"); None for a person.
    """

    seat: int
    name: str
    kind: SeatKind
    stings: int
    bees_taken: int
    pile: tuple[int, ...] = ()
    pile_stings: tuple[int, ...] = ()
    status: SeatStatus
    # How a bee player chooses (README "The bee players"); None for a person.
    level: BeeLevel | None = None


class StemView(msgspec.Struct, frozen=True, kw_only=True):
    """One of the 4 flower stems.

    Attributes:
        stem: The stem number, 1 to 4.
        bees: The bees on the stem, bottom to top; the top one is the one bees land above.
        bee_stings: The stings of each bee in `bees`, index by index.
        stings: The stings of all the bees on the stem (what taking it would cost).
        sixth_bee: The stem is full (`capacity` bees): the next bee to land here is the sixth
            and takes them.
        capacity: How many bees a stem holds (seed §4: 5); the next is the sixth bee.
    """

    stem: int
    bees: tuple[int, ...]
    bee_stings: tuple[int, ...]
    stings: int
    sixth_bee: bool
    capacity: int


class PickView(msgspec.Struct, frozen=True, kw_only=True):
    """A revealed pick.

    Attributes:
        seat: Whose pick it was.
        bee: The bee picked.
        stings: The stings that bee carries.
    """

    seat: int
    bee: int
    stings: int


class ForecastView(msgspec.Struct, frozen=True, kw_only=True):
    """Where a bee of your hand would land if nobody else's got there first (seed §3); only
    a forecast, since lower bees fly first.

    Attributes:
        bee: The bee in your hand.
        stings: The stings that bee carries.
        too_low: It is lower than every stem's top bee: you would choose a stem to take.
        stem: The stem it would land on; null when too low.
        sixth: It would be the sixth bee on a full stem and take the 5 there.
        takes: The bees it would take (the full stem's, or empty).
        takes_stings: The stings of `takes`.
    """

    bee: int
    stings: int
    too_low: bool
    stem: int | None = None
    sixth: bool = False
    takes: tuple[int, ...] = ()
    takes_stings: int = 0


class StemCostView(msgspec.Struct, frozen=True, kw_only=True):
    """What taking one stem would cost the too-low bee's player.

    Attributes:
        stem: The stem number, 1 to 4.
        bees: How many bees it holds.
        stings: The stings they carry.
    """

    stem: int
    bees: int
    stings: int


class ChoiceView(msgspec.Struct, frozen=True, kw_only=True):
    """A too-low bee is waiting for its player to choose a stem to take (seed §5).

    Attributes:
        seat: The seat whose bee is too low.
        bee: The too-low bee.
        stings: The stings that bee carries.
        yours: It is the caller's choice to make (send `take_stem`).
        costs: What each stem would cost, stem 1 first.
        cheapest: The cheapest stem: fewest stings, then fewest bees, then lowest number
            (what the clock or a bee player takes).
        deadline: When the choice clock runs out and the cheapest is taken (online); null
            when untimed.
    """

    seat: int
    bee: int
    stings: int
    yours: bool
    costs: tuple[StemCostView, ...]
    cheapest: int
    deadline: datetime | None = None


class SeatScore(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's final score.

    Attributes:
        seat: The seat number, from 1.
        stings: Its stings at the end (fewest wins).
        winner: It is among the winners (tied seats share the win).
    """

    seat: int
    stings: int
    winner: bool


class ResultView(msgspec.Struct, frozen=True, kw_only=True):
    """How the game ended.

    Attributes:
        scores: Every seat's final stings, keyed by seat number (seat 1 first).
        winners: The winning seat numbers; empty when the game was abandoned.
        reason: `finished` (10 turns), `last_person_standing` (everyone else left) or
            `abandoned` (3 turns in a row with nobody picking; buy-ins go back).
        stings: Deprecated (CHANGELOG.md, Unreleased; use `scores`): final stings by seat − 1,
            index 0 is seat 1. Removed in the next major version.
    """

    scores: tuple[SeatScore, ...]
    winners: tuple[int, ...]
    reason: EndReason
    stings: Annotated[
        tuple[int, ...],
        msgspec.Meta(extra_json_schema={"deprecated": True}),
    ]


class PotSeatView(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's part in a buy-in game's pot.

    Attributes:
        seat: The seat number, from 1.
        buy_in: The coins this seat put into the pot at the deal.
        paid: The coins the pot paid this seat: its share of the win, its buy-in back after an
            abandoned game, or 0 (a seat that did not win; a leaver's buy-in stays in the pot).
    """

    seat: int
    buy_in: int
    paid: int


class PotView(msgspec.Struct, frozen=True, kw_only=True):
    """What an ended buy-in game's pot held and paid, seat by seat (seed §9 "Buy-in"). Public,
    as the table's buy-in, who sat down and the result are: it names no wallet.

    Attributes:
        coins: The pot: every buy-in of the game.
        reason: `won`: paid to the winners, tied winners splitting it (the coins that do not
            divide go one each to the first winners in seat order); `refund`: the game was
            abandoned and every buy-in went back, leavers' too.
        seats: Every seat that bought in, seat 1 first.
    """

    coins: int
    reason: PaidReason
    seats: tuple[PotSeatView, ...]


RewardStatus = Literal["pending", "delivered"]


class RewardView(msgspec.Struct, frozen=True, kw_only=True):
    """What finishing an online game earned the caller (seed §9 "Coins, XP and badges"): theirs
    alone, never shown to another seat or a spectator. A reward travels from the table to the
    wallet and the record through the table's outbox (docs/architecture.md, "Coins between
    shards"), most often before the move that ended the game is answered; until it arrives,
    `status` is `pending` and what its delivery decides (the coins the day's cap leaves, the
    badges) is null: ask again.

    Attributes:
        status: `delivered` (in your wallet and on your record) or `pending` (on its way).
        xp: The XP the game earned (never capped).
        coins_earned: The reward coins the game earns before the daily cap.
        coins: The reward coins granted: `coins_earned`, or less once the day's cap is
            reached; null while pending.
        capped: The daily cap cut the reward (`coins` < `coins_earned`); null while pending.
        daily_cap: The reward coins an account may be granted in one UTC day.
        badges: The badges this game unlocked, in the order earned; null while pending.
    """

    status: RewardStatus
    xp: int
    coins_earned: int
    coins: int | None
    capped: bool | None
    daily_cap: int
    badges: tuple[Badge, ...] | None


class SeatRatingView(msgspec.Struct, frozen=True, kw_only=True):
    """What a rated game did to the rating of the person in one seat (public, as ratings are
    on profiles). A change travels through the table's outbox like a reward: until it
    arrives, `status` is `pending` and the points are null.

    Attributes:
        seat: The seat, from 1.
        status: `delivered` or `pending` (on its way: ask again).
        before: The rating's points before the game; null while pending.
        after: After it; null while pending.
        change: `after` - `before`; null while pending.
        provisional: The rating after it is still provisional; null while pending.
    """

    seat: int
    status: RewardStatus
    before: int | None = None
    after: int | None = None
    change: int | None = None
    provisional: bool | None = None


def seat_rating_view(seat: int, change: RatingChanged | None) -> SeatRatingView:
    if change is None:
        return SeatRatingView(seat=seat, status="pending")
    return SeatRatingView(
        seat=seat,
        status="delivered",
        before=change.before.points,
        after=change.after.points,
        change=change.change,
        provisional=change.after.provisional,
    )


class GameView(msgspec.Struct, frozen=True, kw_only=True):
    """A game as the caller may see it: their own hand, never another's.

    Attributes:
        game_id: The game.
        table_id: The table it is played at.
        version: The number of events in the game's log; pass it as `after` to follow on.
        turn: The turn, 1 to 10 (0 before the first).
        phase: `picking` (everyone picks a bee), `choosing` (a too-low bee's player chooses a
            stem) or `ended`.
        you: Your seat, or null for a spectator.
        hand: Your hand, ascending (empty for a spectator).
        hand_stings: The stings of each bee in `hand`, index by index.
        tapped: The bee you tapped this turn (changeable), if any.
        confirmed: The bee you confirmed this turn (final), if any.
        seats: Every seat: name, kind, stings, pile and status.
        stems: The 4 stems, stem 1 first.
        forecast: Where each bee of your hand would land, while you pick.
        last_picks: The picks most recently revealed, lowest first (the order they flew in).
        choice: The too-low choice being waited for, if any.
        deadline: When the running turn or choice clock runs out (online games); null when
            untimed or ended.
        server_time: The server's clock as it answered, to draw the clock line against.
        result: How the game ended, once it has.
        head_hash: GetGame: the hash-chain link of event `version`, the head (docs/fairness.md);
            keep it to hold the game's export to it (`--expect-head VERSION:HASH`). Null in other
            responses.
        turns: How many turns the game lasts (seed §6: 10, one for each bee in a hand).
        idle_turns_to_end: How many turns in a row with nobody picking end the game as
            abandoned (seed §7: 3).
        pot: What the pot held and paid, seat by seat, once a game with a buy-in has ended
            (getGame, and the move that ends the game); null otherwise.
        reward: What the game earned you, once an online game you finished with an account
            has ended (getGame, and the move that ends the game); null for a spectator, a
            guest, a seat that left, an abandoned or solo game, and in other responses.
        ratings: What a rated game did to each rated person's rating, seat by seat, once it
            has ended (getGame, and the move that ends the game); null for a casual table's
            game, an abandoned one, and in other responses.
    """

    game_id: str
    table_id: str
    version: int
    turn: int
    phase: ViewPhase
    you: int | None
    hand: tuple[int, ...]
    hand_stings: tuple[int, ...]
    tapped: int | None
    confirmed: int | None
    seats: tuple[SeatView, ...]
    stems: tuple[StemView, ...]
    forecast: tuple[ForecastView, ...]
    last_picks: tuple[PickView, ...]
    choice: ChoiceView | None = None
    deadline: datetime | None = None
    server_time: datetime | None = None
    result: ResultView | None = None
    # getGame: the hash-chain link of event `version`, the head (docs/fairness.md); keep it to
    # hold the game's export to it (`--expect-head VERSION:HASH`). Null in other responses.
    head_hash: str | None = None
    turns: int
    idle_turns_to_end: int
    pot: PotView | None = None
    reward: RewardView | None = None
    ratings: tuple[SeatRatingView, ...] | None = None


def _status(state: GameState, seat_number: int) -> SeatStatus:
    seat = state.seat(seat_number)
    if seat.left:
        return "left"
    if state.phase != "picking":
        return "waiting"
    if seat.confirmed is not None:
        return "confirmed"
    if seat.tapped is not None:
        return "tapped"
    return "picking"


def game_view(state: GameState, viewer: int | None, now: datetime | None = None) -> GameView:
    """The game as seen from seat `viewer` (None: a spectator, who sees no hand)."""
    me = state.seat(viewer) if viewer is not None else None
    phase = view_phase(state.phase)
    hand = me.hand if me is not None else ()
    choice = None
    if state.phase == "choosing" and state.pending is not None:
        choice = ChoiceView(
            seat=state.pending.seat,
            bee=state.pending.bee,
            stings=stings(state.pending.bee),
            yours=state.pending.seat == viewer,
            costs=tuple(
                StemCostView(stem=c.stem, bees=c.bees, stings=c.stings)
                for c in stem_costs(state.stems)
            ),
            cheapest=cheapest_stem(state.stems),
            deadline=state.deadline,
        )
    result = None
    if state.phase == "ended":
        assert state.end_reason is not None
        result = ResultView(
            scores=tuple(
                SeatScore(seat=s.number, stings=s.stings, winner=s.number in state.winners)
                for s in state.seats
            ),
            winners=state.winners,
            reason=state.end_reason,
            stings=tuple(s.stings for s in state.seats),
        )
    picking = state.phase == "picking" and me is not None and me.playing
    return GameView(
        game_id=state.game_id,
        table_id=state.table_id,
        version=state.version,
        turn=state.turn,
        phase=phase,
        you=viewer,
        hand=hand,
        hand_stings=tuple(stings(bee) for bee in hand),
        tapped=me.tapped if me is not None else None,
        confirmed=me.confirmed if me is not None else None,
        seats=tuple(
            SeatView(
                seat=s.number,
                name=s.info.name,
                kind=s.info.kind,
                stings=s.stings,
                bees_taken=len(s.pile),
                pile=s.pile,
                pile_stings=tuple(stings(bee) for bee in s.pile),
                status=_status(state, s.number),
                level=level_of(state, s.number) if s.is_bee else None,
            )
            for s in state.seats
        ),
        stems=tuple(
            StemView(
                stem=i + 1,
                bees=bees,
                bee_stings=tuple(stings(bee) for bee in bees),
                stings=pile_stings(bees),
                sixth_bee=is_sixth(bees),
                capacity=STEM_CAPACITY,
            )
            for i, bees in enumerate(state.stems)
        ),
        forecast=tuple(_forecast(forecast(state.stems, bee)) for bee in hand) if picking else (),
        last_picks=tuple(
            PickView(seat=p.seat, bee=p.bee, stings=stings(p.bee)) for p in state.revealed
        ),
        choice=choice,
        deadline=state.deadline if state.phase in ("picking", "choosing") else None,
        server_time=now,
        result=result,
        turns=TURNS,
        idle_turns_to_end=IDLE_TURNS_TO_ABANDON,
    )


def pot_view(state: GameState, formed: PotFormed, settled: PotSettled) -> PotView:
    """The pot of game `state` as its table formed (`pot_formed`) and paid it (`pot_settled`),
    by seat: what each person put in and what came back to them."""
    seat_of = {s.info.player_id: s.number for s in state.seats if s.info.player_id is not None}
    paid: dict[str, int] = {}
    for payout in settled.payouts:
        paid[payout.player_id] = paid.get(payout.player_id, 0) + payout.amount
    seats = sorted(
        (
            PotSeatView(
                seat=seat_of[stake.player_id],
                buy_in=stake.amount,
                paid=paid.get(stake.player_id, 0),
            )
            for stake in formed.stakes
            if stake.player_id in seat_of
        ),
        key=lambda s: s.seat,
    )
    return PotView(
        coins=sum(stake.amount for stake in formed.stakes),
        reason=settled.reason,
        seats=tuple(seats),
    )


def reward_view(
    game_id: str,
    owed: GrantReward | None,
    records: Sequence[GameRecord],
    wallet: Sequence[WalletEventUnion],
) -> RewardView | None:
    """What game `game_id` earned one person, from the truth of it: `owed`, their reward for it
    still in the table's outbox (read first), then their record (`game_recorded`, in order)
    and their wallet's events (read after). A reward on the record is delivered, whatever the
    outbox still holds (its row is deleted after the delivery); one only in the outbox is on
    its way; neither: the game earned them nothing."""
    stats = PlayerStats()
    for record in records:
        if record.game_id == game_id:
            earned = reward(record.won)[0]
            coins = sum(
                e.amount
                for e in wallet
                if isinstance(e, CoinsGranted)
                and e.reason == "game_reward"
                and e.game_id == game_id
            )
            return RewardView(
                status="delivered",
                xp=record.xp,
                coins_earned=earned,
                coins=coins,
                capped=coins < earned,
                daily_cap=DAILY_REWARD_COINS,
                badges=badges(earned_badges(stats, record)),
            )
        stats = record_game(stats, record)
    if owed is None:
        return None
    return RewardView(
        status="pending",
        xp=owed.record.xp,
        coins_earned=reward(owed.won)[0],
        coins=None,
        capped=None,
        daily_cap=DAILY_REWARD_COINS,
        badges=None,
    )


def _forecast(f: Forecast) -> ForecastView:
    return ForecastView(
        bee=f.bee,
        stings=stings(f.bee),
        too_low=f.too_low,
        stem=f.stem,
        sixth=f.sixth,
        takes=f.takes,
        takes_stings=f.takes_stings,
    )


class VisibleGameStarted(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="game_started"
):
    """The deal (`game_started`) as the viewer may see it: until the game ends, every hand but
    the viewer's own is null (all of them for a spectator); after it ends, every hand.

    Attributes:
        game_id: The game.
        table_id: Its table.
        seats: Who sits in each seat, seat 1 first.
        hands: Each seat's hand of 10, seat 1 first: null for a hand the viewer may not see.
        stems: The 4 bees that start STEM 1 to STEM 4.
        clock: The turn and choice durations of a timed (online) game; null for solo.
        proof: What locks the deal in before turn 1 (docs/fairness.md); null for a game dealt
            before fair deals.
    """

    game_id: str
    table_id: str
    seats: tuple[SeatInfo, ...]
    hands: tuple[tuple[int, ...] | None, ...]
    stems: tuple[int, ...]
    clock: ClockSettings | None = None
    proof: DealProof | None = None


class VisibleBeeTapped(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="bee_tapped"
):
    """A seat tapped a bee (`bee_tapped`: saved, changeable). Other seats and spectators see
    that it tapped, not what: `bee` is null for them until the game ends.

    Attributes:
        seat: The seat that tapped.
        bee: The bee tapped; null unless it is the viewer's own seat or the game has ended.
    """

    seat: int
    bee: int | None


class VisiblePickConfirmed(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="pick_confirmed"
):
    """A seat's pick is final (`pick_confirmed`). Other seats and spectators see that it is in,
    not what: `bee` and `by_clock` are null for them until the game ends (the picks are
    revealed in `picks_revealed` when everyone is in).

    Attributes:
        seat: The seat whose pick is in.
        bee: The bee picked; null unless it is the viewer's own seat or the game has ended.
        by_clock: `none` if the seat confirmed it, `tapped` if the turn clock flew its tapped
            bee, `lowest` if the clock flew its lowest bee; null while `bee` is (how the clock
            played says something of the rest of the hand).
    """

    seat: int
    bee: int | None
    by_clock: ClockPlay | None


VisibleEventData = Event | VisibleGameStarted | VisibleBeeTapped | VisiblePickConfirmed


def visible_event(event: Event, viewer: int | None, game_over: bool) -> VisibleEventData:
    """An event as `viewer` (None: a spectator) may see it: hidden bees become null until the
    game is over. The three events that can hide something always come in their visible form,
    so a client sees one shape per event type."""
    match event:
        case GameStarted():
            return VisibleGameStarted(
                game_id=event.game_id,
                table_id=event.table_id,
                seats=event.seats,
                hands=tuple(
                    hand if game_over or seat.seat == viewer else None
                    for seat, hand in zip(event.seats, event.hands, strict=True)
                ),
                stems=event.stems,
                clock=event.clock,
                proof=event.proof,
            )
        case BeeTapped():
            shown = game_over or event.seat == viewer
            return VisibleBeeTapped(seat=event.seat, bee=event.bee if shown else None)
        case PickConfirmed():
            shown = game_over or event.seat == viewer
            return VisiblePickConfirmed(
                seat=event.seat,
                bee=event.bee if shown else None,
                by_clock=event.by_clock if shown else None,
            )
        case _:
            return event


class _VisibleSeed(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """A person's seed for a table's next game, as the viewer may see it: another person's
    seed itself is null until the game it seeds has been dealt (docs/fairness.md); its hash
    always shows.

    Attributes:
        game_id: The game the seed is for.
        player_id: Whose seed it is.
        seed: The seed, lowercase hex; null for another person's seed until its game is dealt.
        seed_hash: The seed's commitment hash (`fairness.seed_commitment`), lowercase hex.
    """

    game_id: str
    player_id: str
    seed: str | None
    seed_hash: str


class VisibleSeedContributed(_VisibleSeed, frozen=True, tag="seed_contributed"):
    """A `seed_contributed` as the viewer may see it."""


class VisibleSeedRevealed(_VisibleSeed, frozen=True, tag="seed_revealed"):
    """A `seed_revealed` as the viewer may see it."""


VisibleTableEventData = TableEventUnion | VisibleSeedContributed | VisibleSeedRevealed


def visible_table_event(
    event: TableEventUnion, viewer: str | None, state: TableState
) -> VisibleTableEventData:
    """A table event as `viewer` may see it now (`seeds.seen_by` decides what hides), in one
    shape per type: a seed event always has both `seed` (null while hidden) and `seed_hash`."""
    if isinstance(event, SeedContributed | SeedRevealed):
        seen = seen_by(event, viewer, state)
        digest = fairness.seed_commitment(event.game_id, event.player_id, bytes.fromhex(event.seed))
        kind = VisibleSeedRevealed if isinstance(event, SeedRevealed) else VisibleSeedContributed
        return kind(
            game_id=event.game_id,
            player_id=event.player_id,
            seed=event.seed if seen is event else None,
            seed_hash=digest.hex(),
        )
    return event
