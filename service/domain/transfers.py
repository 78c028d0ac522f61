"""Money in flight from a table to a wallet (seed §9 "Buy-in", "Coins, XP and badges"), pure.

A table and a wallet live on different shards of a distributed store (docs/scaling.md,
"Buy-ins across shards"), so no transaction writes both. What a table decides about a person's
coins is a *transfer*: written to the table's outbox (`money_outbox`) in the same transaction
as the table event that decides it, then delivered to the wallet as one append with the
transfer's id as its command id, then deleted from the outbox. A delivery that is repeated (a
crash between the wallet's append and the outbox row's delete, two instances relaying the same
row) is a duplicate command, which changes nothing; so every transfer lands exactly once.

| transfer | decided by (table event) | delivered as (wallet event) |
|---|---|---|
| `release_stake` | `buy_in_returned` | `stake_released` |
| `commit_stake` | `pot_formed` | `stake_committed` |
| `pay_pot` | `pot_settled` | `pot_paid` |
| `grant_reward` | `game_finished` | `coins_granted` (capped a day); `game_recorded` |
| `rate_game` | `game_finished` (a rated table) | `rating_changed` (no coins) |

(`game_recorded` and `rating_changed` go to the person's `player-<id>`, the same shard as their
wallet.)

Coins in flight are counted by the conservation check (`in_flight`): a committed stake sits in
the table's pot and, until its delivery, still in the wallet's holds; a payout has left the pot
and not yet reached the wallet.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

import msgspec

from service.domain.codec import TaggedCodec
from service.domain.ledger import (
    CoinsGranted,
    GameRecord,
    PaidReason,
    PotPaid,
    StakeCommitted,
    StakeReleased,
    WalletEventUnion,
    WalletState,
    capped_reward,
    reward,
)
from service.domain.ratings import Placing


class Transfer(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    player_id: str  # whose wallet it goes to
    table_id: str  # whose outbox it leaves from

    @property
    def transfer_id(self) -> str:
        """The command id of its delivery: the same transfer is only ever delivered once."""
        raise NotImplementedError  # pragma: no cover


class ReleaseStake(Transfer, frozen=True, tag="release_stake"):
    hold_id: str
    amount: int

    @property
    def transfer_id(self) -> str:
        return f"release:{self.hold_id}"


class CommitStake(Transfer, frozen=True, tag="commit_stake"):
    hold_id: str
    game_id: str
    amount: int

    @property
    def transfer_id(self) -> str:
        return f"commit:{self.hold_id}"


class PayPot(Transfer, frozen=True, tag="pay_pot"):
    game_id: str
    amount: int
    reason: PaidReason

    @property
    def transfer_id(self) -> str:
        return f"pay:{self.game_id}:{self.player_id}"


def reward_transfer_id(game_id: str, player_id: str) -> str:
    """The id of the reward transfer a game owes a person (`GrantReward.transfer_id`)."""
    return f"reward:{game_id}:{player_id}"


class GrantReward(Transfer, frozen=True, tag="grant_reward"):
    game_id: str
    won: bool
    stings: int
    biggest_take: int
    day: str  # the UTC day the game ended: the daily cap counts it there, however late delivered

    @property
    def transfer_id(self) -> str:
        return reward_transfer_id(self.game_id, self.player_id)

    @property
    def record(self) -> GameRecord:
        return GameRecord(
            game_id=self.game_id,
            stings=self.stings,
            won=self.won,
            biggest_take=self.biggest_take,
            xp=reward(self.won)[1],
        )


def rating_transfer_id(game_id: str, player_id: str) -> str:
    """The id of the rating change a rated game owes a person (`RateGame.transfer_id`)."""
    return f"rating:{game_id}:{player_id}"


class RateGame(Transfer, frozen=True, tag="rate_game"):
    """A rated game's change to one person's rating (`service.domain.ratings`): the field's
    places and ratings as read when the game ended. No coins move."""

    game_id: str
    field: tuple[Placing, ...]

    @property
    def transfer_id(self) -> str:
        return rating_transfer_id(self.game_id, self.player_id)


TransferUnion = ReleaseStake | CommitStake | PayPot | GrantReward | RateGame


def decide_delivery(wallet: WalletState, transfer: TransferUnion) -> list[WalletEventUnion]:
    """The wallet events a transfer becomes, decided on the wallet as it is now. A stake is
    released or committed only if the wallet still holds it (it always does: a hold's fate is
    decided once, by its table; a hold from before holds had ids is matched by table)."""
    match transfer:
        case ReleaseStake():
            if wallet.held_for(transfer.table_id) < transfer.amount:
                return []
            return [
                StakeReleased(
                    table_id=transfer.table_id, amount=transfer.amount, hold_id=transfer.hold_id
                )
            ]
        case CommitStake():
            if wallet.held_for(transfer.table_id) < transfer.amount:
                return []
            return [
                StakeCommitted(
                    table_id=transfer.table_id,
                    game_id=transfer.game_id,
                    amount=transfer.amount,
                    hold_id=transfer.hold_id,
                )
            ]
        case PayPot():
            paid = PotPaid(game_id=transfer.game_id, amount=transfer.amount, reason=transfer.reason)
            return [paid]
        case GrantReward():
            coins = capped_reward(wallet, reward(transfer.won)[0], transfer.day)
            if coins <= 0:
                return []
            return [
                CoinsGranted(
                    amount=coins, reason="game_reward", game_id=transfer.game_id, day=transfer.day
                )
            ]
        case RateGame():
            return []  # a rating, on the person's record (`ratings.decide_rating`), not coins
    raise AssertionError(f"unknown transfer {transfer!r}")  # pragma: no cover


class InFlight(msgspec.Struct, frozen=True, kw_only=True):
    """Coins between a table and a wallet: `committed`, in a pot and still held by its wallet
    (so counted twice until delivered); `paid`, out of a pot and not yet in its wallet."""

    committed: int = 0
    paid: int = 0


def in_flight(transfers: Iterable[TransferUnion]) -> InFlight:
    committed = paid = 0
    for transfer in transfers:
        if isinstance(transfer, CommitStake):
            committed += transfer.amount
        elif isinstance(transfer, PayPot):
            paid += transfer.amount
    return InFlight(committed=committed, paid=paid)


Kind = Literal["release_stake", "commit_stake", "pay_pot", "grant_reward", "rate_game"]
# The kinds this version delivers. In a rolling deploy an older instance shares the outbox with
# a newer one that writes a kind it does not know (`rate_game` was one): it leaves those rows
# for the newer instances rather than failing on them (service/store/outbox.py).
KINDS: tuple[str, ...] = get_args(Kind)

_codec: TaggedCodec[TransferUnion] = TaggedCodec(TransferUnion)


def encode_transfer(transfer: Transfer) -> bytes:
    return _codec.encode(transfer)


def decode_transfer(data: bytes | str) -> TransferUnion:
    return _codec.decode(data)
