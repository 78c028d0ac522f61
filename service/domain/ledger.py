"""Coins, XP and badges: the money rules (seed §9), pure.

Coins are money, so every movement is an event in the owner's `wallet-<player id>` stream.
A wallet and a table live on different shards of a distributed store (docs/scaling.md), so no
transaction writes both: a hold is decided on the wallet alone (it is refused there when the
balance is short) and then taken by the table; everything the table decides about the money
(give a stake back, put it in the pot, pay the pot, reward a finish) is a transfer
(`service.domain.transfers`) written to the table's outbox with the table event and delivered
to the wallet afterwards, exactly once:

- `coins_granted`: the only mints, a sign-up grant and game rewards;
- `stake_held`: joining (or opening) a buy-in table before its first game reserves the stake;
- `stake_released`: leaving before that game is dealt gives it back;
- `stake_committed`: at the start the stake goes into the pot (the table's `pot_formed`);
- `pot_paid`: a share of a pot, to a winner or back to its payer when a game is abandoned.

Only a table's first game has a buy-in (seed §9: "Play again ... has no buy-in"), so sitting
down between games holds nothing, and a hold lives only until its table's first deal: it goes
into the pot then, or back to the wallet when its holder leaves first (or, for a hold left by
an older version, at the next deal).

The invariants, checked by tests: wallet balances + held stakes + open pots = coins granted;
no balance or hold is ever negative; no hold outlives the game it was held for. The amounts
below are documented in the README.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec
from msgspec.structs import replace

from service.domain.codec import TaggedCodec, tag_of
from service.domain.refusals import NotAllowedNow

SIGN_UP_COINS = 1_000
FINISH_COINS = 10  # every person who finishes an online game
WIN_COINS = 20  # on top, for each winner
# Game rewards per account per UTC day, at most: two accounts of one person playing each other
# all day earn this much each, and no more (the sign-up grants are bounded by the per-address
# registration limit, service/usecases/identity.py). XP and badges are not capped.
DAILY_REWARD_COINS = 100
FINISH_XP = 50
WIN_XP = 50
XP_PER_LEVEL = 500
BIG_TAKE_STINGS = 20

GrantReason = Literal["sign_up", "game_reward"]
PaidReason = Literal["won", "refund"]


class InsufficientCoins(NotAllowedNow):
    """A wallet short of a buy-in: not a move of a game, so not a `RuleViolation`."""

    code = "insufficient-coins"
    title = "Not enough coins for this buy-in"


# --- wallet events ---------------------------------------------------------------------------


class WalletEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


class CoinsGranted(WalletEvent, frozen=True, tag="coins_granted"):
    amount: int
    reason: GrantReason
    game_id: str | None = None
    day: str | None = None  # a game reward's UTC date (ISO), for the daily cap


class StakeHeld(WalletEvent, frozen=True, tag="stake_held"):
    table_id: str
    amount: int
    hold_id: str | None = None  # the table's `buy_in_held` names it (None before holds had ids)


class StakeReleased(WalletEvent, frozen=True, tag="stake_released"):
    table_id: str
    amount: int
    hold_id: str | None = None


class StakeCommitted(WalletEvent, frozen=True, tag="stake_committed"):
    table_id: str
    game_id: str
    amount: int
    hold_id: str | None = None


class PotPaid(WalletEvent, frozen=True, tag="pot_paid"):
    game_id: str
    amount: int
    reason: PaidReason


WalletEventUnion = CoinsGranted | StakeHeld | StakeReleased | StakeCommitted | PotPaid


class WalletState(msgspec.Struct, frozen=True, kw_only=True):
    balance: int = 0  # spendable
    held: int = 0  # reserved for buy-in tables not started yet
    granted: int = 0  # every coin ever minted to this wallet
    holds: tuple[tuple[str, int], ...] = ()  # (table id, coins held for it), none zero
    reward_day: str | None = None  # the UTC day of the last game reward...
    rewarded: int = 0  # ...and the reward coins granted that day
    version: int = 0

    def held_for(self, table_id: str) -> int:
        return next((amount for table, amount in self.holds if table == table_id), 0)

    def _hold(self, table_id: str, change: int) -> tuple[tuple[str, int], ...]:
        amount = self.held_for(table_id) + change
        others = tuple(h for h in self.holds if h[0] != table_id)
        return (*others, (table_id, amount)) if amount else others


def evolve_wallet(state: WalletState, event: WalletEventUnion) -> WalletState:
    version = state.version + 1
    match event:
        case CoinsGranted():
            state = replace(
                state,
                balance=state.balance + event.amount,
                granted=state.granted + event.amount,
                version=version,
            )
            if event.reason == "game_reward" and event.day is not None:
                same_day = event.day == state.reward_day
                rewarded = (state.rewarded if same_day else 0) + event.amount
                state = replace(state, reward_day=event.day, rewarded=rewarded)
            return state
        case StakeHeld():
            return replace(
                state,
                balance=state.balance - event.amount,
                held=state.held + event.amount,
                holds=state._hold(event.table_id, event.amount),
                version=version,
            )
        case StakeReleased():
            return replace(
                state,
                balance=state.balance + event.amount,
                held=state.held - event.amount,
                holds=state._hold(event.table_id, -event.amount),
                version=version,
            )
        case StakeCommitted():
            return replace(
                state,
                held=state.held - event.amount,
                holds=state._hold(event.table_id, -event.amount),
                version=version,
            )
        case PotPaid():
            return replace(state, balance=state.balance + event.amount, version=version)
    raise AssertionError(f"unknown wallet event {event!r}")  # pragma: no cover


def decide_hold(
    wallet: WalletState, table_id: str, stake: int, hold_id: str
) -> list[WalletEventUnion]:
    """Reserve a buy-in; refused if the balance is short."""
    if stake <= 0:
        return []
    if wallet.balance < stake:
        raise InsufficientCoins(f"The buy-in is {stake} coins; you have {wallet.balance}.")
    return [StakeHeld(table_id=table_id, amount=stake, hold_id=hold_id)]


def split_pot(pot: int, winners: Sequence[str]) -> list[tuple[str, int]]:
    """The pot shared evenly among the winners, in seat order. The coins that do not divide
    evenly go one each to the first winners in seat order, so no coin is ever lost."""
    if not winners or pot <= 0:
        return []
    share, remainder = divmod(pot, len(winners))
    return [(who, share + (1 if i < remainder else 0)) for i, who in enumerate(winners)]


# --- XP, levels and badges -------------------------------------------------------------------


class GameRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One finished online game as a person's record (`game_recorded` in `player-<id>`)."""

    game_id: str
    stings: int
    won: bool
    biggest_take: int  # the most stings taken in one go (a sixth bee or a too-low stem)
    xp: int


