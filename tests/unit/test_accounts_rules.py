"""The pure parts of accounts: name and password rules, rate-limit keys, Retry-After, profiles."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from service.domain.ledger import BADGES, SIGN_UP_COINS, PlayerStats, WalletState, badges
from service.domain.names import InvalidName
from service.usecases.accounts import (
    InvalidAccount,
    check_registration,
    failure_keys,
    name_key,
    seconds_until,
    sign_up_wallet,
)


@pytest.mark.parametrize(
    ("name", "password"),
    [("A", "12345678"), ("x" * 40, "p" * 128), ("Zoë the bee", "correct horse")],
)
def test_names_and_passwords_within_the_rules_pass(name: str, password: str) -> None:
    check_registration(name, password)


@pytest.mark.parametrize(
    ("name", "password"),
    [
        ("", "12345678"),
        ("x" * 41, "12345678"),
        ("tab\there", "12345678"),
        ("del\x7f", "12345678"),
        ("Ada", "1234567"),
        ("Ada", "p" * 129),
    ],
)
def test_names_and_passwords_outside_the_rules_are_refused(name: str, password: str) -> None:
    with pytest.raises((InvalidAccount, InvalidName)) as refused:
        check_registration(name, password)
    assert password not in str(refused.value)  # a password is never echoed


def test_an_attempt_counts_against_the_name_key_and_the_address_in_lock_order() -> None:
    assert failure_keys("Ada", "10.0.0.1") == ["addr:10.0.0.1", "name:" + name_key("ada")]
    assert failure_keys("ADA", "10.0.0.1") == failure_keys("ada", "10.0.0.1")


def test_retry_after_rounds_up_and_is_at_least_one_second() -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    assert seconds_until(now + timedelta(seconds=90, milliseconds=1), now) == 91
    assert seconds_until(now + timedelta(seconds=90), now) == 90
    assert seconds_until(now, now) == 1
    assert seconds_until(now - timedelta(seconds=5), now) == 1


def test_level_is_one_plus_xp_over_500() -> None:
    assert [PlayerStats(xp=xp).level for xp in (0, 499, 500, 999, 1000, 2600)] == [1, 1, 2, 2, 3, 6]


def test_badges_carry_their_descriptions_in_earned_order() -> None:
    shown = badges(["first_win", "first_game"])
    assert [b.name for b in shown] == ["first_win", "first_game"]
    assert shown[0].description == BADGES["first_win"]


def test_sign_up_grants_the_sign_up_coins_as_the_wallets_first_event() -> None:
    grant, wallet = sign_up_wallet()
    assert grant.amount == SIGN_UP_COINS and grant.reason == "sign_up"
    assert wallet == WalletState(balance=SIGN_UP_COINS, held=0, granted=SIGN_UP_COINS, version=1)
