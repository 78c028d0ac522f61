"""The OpenAPI document as clients get it: Litestar's paths, with the schemas, descriptions,
examples and statuses that Litestar's generator leaves out.

One piece, on purpose: the refinements of the generated document depend on each other (schemas
before statuses, statuses before examples and links), and read best in the order they apply.

Litestar builds the paths and operations from the handlers (docstrings become descriptions).
Its component schemas drop most of what msgspec knows, so they are replaced here by msgspec's
own (`msgspec.json.schema_components`): tagged unions with a `discriminator`,
`additionalProperties: false` where unknown fields are refused, integer bounds as integers,
`format: uuid`. Every schema and property is then described from its own struct: the
docstring is the schema's description and its Google-style `Attributes:` section describes the
properties (a field a struct inherits is described where it is declared), or a field's
`msgspec.Meta(description=...)`; nothing is described by its name alone, so no field can be
described by another's text. Operations are described on their handlers (`summary=`, the
docstring) and what they refuse with is declared there (`problems.refuses`).

`tests/contract/test_documents.py` fails when an operation, schema or property is left
without a description. The app serves this document (`/docs/openapi.json` and the rendered
pages), and `python -m service documents` commits the same text.
"""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Iterator
from typing import Any

import msgspec
from litestar import Litestar, Request
from litestar.openapi.plugins import (
    JsonRenderPlugin,
    OpenAPIRenderPlugin,
    ScalarRenderPlugin,
    SwaggerRenderPlugin,
)

from service.api import examples, idempotency
from service.api.dependencies import BODY
from service.api.envelopes import TableLogEntry, VisibleEvent
from service.api.limits import NOT_RATE_LIMITED
from service.api.problems import CATALOGUE, Problem, declared_codes
from service.domain.names import TOOL_PATTERN
from service.domain.rules.events import Event
from service.domain.table_events import TableEventUnion

REF = "#/components/schemas/{name}"

# Named unions: components of their own, referenced wherever they appear.
UNIONS: dict[str, Any] = {"VisibleEvent": VisibleEvent, "TableLogEntry": TableLogEntry}
UNION_DESCRIPTIONS = {
    "VisibleEvent": (
        "An event of a game's log as the caller may see it: one schema per event `type` "
        "(the discriminator). The redacted forms are stated on each: until the game ends, "
        "`game_started.data.hands` holds only the caller's own hand, and another seat's "
        "`bee_tapped.data.bee` and `pick_confirmed.data.bee`/`by_clock` are null (for a "
        "spectator, every seat's); from `game_ended` on, everything is shown."
    ),
    "TableLogEntry": (
        "An event of a table's log (tables hide nothing): one schema per event `type` (the "
        "discriminator)."
    ),
}

# The events as stored (an export's `data`): what a game's and a table's streams hold.
STORED_UNIONS: dict[str, Any] = {"StoredGameEvent": Event, "StoredTableEvent": TableEventUnion}
UNION_DESCRIPTIONS["StoredGameEvent"] = (
    "An event of a game's stream as stored (and exported after the game): nothing redacted, "
    "one schema per `type`."
)
UNION_DESCRIPTIONS["StoredTableEvent"] = (
    "An event of a table's stream as stored: one schema per `type`."
)


def stored_events(components: dict[str, Any]) -> None:
    """An exported event's `data` is a stored event (a game's, or a table's for the table
    record), or one of a type this version does not know (an object with its `type`)."""
    components["ExportedEvent"]["properties"]["data"] = {
        "description": "The event exactly as stored, with its `type` tag: a game's "
        "(`StoredGameEvent`) in `events`, a table's (`StoredTableEvent`) in `table.events`.",
        "anyOf": [
            {"$ref": REF.format(name="StoredGameEvent")},
            {"$ref": REF.format(name="StoredTableEvent")},
            {
                "type": "object",
                "properties": {"type": {"type": "string"}},
                "required": ["type"],
                "description": "An event of a type this version does not describe.",
            },
        ],
    }


# Properties that hold a server-made UUID as text.
UUID_PROPERTIES = {"game_id", "table_id", "player_id", "host"}

STATUS_DESCRIPTIONS = {
    400: "Malformed request (wrong types, unknown fields or query parameters, bad parameters)",
    401: "Missing or unknown bearer token",
    403: "Not the caller's to see or do (not seated here, or not the host)",
    404: "No such table or game",
    406: "The `Accept` header accepts none of the answer's forms",
    408: "The body did not arrive in time",
    409: "Not allowed now (a rule, or the table's state)",
    413: "Request body too large",
    415: "The body is not `application/json`",
    422: "Can never be valid (a stem that does not exist, a name with hidden characters)",
    429: "Too many requests from this player or address, or too many new players from "
    "this address (see Retry-After)",
    500: "A bug in the server (report it with the `X-Request-ID` response header)",
    503: "The database is not reachable, or the service is overloaded (see Retry-After)",
}

