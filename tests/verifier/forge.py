"""A forger's tool: from a finished game's export (whose server seed is public), make another
legal game under the same commitment and recompute every hash. The result agrees with itself,
so it passes an audit given nothing else; what a player recorded during play catches it.

    python -m tests.verifier.forge REAL.json [SEED_HEX] > FORGED.json

Seat 1 gets SEED_HEX (default: `f0f0`) as its client seed instead of what it gave; every other
seat keeps its entry. Every seat then plays its lowest bee each turn, untimed.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import msgspec

from service.domain import fairness
from service.domain.chain import GENESIS, canonical_json, event_hash
from service.domain.rules.bees import bee_commands
from service.domain.rules.commands import Command, ConfirmPick, StartGame, TakeStem
from service.domain.rules.engine import cheapest_stem, decide, evolve, initial_state
from service.domain.rules.events import (
    DealCommitted,
    DealProof,
    DealRevealed,
    Event,
    SeatInfo,
    event_type,
)


def forge(real: dict[str, Any], seat_1_seed: bytes = b"\xf0\xf0") -> dict[str, Any]:
    game_id, table_id = real["game_id"], real["table_id"]
    record = real["fairness"]
    server_seed = bytes.fromhex(record["server_seed"])  # published when the game ended
    started = next(e["data"] for e in real["events"] if e["type"] == "game_started")
    seats = tuple(msgspec.convert(s, SeatInfo) for s in started["seats"])
    seeds = [None if s is None else bytes.fromhex(s) for s in record["client_seeds"]]
    seeds[0] = seat_1_seed
    p = fairness.derive(game_id, server_seed, seeds)
    hexes = tuple(None if s is None else s.hex() for s in p.client_seeds)
    proof = DealProof(
        commitment=p.commitment.hex(),
        client_seeds=hexes,
        transcript=p.transcript.hex(),
        fingerprint=p.fingerprint.hex(),
    )
    log: list[Event] = [
        DealCommitted(game_id=game_id, table_id=table_id, commitment=p.commitment.hex())
    ]
    state = initial_state

    def run(command: Command) -> None:
        nonlocal state
        for event in decide(command, state):
            log.append(event)
            state = evolve(state, event)

    run(
        StartGame(
            game_id=game_id, table_id=table_id, seats=seats, deck_order=p.deck_order, proof=proof
        )
    )
    while state.phase != "ended":
        for command in bee_commands(state):
            run(command)
        if state.phase == "choosing" and state.pending is not None:
            run(TakeStem(seat=state.pending.seat, stem=cheapest_stem(state.stems)))
            continue
        waiting = [s for s in state.seats if s.playing and not s.is_bee and s.confirmed is None]
        if waiting:
            run(ConfirmPick(seat=waiting[0].number, bee=min(waiting[0].hand)))
    log.append(DealRevealed(server_seed=server_seed.hex(), deck_order=p.deck_order))

    rows, prev = [], GENESIS
    recorded_at = real["events"][0]["recorded_at"]
    for version, event in enumerate(log, start=1):
        data = msgspec.to_builtins(event)
        prev = event_hash(prev, f"game-{game_id}", version, event_type(event), canonical_json(data))
        rows.append(
            {
                "version": version,
                "type": event_type(event),
                "recorded_at": recorded_at,
                "hash": prev.hex(),
                "data": data,
            }
        )
    forged = {
        "format": real["format"],
        "game_id": game_id,
        "table_id": table_id,
        "events": rows,
        "fairness": {
            "scheme": 1,
            "commitment": p.commitment.hex(),
            "client_seeds": list(hexes),
            "transcript": p.transcript.hex(),
            "fingerprint": p.fingerprint.hex(),
            "server_seed": server_seed.hex(),
            "deck_order": list(p.deck_order),
            "hands": [list(h) for h in p.hands],
            "stems": list(p.stems),
        },
    }
    parsed: dict[str, Any] = json.loads(json.dumps(forged))  # what a file of it would hold
    return parsed


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as file:
        real = json.load(file)
    seed = bytes.fromhex(sys.argv[2]) if len(sys.argv) > 2 else b"\xf0\xf0"
    json.dump(forge(real, seed), sys.stdout)
