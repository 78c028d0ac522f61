// Plays against a real server with the generated types and openapi-fetch only: a solo game,
// then an online game of two people until one of them has a too-low choice, each game
// followed through its stream as NDJSON (resumed once with Last-Event-ID) to its end, and the
// online table's stream read as NDJSON too.
// Usage: node build/play.js <base url>; prints a JSON summary.
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";
import { follow, tableMessages, type Followed } from "./stream.js";

type GameView = components["schemas"]["GameView"];
type Move = components["schemas"]["Tap"] | components["schemas"]["Confirm"] | components["schemas"]["ChooseStem"];
type Api = Client<paths>;

const base = process.argv[2];
if (!base) throw new Error("usage: play.js <base url>");
let moves = 0;

function fail(what: string, error: unknown): never {
  throw new Error(`${what}: ${JSON.stringify(error)}`);
}

async function guest(name: string): Promise<{ api: Api; token: string }> {
  const { data, error } = await createClient<paths>({ baseUrl: base }).POST("/guests", {
    body: { name },
  });
  if (!data) fail("createGuest", error);
  const headers = { Authorization: `Bearer ${data.token}` };
  return { api: createClient<paths>({ baseUrl: base, headers }), token: data.token };
}

async function view(api: Api, gameId: string): Promise<GameView> {
  const { data, error } = await api.GET("/games/{game_id}", {
    params: { path: { game_id: gameId } },
  });
  if (!data) fail("getGame", error);
  return data;
}

async function move(api: Api, gameId: string, body: Move): Promise<GameView> {
  const { data, error } = await api.POST("/games/{game_id}/moves", {
    params: { path: { game_id: gameId } },
    body,
  });
  if (!data) fail("submitMove", error);
  moves += 1;
  return data;
}

// The next move of the caller, or null when it is not theirs to make.
function next(game: GameView): Move | null {
  const id = `ts-${moves}-${game.version}`;
  if (game.phase === "choosing" && game.choice?.yours) {
    return { type: "take_stem", stem: game.choice.cheapest, move_id: id };
  }
  const lowest = game.hand[0];
  if (game.phase === "picking" && game.confirmed === null && lowest !== undefined) {
    return { type: "confirm", bee: lowest, move_id: id };
  }
  return null;
}

async function play(players: { api: Api }[], gameId: string): Promise<{ choices: number; game: GameView }> {
  let choices = 0;
  for (;;) {
    let progressed = false;
    let last: GameView | null = null;
    for (const { api } of players) {
      const game = await view(api, gameId);
      last = game;
      if (game.phase === "ended") return { choices, game };
      const body = next(game);
      if (body) {
        if (body.type === "take_stem") choices += 1;
        last = await move(api, gameId, body);
        progressed = true;
      }
    }
    if (last?.phase === "ended") return { choices, game: last };
    if (!progressed) await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function summary(followed: Followed, game: GameView) {
  return {
    versions: followed.messages.map((m) => m.id),
    final_version: game.version,
    last_type: followed.messages.at(-1)?.data.type,
    reconnects: followed.reconnects,
    ended: followed.messages.some((m) => m.data.type === "game_ended"),
    winners: game.result?.winners ?? [],
  };
}

// Solo: the person against three bee players.
const ada = await guest("Ada TS");
const solo = await ada.api.POST("/solo-tables", { body: { players: 4 } });
if (!solo.data?.game) fail("createSoloTable", solo.error);
const soloId = solo.data.game.game_id;
const soloStream = follow(base, soloId, ada.token, { resumeAfter: 5 });
const soloPlayed = await play([ada], soloId);
const soloSummary = summary(await soloStream, soloPlayed.game);

// Online: two people, played (and played again) until one of them chooses a stem.
const hana = await guest("Hana TS");
const bob = await guest("Bob TS");
const table = await hana.api.POST("/tables", {
  body: { seats: 2, turn_seconds: 600, choice_seconds: 600 },
});
if (!table.data) fail("createTable", table.error);
const tableId = table.data.table_id;
const joined = await bob.api.POST("/tables/{table_id}/seats", {
  params: { path: { table_id: tableId } },
});
if (!joined.data?.game) fail("joinTable", joined.error);
let gameId = joined.data.game.game_id;
const online = [];
for (let number = 0; number < 12; number += 1) {
  const stream = follow(base, gameId, bob.token, { resumeAfter: 3 });
  const played = await play([hana, bob], gameId);
  online.push({ ...summary(await stream, played.game), choices: played.choices });
  if (played.choices > 0) break;
  const again = await hana.api.POST("/tables/{table_id}/games", {
    params: { path: { table_id: tableId } },
  });
  const newest = again.data?.games.at(-1);
  if (!newest) fail("playAgain", again.error);
  gameId = newest;
}
// The online table's own stream, as NDJSON, as far as its first game's opening.
const logged = await tableMessages(base, tableId, hana.token, "game_opened");
const tableLog = { ids: logged.map((m) => m.id), events: logged.map((m) => m.event), types: logged.map((m) => m.data.type) };
process.stdout.write(JSON.stringify({ solo: soloSummary, online, moves, tableLog }) + "\n");
