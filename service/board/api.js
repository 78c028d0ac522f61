// The only module that talks to the service. It uses the documented operations (see /docs) over
// the same origin, exactly as any third-party client would, and nothing else.
//
// Following a game: `followGame` opens the game's Server-Sent Events stream with EventSource,
// authenticated by a short-lived stream ticket (createGameStreamTicket: EventSource cannot send
// an Authorization header, and the bearer token never goes in a URL). EventSource reconnects on
// its own with Last-Event-ID; when the ticket has expired, a new one is asked for and the stream
// reopened after the last version received. Without EventSource it polls listGameEvents. Either
// way the contract is the same: events in version order, none lost, none repeated.

const SESSION_KEY = "swarm.board.session";
const PLACE_KEY = "swarm.board.place";

// What a person can do about each refusal, chosen by the problem's `code` (docs/errors.md),
// under the problem's own title. The status decides only for a code this board does not know.
export const ADVICE_BY_CODE = {
  "bad-request": "The board sent something the service did not accept. Reload the page and try again.",
  "body-required": "The board sent something the service did not accept. Reload the page and try again.",
  "http-error": "The board sent something the service did not accept. Reload the page and try again.",
  "rule-violation": "That move breaks a rule. The board has caught up with the game: decide again.",
  "invalid-credentials": "Check the name and the password, then try again.",
  unauthorized: "Your identity has expired or was revoked. Choose a name again, or log in.",
  "buy-in-needs-account": "Register (you keep your guest name and games), then open or join the buy-in table again. Free tables need no account.",
  forbidden: "Only the people seated here can do that.",
  "not-host": "Only the host can do that. Wait for them, or open a table of your own.",
  "not-permitted": "You can't do that at this table.",
  "not-seated": "You don't sit at this table. Join it from the lobby if it has a free seat.",
  "not-found": "It no longer exists. Go back to the lobby or to setup.",
  "version-not-found": "That moment of the game does not exist. Reload the page.",
  "method-not-allowed": "The board sent something the service did not accept. Reload the page.",
  "request-timeout": "The connection was too slow. Try again.",
  "already-confirmed": "Your pick is already confirmed: wait for the next turn.",
  "already-registered": "You have an account already: log in with it.",
  "already-seated": "You already sit at this table.",
  "bee-not-in-hand": "That bee is no longer in your hand. The board has caught up: pick again.",
  "bees-not-allowed": "Bee players fill only a free table, once a second person has joined.",
  "concurrent-change": "Someone changed the same thing at the same moment. Try again.",
  conflict: "The table changed while you acted. The board has caught up: try again.",
  "game-already-started": "The game has already started.",
  "game-in-progress": "A game is running at this table: wait for it to end.",
  "game-not-over": "That is possible only once the game has ended.",
  "game-not-started": "The game has not started yet: wait for the deal.",
  "game-over": "The game has ended: no more moves.",
  "illegal-move": "That is not allowed right now. The board has caught up: decide again.",
  "insufficient-coins": "You don't have enough coins for this buy-in. Choose a free table or a smaller buy-in.",
  "move-id-reused": "The board sent that move twice. Reload the page.",
  "idempotency-key-reused": "The board sent two different requests as one. Reload the page and try again.",
  "idempotency-key-in-use": "That request is still being handled. Wait a moment and look again.",
  "name-taken": "Someone has that name (or one that looks the same). Choose another.",
  "no-game-to-replay": "No game has ended at this table yet.",
  "no-game-to-seed": "There is no next game to give a seed to yet.",
  "not-enough-people": "Play again needs a second person at the table: bee players don't keep a game going. Go back to the lobby to find one.",
  "not-your-decision": "It is not your decision: another player is choosing.",
  "nothing-tapped": "Tap a bee first, then CONFIRM.",
  "nothing-to-reveal": "You gave no seed to reveal for the next game.",
  "seat-not-playing": "You left this game: you pick no more bees.",
  "seeds-closed": "Seeds for the next game are closed: wait for the deal.",
  "seeds-still-open": "Seeds are still open: nothing is to be revealed yet.",
  "table-closed": "This table has closed: everyone left. Open or join another in the lobby.",
  "table-full": "Every seat is taken. Choose another table in the lobby.",
  "too-many-tables": "You already host the most open tables one player may. Close one (leave it) first.",
  "body-too-large": "That was too large to send.",
  "not-acceptable": "The board asked for a form the service does not send. Reload the page.",
  "unsupported-media-type": "The board sent something the service did not accept. Reload the page.",
  "invalid-account": "Names need a visible character; passwords 8 to 128 characters.",
  "invalid-deal": "The service refused its own deal. Try again, and report it if it happens again.",
  "invalid-move": "The board sent a move that can never be valid. Reload the page.",
  "invalid-name": "Choose a name with visible letters, without control characters.",
  "invalid-seats": "A table has 2 to 8 seats.",
  "invalid-table": "Check the table's settings: 2 to 8 seats, 1 to 600 seconds a turn.",
  "seed-does-not-match": "The revealed seed is not the one committed to.",
  "stem-out-of-range": "There are only 4 stems.",
  "too-many-logins": "Too many failed logins: wait 15 minutes, then try again.",
  "too-many-requests": "Too many requests at once. Wait a moment, then try again.",
  "too-many-analyses": "You have asked the expert bee for many analyses lately. Answers already given still show; wait a few minutes for new ones.",
  "too-many-sign-ups": "Too many new players from this address in the last hour. Wait, or log in.",
  internal: "The service failed. Wait a few seconds and try again.",
  "internal-error": "The service failed. Wait a few seconds and try again.",
  "database-unavailable": "The service is busy or restarting. Wait a few seconds and try again.",
  "migrations-pending": "The service is being upgraded. Wait a few seconds and try again.",
  overloaded: "The service is busy. Wait a few seconds and try again.",
};
const ADVICE_BY_STATUS = {
  400: "The board sent something the service did not accept. Reload the page and try again.",
  401: "Your identity has expired or was revoked. Choose a name again, or log in.",
  403: "You can't do that here.",
  404: "It no longer exists. Go back to the lobby or to setup.",
  409: "The game or table moved on before your action arrived. The board has caught up; try again.",
  413: "That was too large to send.",
  422: "Check the values and try again.",
  429: "Too many requests at once. Wait a moment, then try again.",
  503: "The service is busy or restarting. Wait a few seconds and try again.",
};
const NETWORK_ADVICE = "The server can't be reached. Check your connection; the board keeps retrying.";