# Links for clients and for schemathesis' stateful phase: where an answer's ids lead next.
LINKS: dict[str, dict[str, dict[str, Any]]] = {
    "createSoloTable": {
        "GetGame": {
            "operationId": "getGame",
            "parameters": {"game_id": "$response.body#/game/game_id"},
        },
        "SubmitMove": {
            "operationId": "submitMove",
            "parameters": {"game_id": "$response.body#/game/game_id"},
        },
        "GetTable": {
            "operationId": "getTable",
            "parameters": {"table_id": "$response.body#/table_id"},
        },
        "ListGameEvents": {
            "operationId": "listGameEvents",
            "parameters": {"game_id": "$response.body#/game/game_id"},
        },
    },
    "createTable": {
        "GetTable": {
            "operationId": "getTable",
            "parameters": {"table_id": "$response.body#/table_id"},
        },
        "JoinTable": {
            "operationId": "joinTable",
            "parameters": {"table_id": "$response.body#/table_id"},
        },
        "LeaveTable": {
            "operationId": "leaveTable",
            "parameters": {"table_id": "$response.body#/table_id"},
        },
        "ContributeSeed": {
            "operationId": "contributeSeed",
            "parameters": {"table_id": "$response.body#/table_id"},
        },
    },
    "submitMove": {
        "GetGame": {"operationId": "getGame", "parameters": {"game_id": "$response.body#/game_id"}},
        "ListGameEvents": {
            "operationId": "listGameEvents",
            "parameters": {"game_id": "$response.body#/game_id"},
        },
    },
    "getGame": {
        "SubmitMove": {
            "operationId": "submitMove",
            "parameters": {"game_id": "$response.body#/game_id"},
        },
        "GetTable": {
            "operationId": "getTable",
            "parameters": {"table_id": "$response.body#/table_id"},
        },
    },
}


# --- descriptions from the code --------------------------------------------------------------