class PlayerStats(msgspec.Struct, frozen=True, kw_only=True):
    games_played: int = 0
    games_won: int = 0
    xp: int = 0
    badges: tuple[str, ...] = ()

    @property
    def level(self) -> int:
        return 1 + self.xp // XP_PER_LEVEL


BADGES: dict[str, str] = {
    "first_game": "Finished a first online game",
    "first_win": "Won an online game",
    "clean_sweep": "Won an online game without a single sting",
    "big_take_win": f"Took a stem worth {BIG_TAKE_STINGS}+ stings in one go and still won",
    "ten_games": "Finished 10 online games",
    "hundred_games": "Finished 100 online games",
}


class Badge(msgspec.Struct, frozen=True, kw_only=True):
    """A badge earned in online games.

    Attributes:
        name: The badge's name (a key of the README's list: `first_game`, `first_win`, …).
        description: What earned it.
    """

    name: str
    description: str


def badges(names: Sequence[str]) -> tuple[Badge, ...]:
    """Badges by name, each with its description."""
    return tuple(Badge(name=n, description=BADGES.get(n, n)) for n in names)


def earned_badges(stats: PlayerStats, record: GameRecord) -> tuple[str, ...]:
    """Badges this record earns, given the stats before it (each badge is earned once)."""
    played = stats.games_played + 1
    earned = {
        "first_game": played >= 1,
        "first_win": record.won,
        "clean_sweep": record.won and record.stings == 0,
        "big_take_win": record.won and record.biggest_take >= BIG_TAKE_STINGS,
        "ten_games": played >= 10,
        "hundred_games": played >= 100,
    }
    return tuple(name for name in BADGES if earned[name] and name not in stats.badges)


def record_game(stats: PlayerStats, record: GameRecord) -> PlayerStats:
    return PlayerStats(
        games_played=stats.games_played + 1,
        games_won=stats.games_won + (1 if record.won else 0),
        xp=stats.xp + record.xp,
        badges=(*stats.badges, *earned_badges(stats, record)),
    )


def reward(won: bool) -> tuple[int, int]:
    """(coins, xp) for a person who finished an online game, before the daily cap."""
    return (FINISH_COINS + (WIN_COINS if won else 0), FINISH_XP + (WIN_XP if won else 0))


def capped_reward(wallet: WalletState, coins: int, day: str) -> int:
    """The reward coins `wallet` may still be granted on `day`: what is left of
    `DAILY_REWARD_COINS` after the day's earlier rewards."""
    earlier = wallet.rewarded if wallet.reward_day == day else 0
    return max(0, min(coins, DAILY_REWARD_COINS - earlier))


_codec: TaggedCodec[WalletEventUnion] = TaggedCodec(WalletEventUnion)


def encode_wallet_event(event: WalletEvent) -> bytes:
    return _codec.encode(event)


def decode_wallet_event(data: bytes | str) -> WalletEventUnion:
    return _codec.decode(data)


def wallet_event_type(event: WalletEvent) -> str:
    return tag_of(event)