export class Problem extends Error {
  constructor(status, body) {
    super(body?.title ?? `HTTP ${status}`);
    this.status = status;
    this.title = body?.title ?? (status ? `The service answered ${status}` : "No connection");
    this.detail = body?.detail ?? null;
    this.code = body?.code ?? body?.extra?.code ?? null;
    this.advice = status ? ADVICE_BY_CODE[this.code] ?? ADVICE_BY_STATUS[status] ?? "Try again in a moment." : NETWORK_ADVICE;
  }
}

export function session() {
  try {
    return JSON.parse(localStorage.getItem(SESSION_KEY) ?? "null");
  } catch {
    return null;
  }
}

export function saveSession(value) {
  if (value) localStorage.setItem(SESSION_KEY, JSON.stringify(value));
  else localStorage.removeItem(SESSION_KEY);
}

// Where this browser last sat: {table_id, game_id, mode}. The server's own answer is
// listMyGames (`resumable` below); this copy only saves a round trip on a reload.
export function place() {
  try {
    return JSON.parse(localStorage.getItem(PLACE_KEY) ?? "null");
  } catch {
    return null;
  }
}

export function savePlace(value) {
  if (value) localStorage.setItem(PLACE_KEY, JSON.stringify(value));
  else localStorage.removeItem(PLACE_KEY);
}

async function call(method, path, body) {
  const headers = { accept: "application/json" };
  const token = session()?.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new Problem(0, null);
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) throw new Problem(response.status, data);
  return data;
}

