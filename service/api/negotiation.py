"""Which form of an answer a client accepts, by its `Accept` header (RFC 9110 §12.5.1): the rule,
written once, for every operation that answers in more than one form (the live streams:
Server-Sent Events or NDJSON, `sse.stream_form`).

Each form offered gets the weight (`q`, 0 to 1, 1 when absent) of the most specific media range
that matches it (`type/subtype` with parameters, then `type/subtype`, `type/*`, `*/*`); a
weight of 0 means "not acceptable". A range's parameters make it more specific but are not
compared with the form's (the streams are UTF-8 whatever is asked: `;charset=utf-8;q=0`
refuses them). The form with the highest weight wins, the server's own
order breaking ties; none above 0: 406 `not-acceptable` (problem+json), before anything is
done. No `Accept` header (or an empty one) accepts anything: the first form offered; so does
one that names none of the forms, even by a wildcard (`application/json`): it is disregarded,
as RFC 9110 allows, rather than refused, so a client that sends one `Accept` everywhere streams
as it did before negotiation was written. A media
range that cannot be parsed (or a weight that is not a qvalue) is ignored, as if not sent.
Litestar's `Accept.best_match` is not used: it took `q=0` for a yes, and read `*/*;q=0.5`
before a more specific `text/event-stream;q=0`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from litestar import Request

from service.api.problems import problem

_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_RANGE = re.compile(rf"^({_TOKEN})/({_TOKEN})$")
_QVALUE = re.compile(r"^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$")


class MediaRange:
    """One element of `Accept`: `type/subtype`, its parameters (but `q`), and its weight."""

    __slots__ = ("kind", "params", "subtype", "weight")

    def __init__(self, kind: str, subtype: str, params: dict[str, str], weight: float) -> None:
        self.kind = kind
        self.subtype = subtype
        self.params = params
        self.weight = weight

    def specificity(self, media_type: str) -> int | None:
        """How specifically this range names `media_type` (3 the most), or None: not at all."""
        kind, _, subtype = media_type.lower().partition("/")
        if self.kind == "*":
            return 0 if self.subtype == "*" else None
        if self.kind != kind:
            return None
        if self.subtype == "*":
            return 1
        if self.subtype != subtype:
            return None
        return 3 if self.params else 2


def media_ranges(accept: str) -> list[MediaRange]:
    """`Accept`'s media ranges, in order; the ones that cannot be parsed are left out."""
    ranges: list[MediaRange] = []
    for element in accept.split(","):
        name, *parameters = (part.strip() for part in element.split(";"))
        matched = _RANGE.match(name)
        if matched is None:
            continue
        kind, subtype = matched.group(1).lower(), matched.group(2).lower()
        if kind == "*" and subtype != "*":
            continue
        params: dict[str, str] = {}
        weight: float | None = 1.0
        for parameter in parameters:
            key, _, value = parameter.partition("=")
            key, value = key.strip().lower(), value.strip().strip('"')
            if key == "q":
                weight = float(value) if _QVALUE.match(value) else None
                break  # what follows the weight are extensions, not the type's parameters
            if key:
                params[key] = value
        if weight is not None:
            ranges.append(MediaRange(kind, subtype, params, weight))
    return ranges


def weight(ranges: Sequence[MediaRange], media_type: str) -> float | None:
    """The weight `ranges` give `media_type`: the most specific matching range's; None when no
    range names it."""
    best: tuple[int, float] | None = None
    for media_range in ranges:
        specificity = media_range.specificity(media_type)
        if specificity is not None and (best is None or specificity > best[0]):
            best = (specificity, media_range.weight)
    return None if best is None else best[1]


def preferred(accept: str | None, offered: Sequence[str]) -> str | None:
    """The form of `offered` (the server's preference first) that `accept` prefers, or None when
    it accepts none of them. An `Accept` that names none of the forms (not even by a wildcard,
    as `application/json`) is disregarded, as RFC 9110 lets a server do: the first form, as an
    answer that is not negotiated (what clients got before negotiation was written)."""
    if accept is None or not accept.strip():
        return offered[0]
    ranges = media_ranges(accept)
    named = [weight(ranges, media_type) for media_type in offered]
    if all(w is None for w in named):
        return offered[0]
    weights = [0.0 if w is None else w for w in named]
    best = max(weights)
    return offered[weights.index(best)] if best > 0 else None


def negotiate(request: Request[Any, Any, Any], offered: Sequence[str]) -> str:
    """The form of `offered` the request's `Accept` prefers; 406 `not-acceptable` when it
    accepts none of them (every `Accept` line of the request counts, as one list)."""
    lines = request.headers.getall("accept", [])
    chosen = preferred(", ".join(lines) if lines else None, offered)
    if chosen is None:
        raise problem(
            406,
            "not-acceptable",
            "This answer comes as " + " or ".join(f"`{m}`" for m in offered) + ", and the "
            "request's `Accept` accepts none of them (a weight of `q=0` refuses a type).",
        )
    return chosen
