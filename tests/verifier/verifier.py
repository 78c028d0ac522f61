"""An independent verifier, written from docs/fairness.md alone: standard library only, no import
from `service`. It checks the steps the doc specifies byte for byte (format, commitment with the
table's events, fairness, chain, and a player's recorded values); it does not re-run the rules
of the game (`replay`, `result`), which the doc leaves to the game's rules.

`verify(export, expect) -> (failed_step or None, reason)`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

HEX = re.compile(r"(?:[0-9a-f]{2})*")
HASH = re.compile(r"[0-9a-f]{64}")
ZERO = bytes(32)


class Fail(Exception):
    def __init__(self, step: str, reason: str) -> None:
        super().__init__(reason)
        self.step = step


# --- docs/fairness.md: "Canonical encoding" ... "Fingerprint" ------------------------------------


def u32(x: int) -> bytes:
    return x.to_bytes(4, "big")


def enc(tag: bytes, *fields: bytes) -> bytes:
    return b"".join(u32(len(f)) + f for f in (tag, *fields))


def sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def commitment(game_id: str, server_seed: bytes) -> bytes:
    return sha(enc(b"swarm/commit/v1", game_id.encode(), server_seed))


def transcript(game_id: str, players: int, commit: bytes, seeds: list[bytes | None]) -> bytes:
    entries = [b"\x00" if s is None else b"\x01" + s for s in seeds]
    return sha(
        enc(b"swarm/transcript/v1", u32(1), game_id.encode(), u32(players), commit, *entries)
    )


def deck(server_seed: bytes, tr: bytes, players: int) -> list[int]:
    def words() -> Any:
        k = 0
        while True:
            block = hmac.new(server_seed, enc(b"swarm/deck/v1", tr, u32(k)), "sha256").digest()
            for i in range(8):
                yield int.from_bytes(block[4 * i : 4 * i + 4], "big")
            k += 1

    n = 10 * players + 4
    a = list(range(1, n + 1))
    stream = words()
    for i in range(n - 1, 0, -1):
        m = i + 1
        bound = m * (2**32 // m)
        w = next(stream)
        while w >= bound:
            w = next(stream)
        j = w % m
        a[i], a[j] = a[j], a[i]
    return a


def bees(xs: list[int]) -> bytes:
    return b"".join(u32(x) for x in xs)


def fingerprint(tr: bytes, seed: bytes, hands: list[list[int]], stems: list[int]) -> bytes:
    return sha(
        enc(
            b"swarm/fingerprint/v1",
            tr,
            seed,
            u32(len(hands)),
            *(bees(h) for h in hands),
            bees(stems),
        )
    )


def seed_hash(game_id: str, player_id: str, seed: bytes) -> bytes:
    return sha(enc(b"swarm/seed/v1", game_id.encode(), player_id.encode(), seed))


# --- docs/fairness.md: "The hash chain" -------------------------------------------------------

_ESC = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def canon(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)  # the doc: shortest round-trip decimal, Python's repr(float)
    if isinstance(v, str):
        out = []
        for ch in v:
            if ch in _ESC:
                out.append(_ESC[ch])
            elif ord(ch) < 0x20:
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    if isinstance(v, list):
        return "[" + ",".join(canon(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(canon(k) + ":" + canon(v[k]) for k in sorted(v)) + "}"
    raise TypeError(type(v))


def event_hash(prev: bytes, stream: str, version: int, type_: str, data: Any) -> bytes:
    d = canon(data).encode()
    s, t = stream.encode(), type_.encode()
    return sha(
        b"swarm/event/v1"
        + prev
        + u32(len(s))
        + s
        + version.to_bytes(8, "big")
        + u32(len(t))
        + t
        + u32(len(d))
        + d
    )


# --- docs/fairness.md: "The hash chain, version 2" --------------------------------------------

HIDDEN: dict[str, dict[str, tuple[str, ...]]] = {
    "game": {
        "game_started": ("hands",),
        "bee_tapped": ("bee",),
        "pick_confirmed": ("bee", "by_clock"),
    },
    "table": {"seed_contributed": ("seed",), "seed_revealed": ("seed",)},
}


def seal_key(game_id: str, server_seed: bytes) -> bytes:
    return hmac.new(server_seed, enc(b"swarm/seal-key/v2", game_id.encode()), "sha256").digest()


def seal(key: bytes, stream: str, version: int, path: str, value: Any) -> str:
    message = enc(
        b"swarm/seal/v2", stream.encode(), u32(version), path.encode(), canon(value).encode()
    )
    return hmac.new(key, message, "sha256").hexdigest()


def micros(stamp: str) -> int:
    """RFC 3339 UTC (`2025-06-01T18:00:20.5Z`, or `+00:00`) as microseconds since 1970."""
    m = re.fullmatch(
        r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?(Z|\+00:00)", stamp
    )
    if m is None:
        raise ValueError(f"recorded_at {stamp!r} is not UTC RFC 3339")
    y, mo, d, h, mi, sec = (int(g) for g in m.groups()[:6])
    # days since 1970-01-01 (proleptic Gregorian), Howard Hinnant's days_from_civil
    y -= mo <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (mo + (-3 if mo > 2 else 9)) + 2) // 5 + d - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    fraction = int((m.group(7) or "0").ljust(6, "0"))
    return ((days * 24 + h) * 60 + mi) * 60_000_000 + sec * 1_000_000 + fraction


def event_hash_v2(prev: bytes, stream: str, row: dict[str, Any], key: bytes | None) -> bytes:
    kind = stream.split("-", 1)[0]
    version, data = row["version"], dict(row["data"])
    for name in HIDDEN.get(kind, {}).get(row["type"], ()):
        if name not in data:
            continue
        if key is None:
            raise ValueError(f"v{version} hides {name}: no seal key")
        if name == "hands":
            data[name] = [
                seal(key, stream, version, f"hands/{i}", h) for i, h in enumerate(data[name])
            ]
        else:
            data[name] = seal(key, stream, version, name, data[name])
    meta: Any = row.get("metadata") or {}
    if kind == "game":
        if key is None:
            raise ValueError(f"v{version}: no seal key for the metadata")
        meta = seal(key, stream, version, "metadata", meta)
    body = sha(
        enc(
            b"swarm/event-body/v2",
            stream.encode(),
            u32(version),
            row["type"].encode(),
            canon(data).encode(),
            canon(meta).encode(),
        )
    )
    return sha(
        b"swarm/event/v2" + prev + body + micros(row["recorded_at"]).to_bytes(8, "big", signed=True)
    )


def chain(
    rows: list[dict[str, Any]],
    stream: str,
    first: int,
    prev: bytes,
    heads: dict[int, str],
    key: bytes | None = None,
) -> bytes:
    versions = {row.get("chain", 1) for row in rows}
    if len(versions) > 1:
        raise ValueError("the stream mixes chain versions")
    last_time: int | None = None
    for i, row in enumerate(rows):
        if row["version"] != first + i:
            raise ValueError(f"version {first + i} expected, found {row['version']}")
        if row.get("chain", 1) == 2:
            now = micros(row["recorded_at"])
            if last_time is not None and now < last_time:
                raise ValueError(f"v{row['version']} was recorded before the event before it")
            last_time = now
            prev = event_hash_v2(prev, stream, row, key)
        elif row.get("chain", 1) == 1:
            prev = event_hash(prev, stream, row["version"], row["type"], row["data"])
        else:
            raise ValueError(f"v{row['version']}: unknown chain version {row['chain']}")
        if prev.hex() != row["hash"]:
            raise ValueError(f"v{row['version']} hash mismatch")
        if row["version"] in heads and heads[row["version"]] != prev.hex():
            raise ValueError(f"v{row['version']} differs from the recorded head")
    last = first + len(rows) - 1
    if any(v < first or v > last for v in heads):
        raise ValueError("a recorded head is outside the exported events")
    return prev


# --- docs/fairness.md: "Auditing a finished game" ---------------------------------------------


def verify(export: Any, expect: dict[str, Any] | None = None) -> tuple[str | None, str]:
    expect = expect or {}
    try:
        _verify(export, expect)
    except Fail as failure:
        return failure.step, str(failure)
    return None, "ok"


def _verify(x: Any, expect: dict[str, Any]) -> None:
    # format
    try:
        f = x["fairness"]
        events = x["events"]
        assert x["format"] == "swarm-game-export/1" and events
        for name in ("commitment", "transcript", "fingerprint", "server_seed"):
            assert HEX.fullmatch(f[name])
        assert all(s is None or HEX.fullmatch(s) for s in f["client_seeds"])
        for row in events + (x.get("table") or {}).get("events", []):
            assert HASH.fullmatch(row["hash"]) and row["data"]["type"] == row["type"]
    except (AssertionError, KeyError, TypeError) as error:
        raise Fail("format", f"malformed: {error!r}") from None
    by_type: dict[str, list[dict[str, Any]]] = {}
    for row in events:
        by_type.setdefault(row["type"], []).append(row)

    # commitment
    first = events[0]
    c = first["data"]
    if first["type"] != "deal_committed" or first["version"] != 1:
        raise Fail("commitment", "event 1 is not deal_committed")
    if (c["game_id"], c["table_id"]) != (x["game_id"], x["table_id"]):
        raise Fail("commitment", "for another game or table")
    if c["commitment"] != f["commitment"] or c.get("scheme", 1) != f["scheme"]:
        raise Fail("commitment", "not the published commitment")
    if expect.get("commitment") not in (None, c["commitment"]):
        raise Fail("commitment", "not the recorded commitment")
    if len(by_type.get("deal_committed", [])) != 1:
        raise Fail("commitment", "a second deal_committed")
    started = by_type.get("game_started", [{}])[0].get("data")
    if x.get("table") is not None:
        _table(x, expect, started)

    # fairness
    if started is None or "deal_revealed" not in by_type or f["scheme"] != 1:
        raise Fail("fairness", "no deal, no reveal, or another scheme")
    revealed = by_type["deal_revealed"][0]["data"]
    players = len(started["seats"])
    seed = bytes.fromhex(f["server_seed"])
    seeds = [None if s is None else bytes.fromhex(s) for s in f["client_seeds"]]
    if len(seed) != 32 or commitment(x["game_id"], seed).hex() != f["commitment"]:
        raise Fail("fairness", "commitment")
    if len(seeds) != players or any(s is not None and len(s) > 64 for s in seeds):
        raise Fail("fairness", "transcript: seat entries")
    if (
        transcript(x["game_id"], players, bytes.fromhex(f["commitment"]), seeds).hex()
        != (f["transcript"])
    ):
        raise Fail("fairness", "transcript")
    order = deck(seed, bytes.fromhex(f["transcript"]), players)
    if order != f["deck_order"]:
        raise Fail("fairness", "deck")
    hands = [order[10 * i : 10 * i + 10] for i in range(players)]
    stems = order[10 * players : 10 * players + 4]
    if hands != f["hands"] or stems != f["stems"]:
        raise Fail("fairness", "deal")
    tr = bytes.fromhex(f["transcript"])
    if fingerprint(tr, seed, f["hands"], f["stems"]).hex() != f["fingerprint"]:
        raise Fail("fairness", "fingerprint")
    proof = started.get("proof") or {}
    record = {k: f[k] for k in ("commitment", "client_seeds", "transcript", "fingerprint")}
    if {k: proof.get(k) for k in record} != record or proof.get("scheme", 1) != f["scheme"]:
        raise Fail("fairness", "proof differs from the record")
    if expect.get("fingerprint") not in (None, proof["fingerprint"]):
        raise Fail("fairness", "not the recorded fingerprint")
    if started["hands"] != f["hands"] or started["stems"] != f["stems"]:
        raise Fail("fairness", "the game's deal differs")
    if revealed["server_seed"] != f["server_seed"] or revealed["deck_order"] != f["deck_order"]:
        raise Fail("fairness", "the revealed seed or deck differs")

    # chain
    try:
        key = seal_key(x["game_id"], bytes.fromhex(f["server_seed"]))
        chain(events, f"game-{x['game_id']}", 1, ZERO, dict(expect.get("heads", {})), key)
    except ValueError as error:
        raise Fail("chain", str(error)) from None


def _table(x: Any, expect: dict[str, Any], started: dict[str, Any] | None) -> None:
    t = x["table"]
    rows = t["events"]
    if not rows:
        raise Fail("commitment", "no table events")
    prev = bytes.fromhex(t["prev_hash"])
    if rows[0]["version"] == 1 and prev != ZERO:
        raise Fail("commitment", "table v1 must follow 64 zeros")
    try:
        heads = dict(expect.get("table_heads", {}))
        key = seal_key(x["game_id"], bytes.fromhex(x["fairness"]["server_seed"]))
        chain(rows, f"table-{x['table_id']}", rows[0]["version"], prev, heads, key)
    except ValueError as error:
        raise Fail("commitment", f"table: {error}") from None
    gid = x["game_id"]
    head, tail = rows[0]["data"], rows[-1]["data"]
    if head["type"] != "game_prepared" or head["game_id"] != gid:
        raise Fail("commitment", "table events do not start with this game_prepared")
    if head["commitment"] != x["fairness"]["commitment"]:
        raise Fail("commitment", "prepared with another commitment")
    if tail["type"] != "game_opened" or tail["game_id"] != gid:
        raise Fail("commitment", "table events do not end with this game_opened")
    seeds: dict[str, str] = {}
    hashes: dict[str, str] = {}
    closed = False
    for row in rows[1:-1]:
        e = row["data"]
        kind = e["type"]
        if kind in ("game_prepared", "game_opened"):
            raise Fail("commitment", f"a second {kind}")
        if kind == "seat_freed":
            seeds.pop(e["player_id"], None)
            hashes.pop(e["player_id"], None)
        if not kind.startswith("seed"):
            continue
        if e["game_id"] != gid:
            raise Fail("commitment", "a seed event for another game")
        who = e.get("player_id", "")
        if kind in ("seed_contributed", "seed_committed") and closed:
            raise Fail("commitment", "given after seeds closed")
        if kind == "seed_contributed":
            seeds[who] = e["seed"]
            hashes.pop(who, None)
        elif kind == "seed_committed":
            hashes[who] = e["seed_hash"]
            seeds.pop(who, None)
        elif kind == "seeds_closed":
            closed = True
        elif kind in ("seed_revealed", "seed_withheld"):
            if not closed or who not in hashes:
                raise Fail("commitment", f"{kind} without a closed commitment")
            committed = hashes.pop(who)
            if kind == "seed_revealed":
                if seed_hash(gid, who, bytes.fromhex(e["seed"])).hex() != committed:
                    raise Fail("commitment", "a reveal that does not match its commitment")
                seeds[who] = e["seed"]
    if hashes:
        raise Fail("commitment", "dealt while a reveal was owed")
    if started is not None and started.get("proof") is not None:
        given = [
            seeds.get(s["player_id"]) if s["kind"] == "person" else None for s in started["seats"]
        ]
        if started["proof"]["client_seeds"] != given:
            raise Fail("commitment", "the proof's seeds are not the table's")