// The answer's text as it came (the chain check needs numbers exactly as written).
async function callText(path) {
  const headers = { accept: "application/json" };
  const token = session()?.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, { headers });
  } catch {
    throw new Problem(0, null);
  }
  const text = await response.text();
  if (!response.ok) {
    let data = null;
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
    throw new Problem(response.status, data);
  }
  return text;
}

const q = (params) =>
  new URLSearchParams(
    Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== "")
  ).toString();

// A fresh random seed for the next deal (docs/fairness.md): the board gives one whenever it
// may, so the server cannot have chosen the deal.
export function newClientSeed() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function moveId() {
  return crypto.randomUUID ? crypto.randomUUID() : newClientSeed();
}

export const api = {
  createGuest: (name) => call("POST", "/guests", { name }),
  register: (name, password) => call("POST", "/accounts", { name, password }),
  login: (name, password) => call("POST", "/sessions", { name, password }),
  logout: () => call("DELETE", "/sessions/current"),
  me: () => call("GET", "/me"),
  player: (id) => call("GET", `/players/${id}`),
  leaderboard: (by = "wins", offset = 0, limit = 20) =>
    call("GET", `/leaderboard?${q({ by, offset, limit })}`),

  createSoloTable: (players, deal = true, level = "easy") =>
    call("POST", "/solo-tables", { players, deal, level }),
  listMyGames: () => call("GET", "/me/games"),
  listMyHistory: (kind = "all", offset = 0, limit = 20) =>
    call("GET", `/me/history?${q({ kind, offset, limit })}`),
  createTable: (settings) => call("POST", "/tables", settings),
  playNow: (kind) => call("POST", "/play-now", kind),
  listTables: ({ stake = "any", hasFreeSeat = false, offset = 0, limit = 20 } = {}) =>
    call("GET", `/tables?${q({ stake, has_free_seat: hasFreeSeat, offset, limit })}`),
  getTable: (id) => call("GET", `/tables/${id}`),
  joinTable: (id, seed) => call("POST", `/tables/${id}/seats`, { client_seed: seed }),
  leaveTable: (id) => call("POST", `/tables/${id}/leave`),
  startGame: (id, seed) => call("POST", `/tables/${id}/start`, { client_seed: seed }),
  fillWithBees: (id, seed) => call("POST", `/tables/${id}/bees`, { client_seed: seed }),
  playAgain: (id, seed) => call("POST", `/tables/${id}/games`, { client_seed: seed }),

  getGame: (id) => call("GET", `/games/${id}`),
  exportGameText: (id) => callText(`/games/${id}/export`),
  gameStreamTicket: (id) => call("POST", `/games/${id}/stream-tickets`),
  tableStreamTicket: (id) => call("POST", `/tables/${id}/stream-tickets`),
  move: (id, move) => call("POST", `/games/${id}/moves`, { move_id: moveId(), ...move }),
  listGameEvents: (id, after = 0, limit = 200) =>
    call("GET", `/games/${id}/events?${q({ after, limit })}`),
  // The replay (replay.js): the game right after a version, and its steps.
  gameState: (id, version) => call("GET", `/games/${id}/states/${version}`),
  gameSteps: (id) => call("GET", `/games/${id}/steps`),
  // What the strongest bee level would have played at a seat and turn of a finished game.
  analyseTurn: (id, seat, turn) => call("GET", `/games/${id}/analysis?${q({ seat, turn })}`),
  analyseGame: (id, seat) => call("GET", `/games/${id}/review?${q({ seat })}`),
};

// Every event of a game after version `after`, in order, each once. `onEvents(events)` gets
// each new batch; `onError(problem)` a failure (the feed keeps retrying, with backoff, from the
// last version it delivered, so nothing is lost). `poke()` asks at once (after a move).
const GAME_EVENT_TYPES = [
  "deal_committed", "game_started", "turn_started", "bee_tapped", "pick_confirmed",
  "picks_revealed", "bee_landed", "stem_choice_required", "stem_taken", "seat_left",
  "game_ended", "deal_revealed",
];

