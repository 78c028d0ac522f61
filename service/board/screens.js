// Setup, lobby, table, account, profile and leaderboard screens. Each is a function of the app
// that draws into `container` and returns an optional cleanup.

import { api, newClientSeed, place, savePlace, saveSession, session, watchTable } from "./api.js";
import { h, plural, replace, speedChoice } from "./dom.js";
import { DEFAULT_LEVEL, LEVELS } from "./levels.js"; // served from the levels' registry
import { remember } from "./meadow.js";

const PLAYERS = [2, 3, 4, 5, 6, 7, 8];
const BEE_NAMES = ["Buzz", "Bumble", "Honey", "Clover", "Pollen", "Nectar", "Waggle"];

// A guest identity, created the first time one is needed (solo play needs no account).
export async function ensureIdentity(name) {
  const current = session();
  if (current?.token) return current;
  const guest = await api.createGuest((name || "").trim() || "Player");
  const value = { token: guest.token, player_id: guest.player_id, name: guest.name, registered: false };
  saveSession(value);
  return value;
}

function field(label, input, hint) {
  return h("label", { class: "field" }, h("span", {}, label), input, hint ? h("small", {}, hint) : null);
}

// --- solo setup ------------------------------------------------------------------------------

export function setupScreen(app, container) {
  const me = session();
  let players = 4;
  let level = DEFAULT_LEVEL;
  const sentence = (what) => what[0].toUpperCase() + what.slice(1) + ".";
  // a level's hint: how it picks, and its rating on the players' scale (`make bench-bees`)
  const rated = (n) => n.toLocaleString("en");
  const hintOf = ({ description, rating }) => `${sentence(description)} Rated ${rated(rating)}, played against the other levels (a new player starts at 1,500).`;
  const levelHint = h("p", { class: "level-hint" }, hintOf(LEVELS.find((l) => l.name === level)));
  const levels = h(
    "div",
    { class: "players", role: "radiogroup", "aria-label": "How the bees play" },
    LEVELS.map((lv) => {
      const { name: value, label, description: what, rating } = lv;
      return h(
        "label",
        { class: "player-choice level-choice", title: what },
        h("input", {
          type: "radio",
          name: "level",
          value,
          checked: value === level,
          "aria-label": `${label}, rated ${rated(rating)}: ${what}`,
          onchange: () => {
            level = value;
            levelHint.textContent = hintOf(lv);
          },
        }),
        h("span", {}, label, h("small", { class: "level-rating", title: "Its rating (a new player starts at 1,500)" }, rated(rating)))
      );
    })
  );
  const name = h("input", { type: "text", name: "name", maxlength: 40, autocomplete: "nickname", placeholder: "Player", value: me?.name ?? "" });
  const beeList = h("p", { class: "bees-list" });
  const drawBees = () => {
    beeList.textContent = `You and ${BEE_NAMES.slice(0, players - 1).join(", ")}. Bees 1–${10 * players + 4}.`;
  };
  const choices = h(
    "div",
    { class: "players", role: "radiogroup", "aria-label": "How many players" },
    PLAYERS.map((n) =>
      h(
        "label",
        { class: "player-choice" },
        h("input", {
          type: "radio",
          name: "players",
          value: n,
          checked: n === players,
          onchange: () => {
            players = n;
            drawBees();
          },
        }),
        h("span", {}, String(n))
      )
    )
  );
  drawBees();
  const start = async (event) => {
    event.preventDefault();
    try {
      await ensureIdentity(name.value);
      // Open the table with its commitment only, then deal with a seed of this browser's, so
      // even the first game is one the server could not have chosen (docs/fairness.md).
      const open = await api.createSoloTable(players, false, level);
      const table = await api.startGame(open.table_id, rememberSeed(open));
      savePlace({ table_id: table.table_id, game_id: table.game.game_id, mode: "solo" });
      app.go(`#/game/${table.game.game_id}`);
    } catch (problem) {
      app.showProblem(problem);
    }
  };
  const resume = place();
  if (!resume && me?.token) {
    // A reload in another browser, or cleared storage: the server knows where you sit.
    api
      .listMyGames()
      .then((mine) => {
        const live = mine.tables.find((t) => t.game_id && t.game_phase && t.game_phase !== "ended");
        if (live && !place()) {
          savePlace({ table_id: live.table_id, game_id: live.game_id, mode: live.mode });
          if (document.body.dataset.screen === "setup") setupScreen(app, container);
        }
      })
      .catch(() => {}); // resuming is a convenience: the setup screen works without it
  }
  replace(
    container,
    h(
      "div",
      { class: "setup" },
      resume?.game_id
        ? h(
            "section",
            { class: "card resume" },
            h("h2", {}, "Your game is waiting"),
            h("p", {}, resume.mode === "solo" ? "A solo game you were playing." : "An online game you sit at."),
            h("a", { class: "button primary", href: `#/game/${resume.game_id}` }, "Resume the game")
          )
        : null,
      h(
        "form",
        { class: "card solo", onsubmit: start, "aria-labelledby": "solo-title" },
        h("h1", { id: "solo-title" }, "Solo"),
        h("p", { class: "lead" }, "Play on your own against the bee players. Nothing is timed, paid or recorded."),
        h("fieldset", {}, h("legend", {}, "Players"), choices, beeList),
        h("fieldset", {}, h("legend", {}, "Bees"), levels, levelHint),
        speedChoice(),
        me?.token ? h("p", { class: "hint" }, `Playing as ${me.name}.`) : field("Your name", name, "Optional: no account needed to play on your own."),
        h("button", { class: "primary big", type: "submit" }, "Into the meadow")
      ),
      h(
        "section",
        { class: "card online" },
        h("h2", {}, "Online"),
        h("p", {}, "Open a table or join one: 2 to 8 seats, 20 seconds a turn, free or with a buy-in."),
        h("a", { class: "button secondary", href: "#/lobby" }, "To the lobby")
      ),
      h(
        "section",
        { class: "card howto" },
        h("h2", {}, "How to play"),
        h(
          "ol",
          {},
          h("li", {}, "Everyone picks a bee at the same time: tap one in your hand, then CONFIRM."),
          h("li", {}, "The picks are revealed and fly in lowest first. Each bee lands on the stem whose top bee is lower and closest."),
          h("li", {}, "A stem holds 5. The SIXTH BEE takes all 5 with their stings and starts the stem again."),
          h("li", {}, "A bee lower than every stem is too low: you TAKE a stem of your choice."),
          h("li", {}, "After 10 turns, the fewest stings wins. Most bees carry 1 ▼; bees ending in 5 carry 2 ▼, in 0 carry 3 ▼, 11 22 33 44 66 77 carry 5 ▼, 55 carries 7 ▼.")
        )
      )
    )
  );
}

