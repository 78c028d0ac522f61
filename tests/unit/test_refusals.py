"""Every refusal of the domain is answered with the status its code is catalogued with, and the
refusals that are not moves of a game are not `RuleViolation`s."""

from __future__ import annotations

import importlib
import pkgutil
from typing import TypeVar

import service
from service.api.problems import CATALOGUE, rule_violation
from service.domain.ledger import InsufficientCoins
from service.domain.names import InvalidName
from service.domain.refusals import Malformed, NotAllowedNow, Refused
from service.domain.rules.errors import IllegalMove, InvalidMove, RuleViolation
from service.usecases.accounts import AlreadyRegistered, InvalidAccount, NameTaken

T = TypeVar("T")


def _subclasses(cls: type[T]) -> set[type[T]]:
    found: set[type[T]] = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def test_every_refusal_is_answered_with_its_catalogued_status() -> None:
    for module in pkgutil.walk_packages(service.__path__, "service."):
        importlib.import_module(module.name)
    refusals = _subclasses(Refused) - {Malformed, NotAllowedNow}
    assert len(refusals) > 30
    for cls in refusals:
        assert cls.code in CATALOGUE, cls
        assert rule_violation(cls("x")).status_code == CATALOGUE[cls.code].status, cls


def test_coins_accounts_and_names_are_refusals_but_not_moves() -> None:
    for cls in (InsufficientCoins, NameTaken, AlreadyRegistered):
        assert issubclass(cls, NotAllowedNow) and not issubclass(cls, RuleViolation)
    for malformed in (InvalidAccount, InvalidName):
        assert issubclass(malformed, Malformed) and not issubclass(malformed, RuleViolation)
    assert issubclass(IllegalMove, NotAllowedNow) and issubclass(InvalidMove, Malformed)