export function followGame(gameId, after, handlers) {
  if (typeof EventSource === "undefined") return pollGame(gameId, after, handlers);
  const { onEvents, onError, onRecover } = handlers;
  let last = after;
  let source = null;
  let stopped = false;
  let failures = 0;
  let timer = null;
  let batch = [];

  // Messages arriving together are handed over together, as one poll would.
  const flush = () => {
    const events = batch;
    batch = [];
    if (events.length && !stopped) onEvents(events);
  };
  const receive = (message) => {
    const event = JSON.parse(message.data);
    if (event.version <= last) return;
    last = event.version;
    if (failures && onRecover) onRecover();
    failures = 0;
    if (!batch.length) queueMicrotask(flush);
    batch.push(event);
    if (event.type === "deal_revealed") close(); // the stream's last event
  };
  const close = () => {
    source?.close();
    source = null;
  };

  async function open() {
    if (stopped) return;
    close();
    let ticket;
    try {
      ticket = await api.gameStreamTicket(gameId);
    } catch (problem) {
      return retry(problem);
    }
    if (stopped) return;
    const url = `${ticket.stream_url}${ticket.stream_url.includes("?") ? "&" : "?"}after=${last}`;
    source = new EventSource(url);
    for (const type of GAME_EVENT_TYPES) source.addEventListener(type, receive);
    source.onmessage = receive;
    // Back: say so at once, not at the next event (which may be a whole turn away).
    source.onopen = () => {
      if (failures && onRecover) onRecover();
      failures = 0;
    };
    source.onerror = () => {
      // CONNECTING: EventSource retries by itself with Last-Event-ID. CLOSED: it gave up (the
      // ticket expired, or the stream ended): open again with a new ticket after `last`.
      if (source?.readyState === EventSource.CLOSED) retry(new Problem(0, null));
      else if (onError) onError(new Problem(0, null), ++failures);
    };
  }

  function retry(problem) {
    failures += 1;
    if (onError && !stopped) onError(problem, failures);
    if ([401, 403, 404].includes(problem.status)) return;
    clearTimeout(timer);
    timer = setTimeout(open, Math.min(500 * 2 ** failures, 8000));
  }

  // The browser knows when the network goes and comes back: say so, and reconnect, at once.
  const offline = () => onError?.(new Problem(0, null), (failures = Math.max(failures + 1, 2)));
  const online = () => {
    clearTimeout(timer);
    open();
  };
  window.addEventListener("offline", offline);
  window.addEventListener("online", online);

  open();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      close();
      window.removeEventListener("offline", offline);
      window.removeEventListener("online", online);
    },
    poke() {}, // the stream pushes every event as it is recorded
    get version() {
      return last;
    },
  };
}

// The same contract by polling listGameEvents, for browsers without EventSource.
function pollGame(gameId, after, { onEvents, onError, onRecover, interval = 700 }) {
  let last = after;
  let stopped = false;
  let timer = null;
  let failures = 0;
  let running = false;
  let again = false;

  async function tick() {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    clearTimeout(timer);
    try {
      for (;;) {
        const page = await api.listGameEvents(gameId, last, 200);
        const fresh = page.events.filter((e) => e.version > last);
        if (fresh.length) {
          last = fresh[fresh.length - 1].version;
          if (!stopped) onEvents(fresh);
        }
        if (page.events.length < 200) break;
      }
      if (failures && onRecover) onRecover();
      failures = 0;
    } catch (problem) {
      failures += 1;
      if (onError && !stopped) onError(problem, failures);
      if (problem.status === 401 || problem.status === 403 || problem.status === 404) {
        stopped = true;
      }
    } finally {
      running = false;
    }
    if (stopped) return;
    // Retries back off to 2 s at most, so the board notices within 2 s that it is back.
    const wait = failures ? Math.min(interval * 2 ** failures, 2000) : interval;
    timer = setTimeout(tick, again ? 0 : wait);
    again = false;
  }

  const online = () => tick();
  const offline = () => onError?.(new Problem(0, null), (failures = Math.max(failures + 1, 2)));
  window.addEventListener("online", online);
  window.addEventListener("offline", offline);
  timer = setTimeout(tick, 0);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      window.removeEventListener("online", online);
      window.removeEventListener("offline", offline);
    },
    poke() {
      tick();
    },
    get version() {
      return last;
    },
  };
}