// --- identity: guest name, login, register -----------------------------------------------------

// `lead`: what brought this person here (a link someone shared), said above the name box.
export function identityCard(app, after, { lead } = {}) {
  const name = h("input", { type: "text", name: "guest-name", maxlength: 40, required: true, placeholder: "Your name" });
  return h(
    "section",
    { class: "card identity" },
    h("h2", {}, "Who's playing?"),
    lead ? h("p", { class: "lead" }, lead) : null,
    h(
      "form",
      {
        class: "inline",
        onsubmit: async (e) => {
          e.preventDefault();
          try {
            saveSession(null);
            await ensureIdentity(name.value);
            after();
          } catch (problem) {
            app.showProblem(problem);
          }
        },
      },
      field("Play as a guest", name),
      h("button", { class: "primary", type: "submit" }, "Play as guest")
    ),
    h("p", { class: "hint" }, "Free tables need no account. ", h("a", { href: "#/account" }, "Log in or register"), " for buy-in tables, coins, XP and badges.")
  );
}

export function accountScreen(app, container) {
  const me = session();
  const form = (title, submit, action) => {
    const name = h("input", { type: "text", name: "name", required: true, maxlength: 40, autocomplete: "username" });
    const password = h("input", { type: "password", name: "password", required: true, minlength: action === "register" ? 8 : 1, maxlength: 128, autocomplete: action === "register" ? "new-password" : "current-password" });
    return h(
      "form",
      {
        class: "card",
        "aria-label": title,
        onsubmit: async (e) => {
          e.preventDefault();
          try {
            const out = await submit(name.value, password.value);
            saveSession({ token: out.token, player_id: out.player_id, name: out.name, registered: out.registered });
            app.refreshHeader();
            app.go("#/profile");
          } catch (problem) {
            app.showProblem(problem);
          }
        },
      },
      h("h2", {}, title),
      field("Name", name),
      field("Password", password, action === "register" ? "8 to 128 characters." : null),
      h("button", { class: "primary", type: "submit" }, title)
    );
  };
  replace(
    container,
    h(
      "div",
      { class: "account" },
      me?.registered
        ? h("p", { class: "card" }, `You are logged in as ${me.name}. `, h("a", { href: "#/profile" }, "Your profile"))
        : null,
      form("Log in", (n, p) => api.login(n, p), "login"),
      form(me?.token && !me.registered ? "Register (keep your guest identity)" : "Register", (n, p) => api.register(n, p), "register")
    )
  );
}

