"""Steps 4 and 6: `chain` (the log is intact, and holds the heads the player recorded) and
`result` (the replayed game ended with the stings and winners `game_ended` records)."""

from __future__ import annotations

from service.domain.audit.expect import Expectations
from service.domain.audit.export import Decoded
from service.domain.audit.report import Failed
from service.domain.chain import CHAIN_V1, ChainVerdict, verify_chain
from service.domain.rules.engine import GameState, winners_of
from service.domain.rules.events import BeeTapped, GameEnded, GameStarted, PickConfirmed, StemTaken


def check_chain(decoded: Decoded, expect: Expectations) -> tuple[str, ChainVerdict]:
    """`verify_chain` over stream `game-<game_id>`, anchored at every head the player gave."""
    stream = f"game-{decoded.export.game_id}"
    links = [row.record.link(stream) for row in decoded.rows]
    anchors = {version: bytes.fromhex(digest) for version, digest in expect.heads}
    verdict = verify_chain(links, stream=stream, anchors=anchors, seal_keys=decoded.seal_keys)
    if not verdict.ok:
        mine = (
            " (a head you recorded)" if verdict.reason in ("anchor mismatch", "truncated") else ""
        )
        raise Failed(f"{verdict.reason}{mine}: {verdict.detail}", verdict.failed_version)
    _check_actors(decoded)
    held = f", holding the {len(anchors)} heads you recorded" if anchors else ""
    scheme = f" (swarm/event/v{links[0].chain})" if links else ""
    return f"{verdict.verified} events chained{scheme}{held}, head {verdict.head.hex()}", verdict


def _check_actors(decoded: Decoded) -> None:
    """Under v2 the metadata is covered: a person's own move (a tap, a confirm, a chosen stem)
    must have been made by the person in that seat, so two people's moves cannot trade places."""
    started = next((row.event for row in decoded.rows if isinstance(row.event, GameStarted)), None)
    if started is None:
        return
    players = {seat.seat: seat.player_id for seat in started.seats if seat.kind == "person"}
    for row in decoded.rows:
        if row.record.chain == CHAIN_V1 or row.record.metadata is None:
            continue
        event = row.event
        own = (
            isinstance(event, BeeTapped)
            or (isinstance(event, PickConfirmed) and event.by_clock == "none")
            or (isinstance(event, StemTaken) and event.chosen_by == "player")
        )
        if not own or event.seat not in players:  # type: ignore[union-attr]
            continue
        seat: int = event.seat  # type: ignore[union-attr]
        actor = row.record.metadata.get("actor")
        if actor != players[seat]:
            raise Failed(
                f"{row.record.type} of seat {seat} was made by {actor!r}, "
                f"not by the person in that seat ({players[seat]!r})",
                row.version,
            )


def check_result(decoded: Decoded, state: GameState) -> str:
    ended = [row for row in decoded.rows if isinstance(row.event, GameEnded)]
    if state.phase != "ended" or not ended:
        raise Failed(f"the game did not end: the log stops in turn {state.turn}")
    row = ended[-1]
    event = row.event
    assert isinstance(event, GameEnded)
    stings = tuple(seat.stings for seat in state.seats)
    if event.stings != stings:
        raise Failed(
            f"game_ended records stings {list(event.stings)}, the bees taken add up to "
            f"{list(stings)}",
            row.version,
        )
    if event.reason == "finished":
        winners = winners_of(state.seats)
    elif event.reason == "last_person_standing":
        winners = tuple(s.number for s in state.seats if not s.is_bee and s.playing)
    else:
        winners = ()
    if event.winners != winners or state.winners != winners:
        raise Failed(
            f"game_ended names winners {list(event.winners)}, the stings make {list(winners)}",
            row.version,
        )
    who = ", ".join(f"seat {n}" for n in winners) or "nobody"
    return f"{event.reason}: stings {list(stings)}, won by {who}"