// A table as getTable shows it, whenever it changes: followed by its stream (streamTableEvents,
// with a stream ticket as for a game), each event asking getTable once, a burst of events once.
// Without EventSource it polls getTable. The lobby (listTables) keeps polling.
const TABLE_EVENT_TYPES = [
  "table_opened", "seat_taken", "buy_in_held", "buy_in_returned", "seat_freed", "host_changed",
  "game_prepared", "seed_contributed", "seed_committed", "seeds_closed", "seed_revealed",
  "seed_withheld", "game_opened", "pot_formed", "pot_settled", "game_finished", "table_closed",
];

export function watchTable(tableId, handlers) {
  if (typeof EventSource === "undefined") return pollTable(tableId, handlers);
  const { onTable, onError } = handlers;
  let stopped = false;
  let source = null;
  let seen = null;
  let last = 0;
  let failures = 0;
  let timer = null;
  let running = false;
  let again = false;

  async function refresh() {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const table = await api.getTable(tableId);
      const key = JSON.stringify([table.status, table.seats, table.games, table.host, table.next_game, table.game?.phase]);
      if (key !== seen && !stopped) {
        seen = key;
        onTable(table);
      }
    } catch (problem) {
      if (onError && !stopped) onError(problem);
      if ([401, 403, 404].includes(problem.status)) stop();
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      refresh();
    }
  }

  // A burst of events (the replay of the log on opening, a game's end) asks getTable once.
  let soon = null;
  const refreshSoon = () => {
    clearTimeout(soon);
    soon = setTimeout(refresh, 60);
  };
  const receive = (message) => {
    const version = Number(message.lastEventId);
    if (Number.isFinite(version) && version > last) last = version;
    failures = 0;
    refreshSoon();
  };

  async function open() {
    if (stopped) return;
    source?.close();
    source = null;
    let ticket;
    try {
      ticket = await api.tableStreamTicket(tableId);
    } catch (problem) {
      return retry(problem);
    }
    if (stopped) return;
    source = new EventSource(`${ticket.stream_url}${ticket.stream_url.includes("?") ? "&" : "?"}after=${last}`);
    for (const type of TABLE_EVENT_TYPES) source.addEventListener(type, receive);
    source.onmessage = receive;
    source.onopen = () => refreshSoon(); // whatever changed while the stream was closed
    source.onerror = () => {
      if (source?.readyState === EventSource.CLOSED) retry(new Problem(0, null));
    };
  }

  function retry(problem) {
    failures += 1;
    if (onError && !stopped && failures >= 2) onError(problem);
    if ([401, 403, 404].includes(problem.status)) return;
    clearTimeout(timer);
    timer = setTimeout(open, Math.min(500 * 2 ** failures, 4000));
  }

  function stop() {
    stopped = true;
    clearTimeout(timer);
    clearTimeout(soon);
    source?.close();
    source = null;
  }

  refresh();
  open();
  return { stop, poke: refresh };
}

// The same by polling getTable, for browsers without EventSource.
function pollTable(tableId, { onTable, onError, interval = 1000 }) {

  let stopped = false;
  let timer = null;
  let seen = null;
  async function tick() {
    if (stopped) return;
    try {
      const table = await api.getTable(tableId);
      const key = JSON.stringify([table.status, table.seats, table.games, table.host, table.next_game]);
      if (key !== seen && !stopped) {
        seen = key;
        onTable(table);
      }
    } catch (problem) {
      if (onError && !stopped) onError(problem);
      if (problem.status === 404 || problem.status === 401) stopped = true;
    }
    if (!stopped) timer = setTimeout(tick, interval);
  }
  timer = setTimeout(tick, 0);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
    poke() {
      clearTimeout(timer);
      tick();
    },
  };
}