// --- lobby -------------------------------------------------------------------------------------

export function lobbyScreen(app, container) {
  const me = session();
  if (!me?.token) {
    replace(container, h("div", { class: "lobby" }, identityCard(app, () => app.route())));
    return null;
  }
  const filter = { stake: "any", hasFreeSeat: false };
  const list = h("div", { class: "tables", "aria-live": "polite" });
  let stopped = false;
  let timer = null;

  async function refresh() {
    clearTimeout(timer);
    try {
      const page = await api.listTables(filter);
      if (stopped) return;
      drawList(page.tables);
    } catch (problem) {
      app.showProblem(problem);
    }
    if (!stopped) timer = setTimeout(refresh, 3000);
  }

  function drawList(tables) {
    if (!tables.length) {
      replace(list, h("p", { class: "empty" }, "No open tables match. Open one below and share its link."));
      return;
    }
    replace(
      list,
      h(
        "table",
        { class: "lobby-table" },
        h("thead", {}, h("tr", {}, h("th", {}, "Host"), h("th", {}, "Seats"), h("th", {}, "Table"), h("th", {}, "Status"), h("th", {}, h("span", { class: "sr-only" }, "Action")))),
        h(
          "tbody",
          {},
          tables.map((t) =>
            h(
              "tr",
              { dataset: { table: t.table_id } },
              h("td", { class: "who" }, t.host_name),
              h("td", {}, `${t.seats_taken} / ${t.capacity}`),
              // Only a table's first game holds a buy-in: once under way, Play again has none.
              h(
                "td",
                {},
                t.stake ? (t.status === "open" ? h("span", { class: "nowrap" }, `💰${t.stake} buy-in`) : [h("span", { class: "nowrap" }, `💰${t.stake} buy-in`), " (first game)"]) : "Free",
                t.rated ? h("span", { class: "nowrap rated" }, " · rated") : null,
                t.average_rating != null ? h("span", { class: "nowrap hint", title: "Average rating of the people seated" }, ` · ⌀ ${t.average_rating}`) : null
              ),
              h("td", {}, { open: "waiting", playing: "playing", between_games: "between games", closed: "closed" }[t.status] ?? t.status),
              h(
                "td",
                {},
                t.status === "open" && t.seats_taken < t.capacity
                  ? h("button", { class: "primary small", "aria-label": `Join ${t.host_name}'s table`, onclick: () => join(app, t.table_id) }, "Join")
                  : t.status === "playing"
                    ? h("button", { class: "secondary small", "aria-label": `Watch ${t.host_name}'s game`, onclick: () => watch(app, t.table_id) }, "👀 Watch")
                    : h("a", { href: `#/table/${t.table_id}`, class: "button small secondary" }, "View")
              )
            )
          )
        )
      )
    );
  }

  const stakeSelect = h(
    "select",
    { name: "stake-filter", onchange: (e) => { filter.stake = e.target.value; refresh(); } },
    h("option", { value: "any" }, "Free and buy-in"),
    h("option", { value: "free" }, "Free tables"),
    h("option", { value: "buy_in" }, "Buy-in tables")
  );
  const freeSeat = h("input", { type: "checkbox", name: "free-seat", onchange: (e) => { filter.hasFreeSeat = e.target.checked; refresh(); } });

  // Open a table with its settings.
  const seats = h("select", { name: "seats" }, PLAYERS.map((n) => h("option", { value: n, selected: n === 4 }, plural(n, "seat"))));
  const stake = h("input", { type: "number", name: "stake", min: 1, max: 1000000, value: 100, step: 1, disabled: true, "aria-label": "Buy-in in coins" });
  const kindChanged = () => {
    stake.disabled = !kindBuy.checked;
  };
  const kindFree = h("input", { type: "radio", name: "kind", value: "free", checked: true, onchange: kindChanged });
  // A buy-in table needs an account (seed §9): a guest is not offered one it would be refused.
  const kindBuy = h("input", { type: "radio", name: "kind", value: "buy_in", onchange: kindChanged, disabled: !me.registered });
  const turn = h("input", { type: "number", name: "turn_seconds", min: 1, max: 600, value: 20 });
  const choice = h("input", { type: "number", name: "choice_seconds", min: 1, max: 600, value: 10 });
  // A rated table's games change the ratings of the people with accounts (guests are not rated).
  const rated = h("input", { type: "checkbox", name: "rated" });
  const open = async (e) => {
    e.preventDefault();
    try {
      const table = await api.createTable({
        seats: Number(seats.value),
        stake: kindBuy.checked ? Number(stake.value) : 0,
        turn_seconds: Number(turn.value),
        choice_seconds: Number(choice.value),
        rated: rated.checked,
      });
      savePlace({ table_id: table.table_id, game_id: null, mode: "online" });
      app.go(`#/table/${table.table_id}`);
    } catch (problem) {
      app.showProblem(problem);
    }
  };

  // Play now: seated at once at a waiting table of this kind, or at a new one that waits.
  const playNow = async () => {
    try {
      const table = await api.playNow({
        seats: Number(seats.value),
        rated: rated.checked,
        stake: kindBuy.checked ? Number(stake.value) : 0,
      });
      savePlace({ table_id: table.table_id, game_id: table.game?.game_id ?? null, mode: "online" });
      app.go(table.game ? `#/game/${table.game.game_id}` : `#/table/${table.table_id}`);
    } catch (problem) {
      app.showProblem(problem);
    }
  };

  replace(
    container,
    h(
      "div",
      { class: "lobby" },
      h(
        "section",
        { class: "card" },
        h("div", { class: "row spread" }, h("h1", {}, "Lobby"), h("p", { class: "hint" }, `Playing as ${me.name}${me.registered ? "" : " (guest)"}`)),
        h("div", { class: "filters" }, field("Show", stakeSelect), h("label", { class: "check" }, freeSeat, " Only tables with a free seat")),
        list
      ),
      h(
        "form",
        { class: "card open-table", onsubmit: open, "aria-labelledby": "open-title" },
        h("h2", { id: "open-title" }, "Open a table"),
        h(
          "div",
          { class: "grid2" },
          field("Seats", seats),
          h(
            "fieldset",
            { class: "kind" },
            h("legend", {}, "Table"),
            h("label", { class: "check" }, kindFree, " Free"),
            h("div", { class: "row" }, h("label", { class: "check" }, kindBuy, " Buy-in 💰"), stake),
            me.registered ? null : h("small", {}, "A buy-in table needs an account: ", h("a", { href: "#/account" }, "register"), " (you keep your guest name).")
          ),
          field("Seconds a turn", turn),
          field("Seconds to choose a stem", choice),
          h("label", { class: "check" }, rated, " Rated: the games change ratings")
        ),
        h(
          "div",
          { class: "row" },
          h("button", { class: "primary", type: "button", onclick: playNow, title: "Be seated at a waiting table of this kind, or open one that waits for others" }, "▶ Play now"),
          h("button", { class: "secondary", type: "submit" }, "Open the table")
        )
      )
    )
  );
  refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

// Spectators follow an online table's running game (seed §9): its view hides every hand.
async function watch(app, tableId) {
  try {
    const table = await api.getTable(tableId);
    // A spectator's table view carries no `game`: the running game is the last of `games`.
    const gameId = table.game?.game_id ?? table.games[table.games.length - 1];
    app.go(gameId ? `#/game/${gameId}` : `#/table/${tableId}`);
  } catch (problem) {
    app.showProblem(problem);
  }
}

async function join(app, tableId) {
  try {
    const table = await api.getTable(tableId);
    const seed = rememberSeed(table);
    const joined = await api.joinTable(tableId, seed);
    savePlace({ table_id: tableId, game_id: joined.game?.game_id ?? null, mode: "online" });
    app.go(joined.game ? `#/game/${joined.game.game_id}` : `#/table/${tableId}`);
  } catch (problem) {
    app.showProblem(problem);
  }
}

// A seed for the table's next game, recorded with the commitment it follows.
function rememberSeed(table) {
  if (!table.next_game) return undefined;
  const seed = newClientSeed();
  remember(table.next_game.game_id, {
    commitment: table.next_game.commitment,
    commitment_seen: new Date().toISOString(),
    seed,
  });
  return seed;
}

// --- a table, before its game ------------------------------------------------------------------

// Seconds a person waits for others at a table (after Play now, say) before the board offers
// bees instead: with a second person, the host fills the empty seats (fillWithBees, seed §9);
// alone, bee players cannot fill an online table (they don't keep a game going), so the offer
// is a game on your own against them (seed §8: practice, nothing paid or recorded).
export const PATIENCE_SECONDS = 30;

const clockText = (seconds) => `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;

// When this browser began waiting at a table: kept for the tab (a reload goes on counting).
function waitingSince(tableId, waiting) {
  const key = `swarm.board.waiting.${tableId}`;
  if (!waiting) {
    sessionStorage.removeItem(key);
    return null;
  }
  const kept = Number(sessionStorage.getItem(key));
  if (kept) return kept;
  const now = Date.now();
  sessionStorage.setItem(key, String(now));
  return now;
}

export function tableScreen(app, container, tableId) {
  const me = session();
  if (!me?.token) {
    replace(container, identityCard(app, () => app.route()));
    return null;
  }
  const body = h("div", { class: "table-room" });
  replace(container, body);
  let shown = null; // the table as last drawn
  let waitKey = null; // what the waiting box shows, redrawn only when it changes
  const ticker = setInterval(() => drawWaiting(), 1000);
  const watch = watchTable(tableId, {
    onTable: (table) => {
      if (table.next_game) {
        remember(table.next_game.game_id, { commitment: table.next_game.commitment, commitment_seen: new Date().toISOString() });
      }
      if (table.game && table.game.phase !== "ended") {
        app.go(`#/game/${table.game.game_id}`);
        return;
      }
      draw(table);
    },
    onError: (problem) => app.showProblem(problem),
  });

  const act = async (run) => {
    try {
      const table = await run();
      app.clearProblem();
      if (table?.game && table.game.phase !== "ended") app.go(`#/game/${table.game.game_id}`);
      else watch.poke();
    } catch (problem) {
      app.showProblem(problem);
    }
  };

  // Waiting for others: how long, and past PATIENCE_SECONDS a clear answer (bees).
  function drawWaiting() {
    const box = body.querySelector(".waiting");
    const table = shown;
    if (!box || !table) return;
    const waiting = table.you !== null && table.status === "open" && table.seats.length < table.capacity;
    const since = waitingSince(table.table_id, waiting);
    if (!waiting) {
      box.replaceChildren();
      waitKey = null;
      return;
    }
    const seconds = Math.max(0, Math.floor((Date.now() - since) / 1000));
    const people = table.seats.filter((s) => s.kind === "person").length;
    const host = table.host === me.player_id;
    const patient = seconds < PATIENCE_SECONDS;
    const key = JSON.stringify([patient, people, host, table.seats.length]);
    if (key === waitKey) {
      const clock = box.querySelector(".waited");
      if (clock) clock.textContent = clockText(seconds);
      return;
    }
    waitKey = key;
    const waited = h("span", { class: "waited" }, clockText(seconds));
    if (patient) {
      replace(box, h("p", { class: "hint" }, "⏳ Waiting for others: ", waited));
      return;
    }
    let offer;
    if (people < 2) {
      offer = [
        h("p", {}, "Nobody has come in ", waited, ". Play against bees instead: on your own it is a practice game, nothing paid or recorded", table.rated ? " and not rated" : "", table.stake ? `; your 💰${table.stake} buy-in comes back.` : "."),
        h("button", { class: "primary", onclick: () => playWithBees(table) }, "🐝 Play with bees"),
        h("span", { class: "hint" }, " or keep waiting here."),
      ];
    } else if (host && !table.stake) {
      offer = [
        h("p", {}, "Nobody else has come in ", waited, ": fill the empty seats with bees and start."),
        h("button", { class: "primary", onclick: () => act(() => api.fillWithBees(table.table_id, rememberSeed(table))) }, "🐝 Fill with bees now"),
      ];
    } else if (host) {
      offer = [h("p", {}, "Nobody else has come in ", waited, ": start the game with who is here (bees only fill free tables).")];
    } else {
      offer = [h("p", {}, "Nobody else has come in ", waited, ": the host can start the game", table.stake ? "." : " or fill the empty seats with bees.")];
    }
    replace(box, h("div", { class: "nobody-came", role: "group", "aria-label": "Nobody has come" }, ...offer));
  }

  // Alone at a table nobody comes to: leave it (a buy-in comes back before the first deal) and
  // play a game of as many seats on your own, the bees in every other seat.
  async function playWithBees(table) {
    try {
      await api.leaveTable(table.table_id);
      const open = await api.createSoloTable(table.capacity, false);
      const solo = await api.startGame(open.table_id, rememberSeed(open));
      savePlace({ table_id: solo.table_id, game_id: solo.game.game_id, mode: "solo" });
      app.go(`#/game/${solo.game.game_id}`);
    } catch (problem) {
      app.showProblem(problem);
    }
  }

  function draw(table) {
    shown = table;
    waitKey = null;
    const people = table.seats.filter((s) => s.kind === "person").length;
    const host = table.host === me.player_id;
    const seated = table.you !== null;
    const seats = [];
    for (let i = 1; i <= table.capacity; i++) {
      const s = table.seats.find((x) => x.seat === i);
      seats.push(
        h(
          "li",
          { class: ["seat-slot", !s && "empty", s?.seat === table.you && "me"] },
          h("span", { class: "n" }, String(i)),
          s ? h("span", {}, s.kind === "bee" ? "🐝 " : "", s.name, s.player_id === table.host ? " (host)" : "", s.seat === table.you ? " · you" : "") : h("span", { class: "hint" }, "empty seat")
        )
      );
    }
    const link = `${location.origin}${location.pathname}#/table/${table.table_id}`;
    replace(
      body,
      h(
        "section",
        { class: "card" },
        h("h1", {}, table.stake ? `A 💰${table.stake} buy-in table` : "A free table"),
        h("p", { class: "lead" }, `${people} of ${table.capacity} seats taken · ${table.clock ? `${table.clock.turn_seconds} s a turn, ${table.clock.choice_seconds} s to choose` : "untimed"}`),
        h("ol", { class: "seat-list" }, seats),
        table.status === "closed" ? h("p", {}, "This table is closed.") : null,
        h(
          "div",
          { class: "row actions" },
          !seated && table.status === "open" ? h("button", { class: "primary", onclick: () => join(app, table.table_id) }, "Join") : null,
          host && table.status === "open"
            ? h(
                "button",
                {
                  class: "primary",
                  disabled: people < 2,
                  onclick: () => act(() => api.startGame(table.table_id, rememberSeed(table))),
                },
                "Start the game"
              )
            : null,
          host && table.status === "open" && !table.stake
            ? h(
                "button",
                {
                  class: "secondary",
                  disabled: people < 2 || table.seats.length >= table.capacity,
                  onclick: () => act(() => api.fillWithBees(table.table_id, rememberSeed(table))),
                },
                "Fill with bees"
              )
            : null,
          seated
            ? h(
                "button",
                {
                  class: "ghost-btn",
                  onclick: async () => {
                    try {
                      await api.leaveTable(table.table_id);
                      savePlace(null);
                      app.go("#/lobby");
                    } catch (problem) {
                      app.showProblem(problem);
                    }
                  },
                },
                "Leave"
              )
            : null
        ),
        host && table.status === "open"
          ? h("p", { class: "hint" }, people < 2 ? "Waiting for a second person: share the link below." : "Start now, or fill the empty seats with bees (free tables). The game also starts when the table is full.")
          : seated
            ? h("p", { class: "hint" }, "Waiting for the host to start the game.")
            : null,
        h("div", { class: "waiting" }),
        h("p", { class: "share" }, "Invite a friend: ", h("code", {}, link)),
        table.next_game ? h("p", { class: "hint hex" }, `The next deal is already committed: ${table.next_game.commitment}`) : null
      )
    );
    drawWaiting();
  }
  return () => {
    clearInterval(ticker);
    watch.stop();
  };
}