def _paragraphs(text: str) -> str:
    return "\n\n".join(" ".join(p.split()) for p in text.strip().split("\n\n") if p.strip())


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(the summary, each attribute's description) of a Google-style docstring."""
    if not doc:
        return "", {}
    text = "\n" + inspect.cleandoc(doc)  # a docstring may open with its `Attributes:`
    head, _, rest = text.partition("\nAttributes:\n")
    attributes: dict[str, str] = {}
    name = None
    for line in rest.splitlines():
        match = re.match(r"^ {4}(\w+): ?(.*)$", line)
        if match:
            name = match.group(1)
            attributes[name] = match.group(2)
        elif name is not None and line.strip():
            attributes[name] += " " + line.strip()
    return _paragraphs(head), {k: " ".join(v.split()) for k, v in attributes.items()}


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", ")", "`", "!", "?")) else text + "."


def _structs(types: list[Any]) -> Iterator[type[msgspec.Struct]]:
    seen: set[type] = set()

    def walk(info: msgspec.inspect.Type) -> Iterator[type[msgspec.Struct]]:
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls in seen:
                return
            seen.add(info.cls)
            yield info.cls
            for field in info.fields:
                yield from walk(field.type)
        elif isinstance(info, msgspec.inspect.UnionType):
            for inner in info.types:
                yield from walk(inner)
        elif isinstance(info, msgspec.inspect.Metadata):
            yield from walk(info.type)
        elif isinstance(
            info,
            msgspec.inspect.ListType
            | msgspec.inspect.VarTupleType
            | msgspec.inspect.SetType
            | msgspec.inspect.FrozenSetType,
        ):
            yield from walk(info.item_type)
        elif isinstance(info, msgspec.inspect.TupleType):
            for inner in info.item_types:
                yield from walk(inner)
        elif isinstance(info, msgspec.inspect.DictType):
            yield from walk(info.value_type)

    for info in msgspec.inspect.multi_type_info(types):
        yield from walk(info)


def _is_datetime(info: msgspec.inspect.Type) -> bool:
    if isinstance(info, msgspec.inspect.Metadata):
        return _is_datetime(info.type)
    if isinstance(info, msgspec.inspect.UnionType):
        return any(_is_datetime(t) for t in info.types)
    return isinstance(info, msgspec.inspect.DateTimeType)


def _string_schemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if schema.get("type") == "string":
        yield schema
    for key in ("anyOf", "oneOf"):
        for inner in schema.get(key, ()):
            yield from _string_schemas(inner)
    if isinstance(schema.get("items"), dict):
        yield from _string_schemas(schema["items"])


def describe(components: dict[str, Any], types: list[Any]) -> None:
    """Descriptions and formats on every struct's schema, from its docstring and comments."""
    for cls in _structs(types):
        schema = components.get(cls.__name__)
        if schema is None or schema.get("type") != "object":
            continue
        summary, attributes = parse_docstring(cls.__doc__)
        for base in cls.__mro__[1:]:  # fields a struct inherits are described where declared
            if issubclass(base, msgspec.Struct) and base is not msgspec.Struct:
                attributes = {**parse_docstring(base.__doc__)[1], **attributes}
        if summary:
            schema["description"] = summary
        else:  # msgspec's would be the docstring whole, its `Attributes:` too
            schema.pop("description", None)
        config = cls.__struct_config__
        fields = {f.encode_name: f for f in msgspec.inspect.type_info(cls).fields}  # type: ignore[attr-defined]
        for name, prop in schema.get("properties", {}).items():
            if config.tag_field == name:
                prop.setdefault(
                    "description", f"Always `{config.tag}`: tells this {cls.__name__} apart."
                )
                continue
            text = attributes.get(name)
            if text and "description" not in prop:
                prop["description"] = _sentence(text)
            field = fields.get(name)
            if field is not None and _is_datetime(field.type):
                for string in _string_schemas(prop):
                    string.setdefault("format", "date-time")
            if name in UUID_PROPERTIES:
                for string in _string_schemas(prop):
                    string.setdefault("format", "uuid")


def _name_schema(components: dict[str, Any]) -> None:
    """One `Name` schema (its rule is long to state), referenced by each name a request takes."""
    pattern = TOOL_PATTERN
    for schema in list(components.values()):
        for key, prop in schema.get("properties", {}).items():
            if prop.get("pattern") == pattern:
                described = _sentence(prop.pop("description", ""))
                components["Name"] = {"description": described, **prop}
                schema["properties"][key] = {
                    "$ref": REF.format(name="Name"),
                    "description": "A person's name, as the `Name` schema says.",
                }


# --- enums that may grow ---------------------------------------------------------------------

# What a newer server may add without a breaking change (README, "Versions"): problem codes,
# event types and the values of every enum in an answer (a phase, a status, a level, a reason).
# Each answer's enum is a named component of the known values, referenced as `anyOf` [that
# component, any string], so a generated client takes a value it does not know as a plain
# string instead of failing; request enums stay closed (the server refuses what it does not
# know). Each set of values has one name.
OPEN_ENUM_NAMES = {
    "code": "ProblemCode",
    "phase": "Phase",
    "game_phase": "Phase",
    "reason": "EndReason",
    "level": "BeeLevel",
    "bee_levels": "BeeLevel",
    "kind": "SeatKind",
    "mode": "TableMode",
    "chosen_by": "StemChooser",
    "by_clock": "ClockPick",
    "by": "LeaderboardOrder",
}
OPEN_ENUM_BY_VALUES = {
    frozenset({"refund", "won"}): "PotOutcome",
    frozenset({"left", "not_taken"}): "BuyInReturnReason",
    frozenset({"confirmed", "left", "picking", "tapped", "waiting"}): "SeatStatus",
    frozenset({"between_games", "closed", "open", "playing"}): "TableStatus",
}
OPEN_ENUM_NOTE = (
    "The values this version knows. A newer server may send another (not a breaking change: "
    "README, 'Versions'), so where an answer holds one it is documented as any string too: "
    "treat an unknown value generically."
)
UNKNOWN_EVENT = "UnknownEvent"
KNOWN = "Known{name}"


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref.rsplit("/", 1)[-1]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _request_schemas(document: dict[str, Any], components: dict[str, Any]) -> set[str]:
    """The components a request can hold (bodies and parameters), with what they refer to."""
    todo = []
    for _path, _method, operation in _operations(document):
        todo += list(_refs(operation.get("requestBody", {})))
        todo += list(_refs(operation.get("parameters", [])))
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen and name in components:
            seen.add(name)
            todo += list(_refs(components[name]))
    return seen


def _open(node: dict[str, Any], owner: str, prop: str, components: dict[str, Any]) -> Any:
    """`node` (a property's schema) with each closed string enum opened."""
    values = node.get("enum")
    if isinstance(values, list) and len(values) > 1 and all(isinstance(v, str) for v in values):
        own = owner + "".join(p.title() for p in prop.split("_"))
        name = OPEN_ENUM_BY_VALUES.get(frozenset(values)) or OPEN_ENUM_NAMES.get(prop, own)
        if components.get(name, {"enum": values}).get("enum") != values:
            name = own  # the same property name with other values elsewhere
        components.setdefault(
            name, {"type": "string", "enum": values, "description": OPEN_ENUM_NOTE}
        )
        rest = {k: v for k, v in node.items() if k not in ("enum", "type")}
        return {**rest, "anyOf": [{"$ref": REF.format(name=name)}, {"type": "string"}]}
    out = dict(node)
    for key in ("anyOf", "oneOf"):
        if key in out:
            variants: list[Any] = []
            for variant in out[key]:
                opened = _open(variant, owner, prop, components)
                if set(opened) == {"anyOf"}:
                    variants += opened["anyOf"]  # one flat list of alternatives
                else:
                    variants.append(opened)
            out[key] = variants
    if isinstance(out.get("items"), dict):
        out["items"] = _open(out["items"], owner, prop, components)
    return out


def open_enums(document: dict[str, Any], components: dict[str, Any]) -> None:
    """Every enum of an answer open to values a newer server adds, and the event unions open to
    event types it adds (an `UnknownEvent`: the envelope, with `data` undescribed)."""
    requests = _request_schemas(document, components)
    for owner, schema in list(components.items()):
        if owner in requests or owner.startswith("Known"):
            continue
        for prop, node in schema.get("properties", {}).items():
            schema["properties"][prop] = _open(node, owner, prop, components)
    for name in UNIONS:
        union = components.pop(name)
        description = union.pop("description")
        components[KNOWN.format(name=name)] = {
            "description": "The event types this version knows, told apart by `type`.",
            **union,
        }
        components[name] = {
            "description": description
            + " An event of a type this version does not know (a newer server may add types: "
            "not a breaking change) matches `UnknownEvent`: skip it, or show its `type`.",
            "anyOf": [
                {"$ref": REF.format(name=KNOWN.format(name=name))},
                {"$ref": REF.format(name=UNKNOWN_EVENT)},
            ],
        }
    components[UNKNOWN_EVENT] = {
        "description": "An event of a type this version of the document does not describe: "
        "the envelope every event has, and its `data` as sent.",
        "type": "object",
        "properties": {
            "version": {"type": "integer", "description": "Its position in the stream's log."},
            "type": {"type": "string", "description": "The event's type (not one known here)."},
            "recorded_at": {
                "type": "string",
                "format": "date-time",
                "description": "When it was recorded (UTC).",
            },
            "hash": {"type": "string", "description": "Its hash-chain link, lowercase hex."},
            "data": {"type": "object", "description": "The event, not described here."},
        },
        "required": ["version", "type", "recorded_at", "data"],
    }


# --- what an answer always holds -----------------------------------------------------------

# Structs not encoded as they are: a problem is written by the problem-details plugin, which
# leaves out what is null (service/api/problems.py).
NOT_ENCODED_AS_STRUCTS = {"Problem", "ProblemField"}


def always_present(document: dict[str, Any], components: dict[str, Any], types: list[Any]) -> None:
    """Every property of an answer's struct is required: msgspec writes every field of a struct
    (no struct here omits defaults), so a field with a default is optional to send, never
    absent from an answer. A struct that requests use too keeps its defaults optional, and so
    does a stored event's (an export shows events as they were stored)."""
    requests = _request_schemas(document, components)
    # An export's events are as stored: one recorded before a field was added lacks it.
    stored = {cls.__name__ for cls in _structs(list(STORED_UNIONS.values()))}
    for cls in _structs(types):
        name = cls.__name__
        schema = components.get(name)
        if name in requests | stored | NOT_ENCODED_AS_STRUCTS or schema is None:
            continue
        assert not cls.__struct_config__.omit_defaults, name  # then defaults may be absent
        if "properties" in schema:
            schema["required"] = sorted(schema["properties"])
    # A problem always has these (problems.problem, the edge's own): `extra` only when known.
    components["Problem"]["required"] = ["code", "detail", "status", "title", "type"]


# --- the streams' messages ---------------------------------------------------------------------

STREAM_MESSAGES = {"VisibleEvent": "GameStreamMessage", "TableLogEntry": "TableStreamMessage"}


def stream_messages(components: dict[str, Any]) -> None:
    """One schema per stream for its messages, so a generated client has their type: a
    `text/event-stream` body has no schema a generator reads (OpenAPI 3.2's `itemSchema` is
    not 3.1, which the generators read), but every generator emits every component."""
    for union, message in STREAM_MESSAGES.items():
        operation = "streamGameEvents" if union == "VisibleEvent" else "streamTableEvents"
        components[message] = {
            "description": f"One message of {operation}: a line of its NDJSON form "
            "(`Accept: application/x-ndjson`), and the three fields of its Server-Sent Events "
            "form decoded (`id: <id>`, `event: <event>`, `data: <data as one line of JSON>`, "
            "then a blank line; comment lines (`: heartbeat`) carry nothing).",
            "type": "object",
            "properties": {
                "id": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "The event's version: send it back as `Last-Event-ID` to "
                    "continue after it.",
                },
                "event": {"type": "string", "description": "The event's type (`data.type`)."},
                "data": {"$ref": REF.format(name=union), "description": "The event."},
            },
            "required": ["id", "event", "data"],
        }


def server_sent_events(union: str) -> dict[str, Any]:
    """The `text/event-stream` form. In OpenAPI 3.1, which this document is, an event stream's
    `schema` is one event (3.2 calls it `itemSchema`, which 3.1 validators refuse): its fields
    as the text they are (`id` the version's digits, `data` a line of JSON whose schema
    `contentSchema` gives), as schemathesis reads each event."""
    return {
        "schema": {
            "type": "object",
            "description": "One message (heartbeat comments are not messages).",
            "properties": {
                "id": {
                    "type": "string",
                    "pattern": "^[1-9][0-9]{0,9}$",
                    "description": "The event's version: send it back as `Last-Event-ID`.",
                },
                "event": {"type": "string", "description": "The event's type (`data.type`)."},
                "data": {
                    "type": "string",
                    "description": "The event, as one line of JSON.",
                    "contentMediaType": "application/json",
                    "contentSchema": {"$ref": REF.format(name=union)},
                },
            },
            "required": ["id", "event", "data"],
        },
        "x-event-data-schema": {"$ref": REF.format(name=union)},
    }


def ndjson_lines(message: str) -> dict[str, Any]:
    """The `application/x-ndjson` form (`Accept: application/x-ndjson`): one `message` a line,
    as JSON; an empty line is a heartbeat. `schema` is the body, text; `x-item-schema` each
    line (OpenAPI 3.2's `itemSchema`, not a 3.1 field), the component a client decodes it with."""
    return {
        "schema": {
            "type": "string",
            "description": f"Newline-delimited JSON: each non-empty line is a `{message}`.",
            "contentMediaType": "application/x-ndjson",
        },
        "x-item-schema": {"$ref": REF.format(name=message)},
    }


def _replace_inline(node: Any, inline: dict[str, Any], ref: dict[str, str]) -> Any:
    if node == inline:
        return dict(ref)
    if isinstance(node, dict):
        return {k: _replace_inline(v, inline, ref) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace_inline(v, inline, ref) for v in node]
    return node


# --- the document ----------------------------------------------------------------------------


def documented_types(app: Litestar) -> list[Any]:
    """What the operations take and return (msgspec types only), and the named unions."""
    found: list[Any] = []
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if not handler.resolve_include_in_schema():
                continue
            candidates = [handler.parsed_fn_signature.return_type.annotation]
            data = handler.parsed_fn_signature.parameters.get("data")
            if data is not None:
                candidates.append(data.annotation)
            for annotation in candidates:
                try:
                    msgspec.json.schema(annotation)
                except TypeError:
                    continue
                if annotation is not None and annotation not in found:
                    found.append(annotation)
    return [*found, Problem, *UNIONS.values(), *STORED_UNIONS.values()]


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "operationId" in operation:
                yield path, method, operation


def _integers(node: Any) -> Any:
    """Litestar writes integer bounds as floats (1.0); a generated client wants integers."""
    if isinstance(node, dict):
        out = {k: _integers(v) for k, v in node.items()}
        if out.get("type") == "integer":
            for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                if isinstance(out.get(key), float) and out[key].is_integer():
                    out[key] = int(out[key])
        return out
    if isinstance(node, list):
        return [_integers(v) for v in node]
    return node


def _problem_response(status: int, description: str, codes: list[str]) -> dict[str, Any]:
    listed = ", ".join(f"`{c}`" for c in codes)
    return {
        "description": description + (f". Codes: {listed}." if listed else "."),
        PROBLEM_CODES: codes,
        "content": {
            "application/problem+json": {
                "schema": {"$ref": REF.format(name="Problem")},
                "example": examples.problem(status, codes[0] if codes else "http-error"),
            }
        },
    }


# Query strings the input guard (service/api/limits.py) refuses: a NUL anywhere. Litestar does
# not carry msgspec patterns into query parameters' items, so they are stated here.
NO_NUL = "^[^\\u0000]*$"
QUERY_ITEM_PATTERNS = {
    "expect_head": "^[1-9][0-9]{0,9}:[0-9a-f]{64}$",
    "expect_table_head": "^[1-9][0-9]{0,9}:[0-9a-f]{64}$",
}


def _constrain_strings(name: str, schema: dict[str, Any]) -> None:
    """Give every string of a query parameter the pattern the server holds it to."""
    beside = schema.get("pattern") if "oneOf" in schema else None  # where Litestar puts it
    for variant in schema.get("oneOf", [schema]):
        target = variant.get("items", variant) if variant.get("type") == "array" else variant
        if target.get("type") == "string" and "enum" not in target and "format" not in target:
            target.setdefault("pattern", beside or QUERY_ITEM_PATTERNS.get(name, NO_NUL))


def _integer_bounds(name: str, schema: dict[str, Any], handler: Any) -> None:
    """Give an optional integer query parameter (`int | None`: a `oneOf` of integer and null)
    the bounds the server holds it to, on its integer: Litestar writes `maximum` beside the
    `oneOf` and drops a `minimum` of 0 (the streams' `after` said nothing of `-1`, a 400)."""
    variants = [v for v in schema.get("oneOf", ()) if v.get("type") == "integer"]
    if not variants:
        return
    for field_name, field in handler.parsed_fn_signature.parameters.items():
        kwarg = field.kwarg_definition
        if (getattr(kwarg, "query", None) or field_name) != name:
            continue
        for key, bound in (
            ("minimum", getattr(kwarg, "ge", None)),
            ("maximum", getattr(kwarg, "le", None)),
        ):
            schema.pop(key, None)
            if bound is not None:
                variants[0][key] = int(bound)


# --- response headers ----------------------------------------------------------------------

API_VERSION_HEADER = "API-Version"


def _header(description: str, schema: dict[str, Any], *, required: bool) -> dict[str, Any]:
    return {"description": description, "required": required, "schema": schema}


def _seconds(what: str) -> dict[str, Any]:
    return {"type": "string", "pattern": "^[0-9]+$", "description": what}


HEADERS: dict[str, dict[str, Any]] = {
    "X-Request-ID": _header(
        "The request's id: the client's own `X-Request-ID` (64 characters at most) or a new "
        "one. Every log line of the request carries it; quote it when reporting a problem.",
        {"type": "string", "maxLength": 64},
        required=True,
    ),
    API_VERSION_HEADER: _header(
        "The version of the contract this server speaks: the document's `info.version` "
        "(CHANGELOG.md says what each version changed).",
        {"type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+$"},
        required=True,
    ),
    "Retry-After": _header(
        "Whole seconds to wait before trying again (at least 1).",
        {"type": "string", "pattern": "^[1-9][0-9]*$"},
        required=True,
    ),
    "WWW-Authenticate": _header(
        "`Bearer`: how to authenticate (RFC 6750).", {"type": "string"}, required=True
    ),
    "Cache-Control": _header(
        "`no-store`, on every answer: answers are per caller and current (a game view holds "
        "the caller's hand; some answers a token or a stream ticket), so no cache may keep one.",
        {"type": "string", "enum": ["no-store"]},
        required=True,
    ),
    "RateLimit-Limit": _header(
        "Requests allowed per window (`SWARM_RATE_LIMIT` a second) to this caller: a valid "
        "token's player, else the client address. Sent on every answer the rate limit counted "
        "(not on one refused before it, such as a 503 for work in flight).",
        _seconds("A count."),
        required=False,
    ),
    "RateLimit-Remaining": _header(
        "Requests left in the current window.", _seconds("A count."), required=False
    ),
    "RateLimit-Reset": _header(
        "Seconds until the window ends and the count starts again.",
        _seconds("Seconds."),
        required=False,
    ),
    "RateLimit-Policy": _header(
        "The policy: `<limit>; w=<window seconds>`.",
        {"type": "string"},
        required=False,
    ),
}
IN_USE = "Retry-After-In-Use"
HEADERS[IN_USE] = _header(
    "Sent with `idempotency-key-in-use` only: whole seconds to wait before sending the request "
    "again with the same key (at least 1).",
    {"type": "string", "pattern": "^[1-9][0-9]*$"},
    required=False,
)
HEADERS[idempotency.REPLAYED] = _header(
    "`true` when this answer is a replay: the request (its `Idempotency-Key`, or a move's "
    "`move_id`) was answered before, and this is that answer again; nothing was done this "
    "time. Absent on a first answer.",
    {"type": "string", "enum": ["true"]},
    required=False,
)
IDEMPOTENCY_PARAMETER = {
    "name": idempotency.HEADER,
    "in": "header",
    "required": False,
    "description": "Your key for this request, to retry it safely: the same key with the same "
    "request (method, path, query, JSON body) within 24 hours gets the first answer again, "
    "with `Idempotent-Replayed: true`, and nothing is done twice; the same key with another "
    "request is 409 `idempotency-key-reused`; while the first request with it has not "
    "answered, 409 `idempotency-key-in-use` (with `Retry-After`). Only a success is kept: "
    "after a refusal the key may be used again. Keys are yours alone (scoped to your bearer "
    "token, or to your address when you send none). Use a new random key (a UUID) for each "
    "new request: anyone with the key and your token (or address) could read its answer.",
    "schema": {"type": "string", "pattern": idempotency.KEY_PATTERN},
}
RATE_LIMIT_HEADERS = (
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "RateLimit-Policy",
)


def _headers_of(path: str, status: int, replayable: bool) -> list[str]:
    """The headers an answer of `path` with `status` carries (service/api/edge.py sends the
    first two on every answer, and Retry-After and WWW-Authenticate where they belong)."""
    names = ["X-Request-ID", API_VERSION_HEADER]
    if not any(re.match(p, path) for p in NOT_RATE_LIMITED):
        names += RATE_LIMIT_HEADERS
    if status in (429, 503):
        names.append("Retry-After")
    if status == 401:
        names.append("WWW-Authenticate")
    names.append("Cache-Control")
    if replayable and 200 <= status < 300:
        names.append(idempotency.REPLAYED)
    return names


def declare_headers(document: dict[str, Any], replayable: set[str], keyed: set[str]) -> None:
    """Every answer's headers, as named components (`components.headers`)."""
    document["components"]["headers"] = HEADERS
    for path, _method, operation in _operations(document):
        for key, response in operation["responses"].items():
            response["headers"] = {
                name: {"$ref": f"#/components/headers/{name}"}
                for name in _headers_of(path, int(key), operation["operationId"] in replayable)
            }
            if key == "409" and operation["operationId"] in keyed:
                # idempotency-key-in-use says when to look again; the other 409s do not
                response["headers"]["Retry-After"] = {"$ref": f"#/components/headers/{IN_USE}"}


# --- what each operation can refuse with ---------------------------------------------------

# The key of a problem response listing its codes (the same as its description's "Codes:").
PROBLEM_CODES = "x-problem-codes"
# The operations that read no database.
NO_DATABASE = {"healthLive"}


def route_handlers(app: Litestar) -> dict[str, Any]:
    """Each operation's route handler, by operation id."""
    return {
        handler.operation_id: handler
        for route in app.routes
        for handler in getattr(route, "route_handlers", ())
        if isinstance(getattr(handler, "operation_id", None), str)
    }


def common_codes(path: str, operation: dict[str, Any], keyed: bool) -> set[str]:
    """What an operation can be refused with whatever its handler does: a malformed request
    (an unknown query parameter is refused everywhere), a bug, shedding past capacity, the
    database gone, the rate limit, a bearer token refused, a body too large, slow or not JSON,
    an idempotency key reused or in use (service/api/edge.py, admission.py, limits.py,
    idempotency.py)."""
    # A body too large or too slow is refused by the edge before any route is known, whatever
    # the method: a GET with a 20 kB body is a 413 too.
    codes = {"bad-request", "internal-error", "overloaded", "body-too-large", "request-timeout"}
    if operation["operationId"] not in NO_DATABASE:
        codes.add("database-unavailable")
    if not any(re.match(p, path) for p in NOT_RATE_LIMITED):
        codes.add("too-many-requests")
    if any(requirement for requirement in operation.get("security", ())):
        codes.add("unauthorized")
    body = operation.get("requestBody")
    if body is not None:
        codes.add("unsupported-media-type")
        if body.get("required", False):
            codes.add("body-required")
    if keyed:
        codes |= {"idempotency-key-reused", "idempotency-key-in-use"}
    return codes


def operation_codes(path: str, operation: dict[str, Any], handler: Any, keyed: bool) -> set[str]:
    """Every code an operation can answer with: the common ones, and what its handler declares
    (`problems.refuses`)."""
    return common_codes(path, operation, keyed) | set(declared_codes(handler))


def keyed_operations(app: Litestar) -> tuple[set[str], set[str]]:
    """(the operations that take an `Idempotency-Key`, those whose own key is in the body)."""
    keyed: set[str] = set()
    own: set[str] = set()
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if "POST" in handler.http_methods and handler.operation_id:
                (own if handler.opt.get(idempotency.OWN_KEY) else keyed).add(handler.operation_id)
    return keyed, own


def refine(app: Litestar, generated: dict[str, Any]) -> dict[str, Any]:
    document: dict[str, Any] = _integers(copy.deepcopy(generated))
    types = documented_types(app)
    tops, components = msgspec.json.schema_components(types, ref_template=REF)
    named_tops = tops[-len(UNIONS) - len(STORED_UNIONS) :]
    for name, top in zip([*UNIONS, *STORED_UNIONS], named_tops, strict=True):
        named = {"description": UNION_DESCRIPTIONS[name], **top}
        components = _replace_inline(components, top, {"$ref": REF.format(name=name)})
        components[name] = named
    stored_events(components)
    describe(components, types)
    _name_schema(components)
    open_enums(document, components)
    always_present(document, components, types)
    stream_messages(components)
    document["components"]["schemas"] = dict(sorted(components.items()))
    document["components"]["parameters"] = {"IdempotencyKey": IDEMPOTENCY_PARAMETER}
    keyed, own_key = keyed_operations(app)

    handlers = route_handlers(app)
    for path, _method, operation in _operations(document):
        op_id = operation["operationId"]
        if op_id in keyed:
            operation.setdefault("parameters", []).append(
                {"$ref": "#/components/parameters/IdempotencyKey"}
            )
        security = operation.setdefault("security", [])
        operation["security"] = [s for i, s in enumerate(security) if s not in security[:i]]
        for parameter in operation.get("parameters", ()):
            if parameter.get("in") == "query":
                _constrain_strings(parameter["name"], parameter["schema"])
                _integer_bounds(parameter["name"], parameter["schema"], handlers[op_id])
        body = operation.get("requestBody")
        responses = operation["responses"]
        if body is not None:
            media = body["content"]["application/json"]
            variants = media["schema"].get("oneOf", [])
            if {"type": "null"} in variants:  # an optional body: absent, `{}` or null
                body["required"] = False
                rest = [v for v in variants if v != {"type": "null"}]
                media["schema"] = rest[0] if len(rest) == 1 else {"oneOf": rest}
            body.setdefault("description", handlers[op_id].opt.get(BODY, "The request."))
            request_examples = examples.requests().get(op_id)
            if request_examples:
                media["examples"] = request_examples
        codes = operation_codes(path, operation, handlers[op_id], op_id in keyed)
        statuses = {int(s) for s in responses} | {CATALOGUE[c].status for c in codes}
        for status in sorted(statuses):
            key = str(status)
            if status >= 400:
                responses[key] = _problem_response(
                    status,
                    STATUS_DESCRIPTIONS.get(status, "Refused"),
                    sorted(c for c in codes if CATALOGUE[c].status == status),
                )
        for key, response in responses.items():
            if int(key) >= 400:
                continue
            content = response.get("content", {})
            if "application/json" in content:
                media = content["application/json"]
                ref = media["schema"].get("$ref", "")
                name = ref.rsplit("/", 1)[-1]
                if response.get("description", "").startswith(("Request fulfilled", "Document")):
                    described = components.get(name, {}).get("description", "")
                    response["description"] = described.split("\n\n")[0] or "The answer."
                example = examples.responses().get(op_id)
                if example is not None:
                    media["example"] = example
            if "application/x-ndjson" in content:
                content["application/x-ndjson"]["schema"] = {
                    "type": "string",
                    "description": "One `GameExport` a line, each line one JSON document.",
                    "contentMediaType": "application/x-ndjson",
                    "contentSchema": {
                        "type": "array",
                        "items": {"$ref": REF.format(name="GameExport")},
                    },
                }
            if "text/event-stream" in content:
                union = "VisibleEvent" if op_id == "streamGameEvents" else "TableLogEntry"
                content["text/event-stream"] = server_sent_events(union)
                content["application/x-ndjson"] = ndjson_lines(STREAM_MESSAGES[union])
            if op_id in LINKS and key in ("200", "201"):
                response["links"] = LINKS[op_id]
        operation["responses"] = dict(sorted(responses.items()))
    declare_headers(document, keyed | own_key, keyed)
    _headers_never_null(document)
    return document


def _headers_never_null(document: dict[str, Any]) -> None:
    """A header parameter is text or absent, never null: an optional one's `oneOf` [its string,
    null] becomes the string, with the constraints Litestar set beside the `oneOf` (a pattern
    there left `Last-Event-ID: null` valid to the document and refused by the server)."""
    for _path, _method, operation in _operations(document):
        for parameter in operation.get("parameters", ()):
            schema = parameter.get("schema", {})
            variants = schema.get("oneOf")
            if parameter.get("in") != "header" or not variants:
                continue
            rest = [v for v in variants if v != {"type": "null"}]
            if len(rest) == 1 and len(rest) < len(variants):
                del schema["oneOf"]
                parameter["schema"] = {**rest[0], **schema}


# --- serving it ------------------------------------------------------------------------------

_SERVED: dict[int, dict[str, Any]] = {}


def served_document(app: Litestar) -> dict[str, Any]:
    """The refined document of `app`, built once."""
    key = id(app)
    if key not in _SERVED:
        _SERVED[key] = refine(app, dict(app.openapi_schema.to_schema()))
    return _SERVED[key]


class _Refined(OpenAPIRenderPlugin):
    def render_json(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:  # type: ignore[override]
        return super().render_json(request, served_document(request.app))


class RefinedJson(_Refined, JsonRenderPlugin):
    """`/docs/openapi.json`: the refined document."""


class RefinedScalar(_Refined, ScalarRenderPlugin):
    """`/docs`: Scalar's reference pages, drawn from the refined document."""


class RefinedSwagger(_Refined, SwaggerRenderPlugin):
    """`/docs/swagger`: Swagger UI, drawn from the refined document."""
