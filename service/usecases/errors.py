"""Errors of the use-case layer. The rules' own errors (`service.domain.rules.errors`) pass
through unchanged; `service.api.problems` maps every one of them to a problem document."""

from __future__ import annotations


class NotFound(Exception):
    pass


class VersionNotFound(NotFound):
    """A game has no such version: versions run from 1 to its number of events now."""


class Unauthorized(Exception):
    pass


class Forbidden(Exception):
    pass


class Conflict(Exception):
    """The request is well formed but clashes with the table's state (not a game rule)."""


class Busy(Exception):
    """Too many decisions about one stream wait on this instance to take their turn in time:
    shed like any other overload (503 `overloaded`), rather than queued without bound."""