// --- profile and leaderboard ------------------------------------------------------------------

export async function profileScreen(app, container) {
  const me = session();
  if (!me?.token) {
    replace(container, identityCard(app, () => app.route()));
    return;
  }
  let p;
  try {
    p = await api.me();
  } catch (problem) {
    app.showProblem(problem);
    return;
  }
  const intoLevel = p.xp % 500;
  replace(
    container,
    h(
      "div",
      { class: "profile" },
      h(
        "section",
        { class: "card" },
        h("h1", {}, p.name),
        h("p", { class: "lead" }, p.registered ? "Account" : "Guest: register to earn coins, XP and badges"),
        h(
          "dl",
          { class: "stats" },
          h("div", {}, h("dt", {}, "Coins"), h("dd", {}, `💰 ${p.coins.balance}`)),
          h("div", {}, h("dt", {}, "Held for buy-ins"), h("dd", {}, `💰 ${p.coins.held}`)),
          h("div", {}, h("dt", {}, "Rating"), h("dd", {}, ratingText(p.rating))),
          h("div", {}, h("dt", {}, "Level"), h("dd", {}, String(p.level))),
          h("div", {}, h("dt", {}, "XP"), h("dd", {}, String(p.xp))),
          h("div", {}, h("dt", {}, "Games"), h("dd", {}, String(p.games_played))),
          h("div", {}, h("dt", {}, "Wins"), h("dd", {}, String(p.games_won)))
        ),
        h(
          "div",
          { class: "xpbar", role: "progressbar", "aria-label": "XP to the next level", "aria-valuemin": 0, "aria-valuemax": 500, "aria-valuenow": intoLevel },
          h("div", { style: { width: `${(100 * intoLevel) / 500}%` } })
        ),
        h("p", { class: "hint" }, `${500 - intoLevel} XP to level ${p.level + 1}.`)
      ),
      h(
        "section",
        { class: "card" },
        h("h2", {}, "Badges"),
        p.badges.length
          ? h("ul", { class: "badges" }, p.badges.map((b) => h("li", {}, h("b", {}, `🏅 ${b.name.replaceAll("_", " ")}`), h("span", {}, b.description))))
          : h("p", { class: "hint" }, "No badges yet: finish an online game to earn your first.")
      ),
      h("section", { class: "card" }, speedChoice()),
      h(
        "section",
        { class: "card row" },
        h("a", { class: "button secondary", href: "#/games" }, "My games"),
        p.registered ? null : h("a", { class: "button primary", href: "#/account" }, "Register or log in"),
        h(
          "button",
          {
            class: "ghost-btn",
            onclick: async () => {
              try {
                await api.logout(); // a guest's token is revoked too, not only forgotten here
              } catch {
                /* the token is dropped anyway */
              }
              saveSession(null);
              savePlace(null);
              app.refreshHeader();
              app.go("#/");
            },
          },
          p.registered ? "Log out" : "Forget this guest"
        )
      )
    )
  );
}

