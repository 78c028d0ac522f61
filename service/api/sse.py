"""The live streams as Server-Sent Events: the message format, the parameters a stream takes
(`after`, `Last-Event-ID`, `ticket`), and the encoding of each message."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Request
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter, QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage, Stream

from service.api.bodies import StreamTicketOut
from service.api.envelopes import entry, entry_type
from service.api.negotiation import negotiate
from service.usecases.streams import MAX_VERSION, LogItem

_EVENT_ENCODER = msgspec.json.Encoder()

NO_ACCESS_LOG = "no_access_log"  # handler opt: skip the request/response logging middleware

SSE_FORMAT = (
    "Each message is three lines and a blank one: `id: <version>` (send it back as "
    "`Last-Event-ID`, as EventSource does on its own when it reconnects, to continue after "
    "it: nothing is lost or repeated), `event: <the event's type>` and `data: <the event>` "
    "(one line of JSON: `{version, type, recorded_at, hash, data}`, the schema named "
    "below). While nothing happens a comment line `: heartbeat` comes every 15 seconds. "
    "Authenticate with `Authorization: Bearer <token>`, or, from a browser, with "
    "`?ticket=<ticket>` (see the stream ticket operations): never put the bearer token in a "
    "URL. The stream is closed by the server when the token behind it is revoked (logout) "
    "or expires; a reconnect is then refused with 401, which makes an EventSource stop."
)

NDJSON_FORMAT = (
    " Or as NDJSON (`Accept: application/x-ndjson`): the same messages, each one line of JSON "
    "(`{id, event, data}`, the schema named below), with the same resume rules (`after`, or "
    "`Last-Event-ID` with the last `id`); an empty line is the heartbeat. Any HTTP client "
    "reads it with a line split. The form is the one `Accept` weighs most (RFC 9110: the most "
    "specific media range's `q`; Server-Sent Events on a tie, without `Accept`, or with one "
    "that names neither form, as `application/json`); a type weighted `q=0` is never sent, and "
    "an `Accept` that names a form but accepts neither gets 406 `not-acceptable`."
)

STREAM_DESCRIPTION = (
    "A Server-Sent Events stream (`text/event-stream`) of the game's log, with the same "
    "redaction as listGameEvents (schema `VisibleEvent`). "
    + SSE_FORMAT
    + NDJSON_FORMAT
    + " The stream ends after `game_ended` and the `deal_revealed` written with it: close "
    "the EventSource then, or it reconnects to an empty stream."
)

TABLE_STREAM_DESCRIPTION = (
    "A Server-Sent Events stream (`text/event-stream`) of the table's log (schema "
    "`TableLogEntry`): seats taken and freed, host changes, each game prepared, opened (its "
    "`game_id` is in `data`) and finished, pots, and the table closing. "
    + SSE_FORMAT
    + NDJSON_FORMAT
    + " The stream ends after `table_closed`."
)


StreamAfter = Annotated[
    int | None,
    QueryParameter(ge=0, le=2**31 - 1, description="Last version seen (start after it)"),
]
# A header's value is text: declared as the digits it holds (a generated client passes a
# string; an integer header made openapi-python-client's call raise TypeError).
LastEventId = Annotated[
    str | None,
    HeaderParameter(
        name="Last-Event-ID",
        pattern=r"^(?:0|[1-9][0-9]{0,9})$(?!\n)",
        description="The `id` of the last message received (sent by EventSource on reconnect): "
        "continue after it. Wins over `after`. 0 to 2147483647",
    ),
]


def stream_start(after: int | None, last_event_id: str | None) -> int:
    """Where a stream starts: after `Last-Event-ID`, else after `after`, else from the start."""
    if last_event_id is not None:
        start = int(last_event_id)
        if start > MAX_VERSION:
            raise ValidationException("Last-Event-ID: at most 2147483647")
        return start
    return after or 0


Ticket = Annotated[
    str | None,
    QueryParameter(
        min_length=1,
        max_length=128,
        description=(
            "A stream ticket (createGameStreamTicket, createTableStreamTicket), for clients "
            "that cannot send an Authorization header (a browser's EventSource)"
        ),
    ),
]
STREAM_SECURITY: list[dict[str, list[str]]] = [{"bearer": []}, {"streamTicket": []}]


def stream_responses(description: str) -> dict[int, ResponseSpec]:
    return {
        200: ResponseSpec(
            data_container=str,
            description=description,
            media_type="text/event-stream",
            generate_examples=False,
        ),
    }


EVENT_STREAM = "text/event-stream"
NDJSON = "application/x-ndjson"


STREAM_FORMS = (EVENT_STREAM, NDJSON)  # the forms of a stream, the default first


def stream_form(request: Request[Any, Any, Any]) -> str:
    """The form of a stream the request's `Accept` prefers (`negotiation.negotiate`): Server-
    Sent Events when it weighs both alike (or sends no `Accept`), 406 `not-acceptable` when it
    accepts neither. Asked before the stream is opened: a refusal costs nothing."""
    return negotiate(request, STREAM_FORMS)


def live(form: str, events: AsyncIterator[LogItem | None]) -> Stream:
    """The stream in `form` (`stream_form`): Server-Sent Events, or NDJSON (the same messages,
    one JSON object a line)."""
    return ndjson(events) if form == NDJSON else server_sent(events)


def server_sent(events: AsyncIterator[LogItem | None]) -> ServerSentEvent:
    async def messages() -> AsyncIterator[ServerSentEventMessage]:
        async for event in events:
            yield _sse_message(event)

    # `no-store`, as every answer and as the document says (Litestar's default is no-cache).
    return ServerSentEvent(messages(), headers={"Cache-Control": "no-store"})


def ndjson(events: AsyncIterator[LogItem | None]) -> Stream:
    """Each message as one line of JSON, `{"id", "event", "data"}` (the SSE message's fields,
    `data` the event itself); an empty line is the heartbeat."""

    async def lines() -> AsyncIterator[bytes]:
        async for item in events:
            if item is None:
                yield b"\n"
                continue
            event = entry(item)
            message = {"id": event.version, "event": entry_type(event), "data": event}
            yield _EVENT_ENCODER.encode(message) + b"\n"

    return Stream(
        lines(),
        media_type=NDJSON,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _sse_message(item: LogItem | None) -> ServerSentEventMessage:
    if item is None:
        return ServerSentEventMessage(data=None, comment="heartbeat")
    event = entry(item)
    return ServerSentEventMessage(
        data=_EVENT_ENCODER.encode(event).decode("utf-8"),
        event=entry_type(event),
        id=event.version,
    )


def ticket_out(kind: str, ident: str, ticket: str, expires_at: datetime) -> StreamTicketOut:
    path = f"/{kind}s/{ident}/stream?ticket={ticket}"
    return StreamTicketOut(ticket=ticket, expires_at=expires_at, stream_url=path)
