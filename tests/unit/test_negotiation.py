"""Which form of an answer the client's `Accept` prefers (`service.api.negotiation`), as RFC 9110
§12.5.1 says: each form weighs what the most specific matching media range gives it, `q=0`
refuses it, the server's order breaks ties, and none acceptable is None (a 406); an `Accept`
that names neither form is disregarded."""

from __future__ import annotations

import pytest

from service.api.negotiation import preferred

FORMS = ("text/event-stream", "application/x-ndjson")
SSE, NDJSON = FORMS


@pytest.mark.parametrize(
    ("accept", "chosen"),
    [
        (None, SSE),  # no Accept: anything, the server's first
        ("", SSE),
        ("*/*", SSE),
        ("text/event-stream", SSE),
        ("application/x-ndjson", NDJSON),
        ("application/x-ndjson, text/event-stream", SSE),  # alike: the server's order
        ("text/event-stream;q=0.5, application/x-ndjson", NDJSON),
        ("text/event-stream;q=0, application/x-ndjson", NDJSON),
        ("text/event-stream;q=0, */*", NDJSON),  # the specific range wins over */*
        ("*/*;q=0.5, text/event-stream;q=0", NDJSON),
        ("application/*, text/event-stream;q=0.9", NDJSON),
        ("TEXT/Event-Stream ; Q=0.2 , application/x-ndjson;q=0.1", SSE),  # case, spaces
        ("text/event-stream;charset=utf-8", SSE),  # a parameter is more specific still
        # the streams are UTF-8 whatever is asked: refusing it in UTF-8 refuses it
        ("text/event-stream;charset=utf-8;q=0, text/event-stream", None),
        ("application/x-ndjson;q=1.000, text/event-stream;q=0.999", NDJSON),
        ("text/event-stream;q=0", None),  # refused, and nothing else accepted
        ("text/event-stream;q=0, application/x-ndjson;q=0.000", None),
        ("*/*;q=0", None),
        # naming neither form, even by a wildcard: disregarded, the server's first
        ("application/json", SSE),
        ("application/json, image/*;q=0", SSE),
        ("text/*;q=0, application/json", None),  # one named and refused: strict
        ("garbage, text/event-stream;q=2", SSE),  # unparseable ranges are ignored
        ("garbage, application/x-ndjson", NDJSON),
        ("text/event-stream;q=0.5;level=1, application/x-ndjson;q=0.4", SSE),  # an extension
    ],
)
def test_the_best_acceptable_form_by_its_weight(accept: str | None, chosen: str | None) -> None:
    assert preferred(accept, FORMS) == chosen