// A rating as shown: its points, with "?" while provisional (as lichess shows one).
export function ratingText(rating) {
  return rating ? `${rating.points}${rating.provisional ? "?" : ""}` : "–";
}

export async function leaderboardScreen(app, container, by = "wins") {
  if (!session()?.token) {
    replace(container, identityCard(app, () => app.route()));
    return;
  }
  let page;
  try {
    page = await api.leaderboard(by);
  } catch (problem) {
    app.showProblem(problem);
    return;
  }
  replace(
    container,
    h(
      "section",
      { class: "card leaderboard" },
      h("h1", {}, "Leaderboard"),
      h(
        "div",
        { class: "tabs", role: "group", "aria-label": "Rank by" },
        h("a", { class: ["button small", by === "wins" ? "primary" : "secondary"], href: "#/leaderboard/wins", "aria-current": by === "wins" ? "page" : null }, "By wins"),
        h("a", { class: ["button small", by === "xp" ? "primary" : "secondary"], href: "#/leaderboard/xp", "aria-current": by === "xp" ? "page" : null }, "By XP"),
        h("a", { class: ["button small", by === "rating" ? "primary" : "secondary"], href: "#/leaderboard/rating", "aria-current": by === "rating" ? "page" : null }, "By rating")
      ),
      page.entries.length
        ? h(
            "table",
            {},
            h("thead", {}, h("tr", {}, ["#", "Player", "Rating", "Wins", "Games", "XP", "Level"].map((t) => h("th", {}, t)))),
            h(
              "tbody",
              {},
              page.entries.map((e) =>
                h("tr", { class: e.player_id === session()?.player_id ? "me" : null }, h("td", {}, String(e.rank)), h("td", { class: "who" }, e.name), h("td", {}, ratingText(e.rating)), h("td", {}, String(e.games_won)), h("td", {}, String(e.games_played)), h("td", {}, String(e.xp)), h("td", {}, String(e.level)))
              )
            )
          )
        : h("p", { class: "hint" }, "Nobody has finished an online game yet.")
    )
  );
}
