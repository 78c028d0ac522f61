"""A client that nobody here writes: `openapi-python-client` generates one from the committed
document into a temporary directory, and it plays a whole solo game and an online game with a
too-low choice against the real server, using only the generated code (its models, its
operations, its enums): if the document is wrong, this fails."""

from __future__ import annotations

import importlib
import itertools
import json
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "openapi" / "openapi.json"
_ids = itertools.count(1)


@pytest.fixture(scope="module")
def client_package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[types.ModuleType]:
    out = tmp_path_factory.mktemp("generated")
    config = out / "config.yml"
    config.write_text("post_hooks: []\n")  # no formatter needed to use the code
    subprocess.run(
        [
            str(Path(sys.executable).parent / "openapi-python-client"),
            "generate",
            "--path",
            str(DOCUMENT),
            "--meta",
            "none",
            "--config",
            str(config),
            "--output-path",
            str(out / "swarm_generated"),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module("swarm_generated")
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m.startswith("swarm_generated")]:
            del sys.modules[name]


class Generated:
    """The generated modules, looked up by name (as a user of the package would import them)."""

    def __init__(self, package: types.ModuleType, base_url: str) -> None:
        self.name = package.__name__
        self.base_url = base_url
        self.models = importlib.import_module(f"{self.name}.models")
        self.Client = importlib.import_module(self.name).Client
        self.AuthenticatedClient = importlib.import_module(self.name).AuthenticatedClient

    def op(self, tag: str, operation: str) -> Any:
        return importlib.import_module(f"{self.name}.api.{tag}.{operation}")

    def guest(self, name: str) -> Any:
        anonymous = self.Client(base_url=self.base_url)
        out = self.op("players", "create_guest").sync(
            client=anonymous, body=self.models.GuestIn(name=name)
        )
        assert isinstance(out, self.models.GuestOut), out
        return self.AuthenticatedClient(base_url=self.base_url, token=out.token)

    def game(self, client: Any, game_id: Any) -> Any:
        view = self.op("games", "get_game").sync(game_id, client=client)
        assert isinstance(view, self.models.GameView), view
        return view

    def move(self, client: Any, game_id: Any, body: Any) -> Any:
        view = self.op("games", "submit_move").sync(game_id, client=client, body=body)
        assert isinstance(view, self.models.GameView), view
        return view

    def confirm_lowest(self, view: Any) -> Any:
        return self.models.Confirm(
            type_=self.models.ConfirmType.CONFIRM, bee=view.hand[0], move_id=f"c{next(_ids)}"
        )

    def take_cheapest(self, view: Any) -> Any:
        return self.models.ChooseStem(
            type_=self.models.ChooseStemType.TAKE_STEM,
            stem=view.choice.cheapest,
            move_id=f"s{next(_ids)}",
        )


@pytest.fixture
def api(client_package: types.ModuleType, live_server: str) -> Generated:
    return Generated(client_package, live_server)


def test_a_generated_client_plays_a_whole_solo_game(api: Generated) -> None:
    ada = api.guest("Ada")
    table = api.op("tables", "create_solo_table").sync(
        client=ada, body=api.models.SoloTableIn(players=3)
    )
    assert isinstance(table, api.models.TableView), table
    view = table.game
    game_id = view.game_id
    tapped = api.move(
        ada,
        game_id,
        api.models.Tap(type_=api.models.TapType.TAP, bee=view.hand[-1], move_id="tap-1"),
    )
    assert tapped.tapped == view.hand[-1]
    while view.phase != api.models.Phase.ENDED:
        if view.phase == api.models.Phase.CHOOSING:
            assert view.choice.yours
            view = api.move(ada, game_id, api.take_cheapest(view))
        else:
            assert view.hand_stings == [api_stings(b) for b in view.hand]
            view = api.move(ada, game_id, api.confirm_lowest(view))
    assert [score.seat for score in view.result.scores] == [1, 2, 3]
    page = api.op("games", "list_game_events").sync(game_id, client=ada)
    assert isinstance(page, api.models.EventPage), page
    kinds = {type(e).__name__ for e in page.events}
    assert {"GameStartedEntry", "PicksRevealedEntry", "GameEndedEntry"} <= kinds, kinds
    verdict = api.op("games", "verify_game").sync(game_id, client=ada)
    assert isinstance(verdict, api.models.Verification) and verdict.ok, verdict
    reused = api.op("games", "submit_move").sync(
        game_id,
        client=ada,
        body=api.models.Tap(type_=api.models.TapType.TAP, bee=1, move_id="tap-1"),
    )
    assert isinstance(reused, api.models.Problem) and reused.code == "move-id-reused", reused
    history = api.op("players", "list_my_history").sync(client=ada)
    assert isinstance(history, api.models.HistoryPage), history
    [past] = history.games
    assert past.game_id == game_id and past.mode == "solo" and past.rating is None
    assert past.seats == 3 and {o.kind for o in past.others} == {api.models.SeatKind.BEE}
    assert past.you.stings == view.result.scores[0].stings and past.export.endswith("/export")
    # The NDJSON export of one's games: each line the generated `GameExport`.
    me = http_json(ada, "/me")
    bulk = api.op("players", "export_player_games").sync_detailed(me["player_id"], client=ada)
    assert bulk.status_code == 200, bulk
    lines = bulk.content.decode().splitlines()
    [exported] = [api.models.GameExport.from_dict(json.loads(line)) for line in lines]
    assert exported.game_id == game_id


def http_json(client: Any, path: str) -> Any:
    return client.get_httpx_client().get(path).json()


def api_stings(bee: int) -> int:
    """Seed §2, to check the stings the views carry (a client would not need it)."""
    if bee == 55:
        return 7
    if bee in (11, 22, 33, 44, 66, 77):
        return 5
    return 3 if bee % 10 == 0 else 2 if bee % 10 == 5 else 1


def test_a_generated_client_plays_online_games_until_a_too_low_choice(api: Generated) -> None:
    hana, bob = api.guest("Hana"), api.guest("Bob")
    body = api.models.TableIn(seats=2, turn_seconds=600, choice_seconds=600, rated=True)
    table = api.op("tables", "create_table").sync(client=hana, body=body)
    assert isinstance(table, api.models.TableView) and table.rated is True, table
    joined = api.op("tables", "join_table").sync(table.table_id, client=bob)
    assert isinstance(joined, api.models.TableView) and joined.game is not None, joined
    mine = api.op("players", "list_my_games").sync(client=bob)
    assert isinstance(mine, api.models.MyGames)
    assert [t.table_id for t in mine.tables] == [table.table_id]
    ticket = api.op("games", "create_game_stream_ticket").sync(joined.game.game_id, client=bob)
    assert isinstance(ticket, api.models.StreamTicketOut), ticket
    people = {1: hana, 2: bob}
    choices = 0
    game_id = joined.game.game_id
    for number in range(8):
        view = api.game(hana, game_id)
        while view.phase != api.models.Phase.ENDED:
            for seat, person in people.items():
                view = api.game(person, game_id)
                if view.phase == api.models.Phase.CHOOSING and view.choice.yours:
                    choices += 1
                    view = api.move(person, game_id, api.take_cheapest(view))
                elif view.phase == api.models.Phase.PICKING and view.confirmed is None:
                    view = api.move(person, game_id, api.confirm_lowest(view))
                assert view.you == seat
        assert view.result.winners and {s.seat for s in view.result.scores} == {1, 2}
        if choices:
            break
        again = api.op("tables", "play_again").sync(table.table_id, client=hana)
        assert isinstance(again, api.models.TableView), again
        game_id = again.games[-1]
        assert number < 7, "no too-low bee in 8 games"
    assert choices > 0


def with_newer_values(view: dict[str, Any], page: dict[str, Any]) -> tuple[Any, Any, Any]:
    """Real answers as a newer server might send them: a phase, a bee level, an event type and a
    problem code this document does not know (adding them is not breaking: README,
    'Versions')."""
    view = {**view, "phase": "bidding"}
    view["seats"] = [
        {**s, "level": "grandmaster"} if s["kind"] == "bee" else s for s in view["seats"]
    ]
    newer_event = {**page["events"][0], "type": "bee_buzzed", "data": {"bee": 7, "loud": True}}
    page = {**page, "events": [*page["events"], newer_event]}
    problem = {
        "type": "urn:swarm:problem:table-on-fire",
        "title": "The table is on fire",
        "status": 409,
        "detail": "Every problem says what went wrong this time.",
        "code": "table-on-fire",
    }
    return view, page, problem


def test_a_generated_client_takes_values_a_newer_server_adds(api: Generated) -> None:
    ada = api.guest("Newer")
    table = api.op("tables", "create_solo_table").sync(
        client=ada, body=api.models.SoloTableIn(players=3)
    )
    game_id = table.game.game_id
    http = ada.get_httpx_client()
    view = http.get(f"/games/{game_id}").json()
    page = http.get(f"/games/{game_id}/events").json()
    # What this version knows decodes to the generated enums and event models...
    known = api.models.GameView.from_dict(view)
    assert known.phase == api.models.Phase.PICKING
    assert any(s.level == api.models.BeeLevel.EASY for s in known.seats)
    assert isinstance(api.models.EventPage.from_dict(page).events[0], api.models.DealCommittedEntry)
    # ...and what it does not know decodes too, as plain values, without an exception.
    newer_view, newer_page, problem = with_newer_values(view, page)
    decoded = api.models.GameView.from_dict(newer_view)
    assert decoded.phase == "bidding" and not isinstance(decoded.phase, api.models.Phase)
    assert {s.level for s in decoded.seats if s.kind == api.models.SeatKind.BEE} == {"grandmaster"}
    events = api.models.EventPage.from_dict(newer_page).events
    assert isinstance(events[-1], api.models.UnknownEvent) and events[-1].type_ == "bee_buzzed"
    assert events[-1].data.additional_properties == {"bee": 7, "loud": True}
    assert not isinstance(events[0], api.models.UnknownEvent)
    decoded_problem = api.models.Problem.from_dict(problem)
    assert decoded_problem.code == "table-on-fire"


def test_a_generated_client_follows_a_game_through_its_stream_with_resume(api: Generated) -> None:
    """streamGameEvents from start to end as NDJSON (issue 44, item 8): a line split and the
    generated `GameStreamMessage` (and its event models), no parser written here; hung up
    after five messages and resumed with `Last-Event-ID`. Then the table's stream, the same
    way, as far as its game's opening."""
    ada = api.guest("Streamer")
    table = api.op("tables", "create_solo_table").sync(
        client=ada, body=api.models.SoloTableIn(players=3)
    )
    game_id = table.game.game_id
    http = ada.get_httpx_client()
    received: list[Any] = []

    def read(last_event_id: str | None, stop_after: int | None) -> None:
        headers = {"Accept": "application/x-ndjson"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        with http.stream("GET", f"/games/{game_id}/stream", headers=headers) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("application/x-ndjson")
            for line in response.iter_lines():
                if not line:
                    continue  # a heartbeat
                message = api.models.GameStreamMessage.from_dict(json.loads(line))
                received.append(message)
                if stop_after is not None and len(received) == stop_after:
                    return

    read(None, stop_after=5)
    view = api.game(ada, game_id)
    while view.phase != api.models.Phase.ENDED:
        if view.phase == api.models.Phase.CHOOSING:
            view = api.move(ada, game_id, api.take_cheapest(view))
        else:
            view = api.move(ada, game_id, api.confirm_lowest(view))
    read(str(received[-1].id), stop_after=None)  # the stream ends by itself after the game
    assert [m.id for m in received] == list(range(1, view.version + 1))
    assert all(not isinstance(m.data, api.models.UnknownEvent) for m in received)
    assert isinstance(received[0].data, api.models.DealCommittedEntry)
    assert isinstance(received[-1].data, api.models.DealRevealedEntry)
    assert any(isinstance(m.data, api.models.GameEndedEntry) for m in received)
    table_messages = []
    stream = http.stream(
        "GET", f"/tables/{table.table_id}/stream", headers={"Accept": "application/x-ndjson"}
    )
    with stream as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line:
                table_messages.append(api.models.TableStreamMessage.from_dict(json.loads(line)))
                if table_messages[-1].event == "game_opened":
                    break  # the table stays open: what it logged so far is enough
    assert [m.id for m in table_messages] == list(range(1, len(table_messages) + 1))
    assert table_messages[0].event == "table_opened"
    assert all(m.data.type_ == m.event for m in table_messages)


def test_a_generated_client_plays_now(api: Generated) -> None:
    """playNow through the generated code: the first asker opens a table of the kind, the next
    is seated there."""
    ivy, jon = api.guest("Ivy"), api.guest("Jon")
    body = api.models.PlayNowIn(seats=7, rated=True, stake=0)  # a kind no other test asks for
    opened = api.op("tables", "play_now").sync(client=ivy, body=body)
    assert isinstance(opened, api.models.TableView) and opened.you == 1, opened
    seated = api.op("tables", "play_now").sync(client=jon, body=body)
    assert isinstance(seated, api.models.TableView), seated
    assert seated.table_id == opened.table_id and seated.you == 2 and seated.rated is True
