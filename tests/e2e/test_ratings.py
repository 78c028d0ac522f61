"""Skill ratings over HTTP on PostgreSQL (issue 43): a table opened as rated changes the
ratings of the people with accounts who play it, as their profile and the leaderboard by
rating show; a casual table changes none; and `swarm ratings` recomputes every rating in the
database from the log and finds the same numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from typing import Any

from service.domain.audit import audit_document
from service.domain.ratings import NEW
from tests.e2e.api_client import Api, play_online_to_the_end
from tests.e2e.test_coins import member, player_id


async def profile(api: Api, who: str | None = None) -> dict[str, Any]:
    path = f"/players/{who}" if who else "/me"
    response = await api.client.get(path, headers=api.headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def played(anon: Api, people: list[Api], *, rated: bool) -> dict[str, Any]:
    host, *others = people
    table = await host.create_table(seats=len(people), rated=rated)
    assert table["rated"] is rated
    joined: dict[str, Any] = {}
    for person in others:
        joined = await person.ok_table_action(table["table_id"], "seats")
    seats = {n: p for n, p in enumerate(people, 1)}
    return await play_online_to_the_end(seats, joined["game"]["game_id"])


async def test_rule_a_rated_game_moves_ratings_a_casual_one_does_not(
    anon: Api, database_url: str
) -> None:
    people = [await member(anon, n) for n in ("Ann", "Ben", "Cy")]
    ids = [await player_id(p) for p in people]
    start = await profile(people[0])
    assert start["rating"] == {
        "points": 1500,
        "provisional": True,
        "games": 0,
        "mu": NEW.mu,
        "sigma": NEW.sigma,
    }
    casual = await played(anon, people, rated=False)
    assert (await profile(people[0]))["rating"]["games"] == 0
    assert casual["ratings"] is None

    last = await played(anon, people, rated=True)
    by_seat = {s["seat"]: s["stings"] for s in last["seats"]}
    ratings = [(await profile(people[0], who))["rating"] for who in ids]
    assert all(r["games"] == 1 and r["provisional"] for r in ratings)
    # The lobby shows the table as rated, with its people's average rating.
    lobby = await people[0].lobby(limit=100)
    [listed] = [t for t in lobby["tables"] if t["table_id"] == last["table_id"]]
    points = [r["points"] for r in ratings]
    assert listed["rated"] is True and listed["average_rating"] == round(sum(points) / 3)
    # The end of the game shows each person's change, seat by seat.
    ended = await people[1].game(last["game_id"])
    assert [r["seat"] for r in ended["ratings"]] == [1, 2, 3]
    for shown, rating in zip(ended["ratings"], ratings, strict=True):
        assert shown["status"] == "delivered" and shown["before"] == 1500
        assert shown["after"] == rating["points"] and shown["change"] == rating["points"] - 1500

    # The replay's steps carry the same changes, before and after, to anyone who may see the
    # game (issue 43: "shown ... the replay"); a casual game's none.
    async def steps(game_id: str) -> dict[str, Any]:
        response = await anon.client.get(f"/games/{game_id}/steps", headers=people[2].headers)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    assert (await steps(last["game_id"]))["ratings"] == ended["ratings"]
    assert (await steps(casual["game_id"]))["ratings"] is None
    # Fewer stings, more points: the winners gain and the last loses (unless all tied).
    ranked = sorted(by_seat, key=lambda seat: by_seat[seat])
    points = [ratings[seat - 1]["points"] for seat in ranked]
    assert points == sorted(points, reverse=True), (by_seat, ratings)
    if len(set(by_seat.values())) > 1:
        assert points[0] > 1500 > points[-1], (by_seat, ratings)

    ask: dict[str, str | int] = {"by": "rating", "limit": 100}
    page = (await anon.client.get("/leaderboard", params=ask, headers=people[0].headers)).json()
    assert page.get("by") == "rating", page
    listed = {e["player_id"]: e for e in page["entries"]}
    for who, rating in zip(ids, ratings, strict=True):
        assert listed[who]["rating"] == rating and listed[who]["xp"] > 0
    mus = [e["rating"]["mu"] for e in page["entries"] if e["rating"]["provisional"]]
    assert mus == sorted(mus, reverse=True)

    # My games' history: newest first, the rated game with its change, filters, links.
    history = (await people[0].client.get("/me/history", headers=people[0].headers)).json()
    rated_game, casual_game = history["games"][:2]
    assert (rated_game["rated"], casual_game["rated"]) == (True, False)
    assert rated_game["ended_at"] >= casual_game["ended_at"]
    assert rated_game["seats"] == 3 and rated_game["mode"] == "online"
    assert {o["player_id"] for o in rated_game["others"]} == set(ids[1:])
    assert rated_game["you"]["stings"] == by_seat[1]
    assert rated_game["you"]["place"] == sorted(set(by_seat.values())).index(by_seat[1]) + 1
    change = rated_game["rating"]
    assert change["before"] == 1500 and change["after"] == ratings[0]["points"]
    assert change["change"] == change["after"] - change["before"]
    assert casual_game["rating"] is None
    assert rated_game["replay"] == f"/games/{rated_game['game_id']}/steps"
    exported = await people[0].client.get(rated_game["export"], headers=people[0].headers)
    assert exported.status_code == 200 and exported.json()["game_id"] == rated_game["game_id"]
    for kind, expected in (("rated", True), ("casual", False)):
        page = (
            await people[0].client.get(
                "/me/history", params={"kind": kind, "limit": 1}, headers=people[0].headers
            )
        ).json()
        assert [g["rated"] for g in page["games"]] == [expected] and page["next_offset"] is None

    done = subprocess.run(
        [sys.executable, "-m", "service", "ratings"],
        env={**os.environ, "DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every rating is the one the games give" in done.stdout
    changes = int(done.stdout.split(" rating changes")[0].split(", ")[-1])
    assert changes >= 3


async def test_a_players_games_export_as_ndjson_each_line_an_audited_game(anon: Api) -> None:
    ann, ben = await member(anon, "Ann"), await member(anon, "Ben")
    ann_id, ben_id = await player_id(ann), await player_id(ben)
    solo = await ann.solo_table(players=2)
    await ann.play_to_the_end(solo["game"]["game_id"])
    await played(anon, [ann, ben], rated=True)
    await played(anon, [ann, ben], rated=False)

    async def export(api: Api, who: str, **params: Any) -> list[dict[str, Any]]:
        response = await api.client.get(f"/players/{who}/games", params=params, headers=api.headers)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/x-ndjson")
        assert response.text.endswith("\n") or response.text == ""
        return [json.loads(line) for line in response.text.splitlines()]

    mine = await export(ann, ann_id)
    history = (await ann.client.get("/me/history", headers=ann.headers)).json()["games"]
    assert [g["game_id"] for g in mine] == [g["game_id"] for g in history]  # newest first
    assert len(mine) == 3 and solo["game"]["game_id"] in {g["game_id"] for g in mine}
    # Each line is exportGame's document, and the audit passes on it.
    one = (await ann.client.get(f"/games/{mine[0]['game_id']}/export", headers=ann.headers)).json()
    assert mine[0] == one
    for document in mine:
        report = audit_document(document)
        assert report.ok, report
    # Another caller gets the online games alone; `max`, `since` and `until` bound them.
    theirs = await export(ben, ann_id)
    assert [g["game_id"] for g in theirs] == [g["game_id"] for g in mine[:2]]
    assert len(await export(ben, ann_id, max=1)) == 1
    ended = history[0]["ended_at"]
    assert [g["game_id"] for g in await export(ann, ann_id, since=ended)] == [mine[0]["game_id"]]
    assert mine[0]["game_id"] not in {g["game_id"] for g in await export(ann, ann_id, until=ended)}
    assert await export(ann, ben_id, until="2001-01-01T00:00:00Z") == []
    assert await export(ann, ann_id, since="2001-01-01T01:00:00+01:00") == mine
    unknown = await ann.client.get(f"/players/{uuid.uuid4()}/games", headers=ann.headers)
    assert unknown.status_code == 404
    assert unknown.headers["content-type"].startswith("application/problem+json")
    # Times are RFC 3339 with their offset, as the document's pattern says, and within the
    # years 1 to 9999 in UTC: anything else is a 400, never read as something else (a Unix
    # time, no bound) nor a 500 (a year 0 or 10000 once in UTC, which PostgreSQL refused).
    for odd in (
        "yesterday",
        "1700000000",
        "-1",
        "1e9",
        "null",
        "2026-12-07",
        "2026-12-07T00:00:00",  # no offset
        "2026-12-07T00:00:00+0100",
        "2026-13-07T00:00:00Z",
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T23:59:59-01:00",
    ):
        for name in ("since", "until"):
            bad = await ann.client.get(
                f"/players/{ann_id}/games", params={name: odd}, headers=ann.headers
            )
            assert bad.status_code == 400, (name, odd, bad.text)
            assert bad.headers["content-type"].startswith("application/problem+json")
