"""The committed API document is complete (issue 11): valid by openapi-spec-validator, every
operation, schema and property described, and every problem code the server can raise in the
catalogue (problems.CATALOGUE → docs/errors.md and `Problem.code`'s enum)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, TypeVar

import pytest
from openapi_spec_validator import validate

import service
from service.api.problems import CATALOGUE, rule_violation
from service.domain.rules.errors import RuleViolation

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT: dict[str, Any] = json.loads((ROOT / "openapi" / "openapi.json").read_text())


T = TypeVar("T")


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in DOCUMENT["paths"].items()
        for method, op in item.items()
        if isinstance(op, dict) and "operationId" in op
    ]


def test_the_document_is_valid_openapi() -> None:
    validate(DOCUMENT)
    assert DOCUMENT["openapi"].startswith("3.1")


def test_every_operation_has_a_summary_a_description_and_a_tag() -> None:
    tags = {t["name"]: t for t in DOCUMENT["tags"]}
    assert all(t.get("description") for t in tags.values())
    for _path, _method, op in operations():
        assert " " in op.get("summary", ""), op["operationId"]  # a phrase, not the id
        assert op.get("description"), op["operationId"]
        assert op.get("tags") and set(op["tags"]) <= set(tags), op["operationId"]
        for response in op["responses"].values():
            assert response.get("description"), op["operationId"]


def test_every_schema_and_property_is_described() -> None:
    missing = []
    for name, schema in DOCUMENT["components"]["schemas"].items():
        if not schema.get("description"):
            missing.append(name)
        for prop, inner in schema.get("properties", {}).items():
            if not inner.get("description"):
                missing.append(f"{name}.{prop}")
    assert not missing, missing


def test_public_operations_say_so_and_the_rest_name_their_scheme() -> None:
    public = {op["operationId"] for _p, _m, op in operations() if op["security"] == []}
    assert {"createGuest", "login", "health"} <= public
    assert "getGame" not in public and "submitMove" not in public
    schemes = DOCUMENT["components"]["securitySchemes"]
    for _path, _method, op in operations():
        for requirement in op["security"]:
            assert set(requirement) <= set(schemes), op["operationId"]


def _walk(node: Any) -> Any:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_integers_are_integers_ids_have_formats_and_unknown_fields_are_refused() -> None:
    for node in _walk(DOCUMENT):
        if node.get("type") == "integer":
            for key in ("minimum", "maximum"):
                assert not isinstance(node.get(key), float), node
    schemas = DOCUMENT["components"]["schemas"]
    assert schemas["GameView"]["properties"]["game_id"]["format"] == "uuid"
    assert schemas["LobbyEntry"]["properties"]["opened_at"]["format"] == "date-time"
    for name in ("GuestIn", "SoloTableIn", "TableIn", "Tap", "Confirm", "ChooseStem", "LoginIn"):
        assert schemas[name]["additionalProperties"] is False, name
    moves = DOCUMENT["paths"]["/games/{game_id}/moves"]["post"]["requestBody"]
    assert moves["required"] is True and moves["content"]["application/json"]["examples"]


def test_optional_bodies_are_optional() -> None:
    for path in ("seats", "start", "bees", "games"):
        body = DOCUMENT["paths"][f"/tables/{{table_id}}/{path}"]["post"]["requestBody"]
        assert body["required"] is False, path


def test_every_request_body_has_examples_and_body_operations_list_415() -> None:
    for _path, _method, op in operations():
        body = op.get("requestBody")
        if body is None:
            continue
        media = body["content"]["application/json"]
        assert media.get("examples"), op["operationId"]
        assert {"400", "413", "415"} <= set(op["responses"]), op["operationId"]


def test_create_table_lists_its_403_and_409() -> None:
    assert {"403", "409"} <= set(DOCUMENT["paths"]["/tables"]["post"]["responses"])


def test_events_are_a_discriminated_union_with_the_redactions_stated() -> None:
    schemas = DOCUMENT["components"]["schemas"]
    # Open to event types a newer server adds: the known ones, told apart by `type`, or any.
    for name in ("VisibleEvent", "TableLogEntry"):
        assert schemas[name]["anyOf"] == [
            {"$ref": f"#/components/schemas/Known{name}"},
            {"$ref": "#/components/schemas/UnknownEvent"},
        ]
    union = schemas["KnownVisibleEvent"]
    assert union["discriminator"]["propertyName"] == "type"
    assert set(union["discriminator"]["mapping"]) >= {"game_started", "bee_tapped", "game_ended"}
    tapped = schemas["VisibleBeeTapped"]["properties"]["bee"]
    assert {"type": "null"} in tapped["anyOf"] and "null" in tapped["description"]
    hands = schemas["VisibleGameStarted"]["properties"]["hands"]
    assert "null" in hands["description"]
    page = schemas["EventPage"]["properties"]["events"]
    assert page["items"] == {"$ref": "#/components/schemas/VisibleEvent"}
    for op_id in ("streamGameEvents", "streamTableEvents"):
        op = next(op for _p, _m, op in operations() if op["operationId"] == op_id)
        stream = op["responses"]["200"]["content"]["text/event-stream"]
        assert stream["x-event-data-schema"]["$ref"].endswith(("VisibleEvent", "TableLogEntry"))
        assert "Last-Event-ID" in op["responses"]["200"]["description"]


def test_the_document_version_is_the_package_version() -> None:
    assert DOCUMENT["info"]["version"] == service.__version__


def test_the_version_is_the_changelogs_newest_release() -> None:
    """info.version follows the CHANGELOG: the newest released section is this version."""
    changelog = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, re.M)
    assert releases and releases[0] == service.__version__, releases[:3]


def test_every_answer_declares_the_headers_it_carries() -> None:
    """Request id and version on every answer, Retry-After on every 429 and 503,
    WWW-Authenticate on every 401, Cache-Control on the answers holding a credential, and the
    RateLimit-* headers wherever the rate limit counts (tests/contract/test_headers.py and
    schemathesis check the real answers against this)."""
    credentials = {
        "createGuest",
        "register",
        "login",
        "createGameStreamTicket",
        "createTableStreamTicket",
    }
    for path, _method, op in operations():
        for status, response in op["responses"].items():
            headers = set(response["headers"])
            assert {"X-Request-ID", "API-Version"} <= headers, (op["operationId"], status)
            if status in ("429", "503"):
                assert "Retry-After" in headers, (op["operationId"], status)
            if status == "401":
                assert "WWW-Authenticate" in headers, (op["operationId"], status)
            if op["operationId"] in credentials and status.startswith("2"):
                assert "Cache-Control" in headers, op["operationId"]
            limited = not path.startswith("/health") and not path.endswith("/stream")
            assert ("RateLimit-Limit" in headers) == limited, (op["operationId"], status)
        assert "429" in op["responses"] or not limited, op["operationId"]


# --- the error catalogue -----------------------------------------------------------------------

SOURCE = ROOT / "service"


def _import_everything() -> None:
    for module in pkgutil.walk_packages(service.__path__, "service."):
        importlib.import_module(module.name)


def _subclasses(cls: type[T]) -> set[type[T]]:
    found: set[type[T]] = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def codes_in_the_source() -> set[str]:
    """Every problem code the code can produce: a `code = "…"` on an error class, a literal
    passed to `problem(status, "…", …)`, or a `"code": "…"` written by hand."""
    codes: set[str] = set()
    patterns = [
        re.compile(r'^\s+code = "([a-z0-9-]+)"', re.M),
        re.compile(r'problem\(\s*\d{3},\s*"([a-z0-9-]+)"'),
        re.compile(r'"code": "([a-z0-9-]+)"'),
        re.compile(r'^\s+\d{3}: "([a-z0-9-]+)",$', re.M),  # the HTTP status map
    ]
    for path in SOURCE.rglob("*.py"):
        text = path.read_text()
        for pattern in patterns:
            codes |= set(pattern.findall(text))
    return codes


def test_every_code_the_server_can_raise_is_in_the_catalogue() -> None:
    _import_everything()
    raised = codes_in_the_source() | {c.code for c in _subclasses(RuleViolation)}
    missing = raised - set(CATALOGUE)
    assert not missing, f"add these to service/api/problems.py CATALOGUE: {sorted(missing)}"
    assert len(raised) > 40, raised


def test_rule_violations_are_catalogued_with_the_status_they_are_answered_with() -> None:
    _import_everything()
    for cls in _subclasses(RuleViolation):
        exc = rule_violation(cls("x"))
        assert CATALOGUE[cls.code].status == exc.status_code, cls


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_every_catalogued_code_is_documented(code: str) -> None:
    errors = (ROOT / "docs" / "errors.md").read_text()
    entry = CATALOGUE[code]
    retry = "yes" if entry.retryable else "no"
    assert f"| [`{code}`](#{code}) | {entry.status} | {retry} |" in errors
    assert f"\n## {code}\n\n{entry.status}, " in errors  # the section `doc_url` links to
    enum = DOCUMENT["components"]["schemas"]["ProblemCode"]["enum"]
    assert code in enum
    assert entry.meaning and entry.action


def test_every_code_said_to_be_worth_retrying_is_one_an_operation_lists() -> None:
    """docs/errors.md told clients to retry `concurrent-change`, which no operation listed
    (issue 44 item 11): a client reading the document could not know when to expect it."""
    listed = {
        code
        for _path, _method, operation in operations()
        for response in operation["responses"].values()
        for code in response.get("x-problem-codes", ())
    }
    retryable = {code for code, entry in CATALOGUE.items() if entry.retryable}
    assert "concurrent-change" in retryable
    assert retryable - listed == set()
    register = DOCUMENT["paths"]["/accounts"]["post"]["responses"]["409"]["x-problem-codes"]
    assert "concurrent-change" in register


def test_a_problem_says_whether_to_retry_and_links_its_section() -> None:
    problem = DOCUMENT["components"]["schemas"]["Problem"]
    assert problem["properties"]["retryable"]["type"] == "boolean"
    assert problem["properties"]["doc_url"]["format"] == "uri-reference"
    for _path, _method, operation in operations():
        for status, response in operation["responses"].items():
            if int(status) < 400:
                continue
            example = response["content"]["application/problem+json"]["example"]
            code = example["code"]
            assert example["doc_url"] == f"/docs/errors#{code}"
            assert example["retryable"] is CATALOGUE[code].retryable


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_the_name_pattern_is_one_every_ecmascript_reading_takes() -> None:
    """Issue 44 item 10: Node's `new RegExp(pattern)` threw on the `Name` pattern (ranges past
    U+FFFF read as surrogate pairs without the `u` flag). The document's pattern compiles with
    and without `u` and reads the same names alike: a CJK extension B name, an emoji, a
    combining mark, and not a zero-width space or a name of spaces."""
    pattern = DOCUMENT["components"]["schemas"]["Name"]["pattern"]
    script = """
        const [pattern, names] = JSON.parse(process.argv[1]);
        const out = [];
        for (const flags of ["", "u"]) {
            const re = new RegExp(pattern, flags);
            out.push(names.map((n) => re.test(n)));
        }
        console.log(JSON.stringify(out));
    """
    names = ["Ada", "\U00020000\U0002a6df", "Zoë 🐝", "e\u0301", "\u200b", "   ", "A\nB"]
    ran = subprocess.run(
        ["node", "-e", script, json.dumps([pattern, names])],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    expected = [True, True, True, True, False, False, False]
    assert json.loads(ran.stdout) == [expected, expected]
    assert [bool(re.match(pattern, name)) for name in names] == expected  # and Python
