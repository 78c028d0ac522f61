// My games: the tables the caller sits at (listMyGames), live ones first, each with its games
// (getTable's `games`): open a game, its ⏱ Meadow log, or its replay (#/replay/<id>); then the
// games the caller has played (listMyHistory), newest first, rated or casual, a page at a time.

import { api, session } from "./api.js";
import { h, replace } from "./dom.js";

const PHASE = { picking: "playing", choosing: "playing", ended: "ended" };

export async function myGamesScreen(app, container, identityCard) {
  if (!session()?.token) {
    replace(container, identityCard(app, () => app.route()));
    return;
  }
  replace(container, h("section", { class: "card my-games" }, h("h1", {}, "My games"), h("p", { class: "hint" }, "Loading…")));
  let mine;
  try {
    mine = await api.listMyGames();
  } catch (problem) {
    app.showProblem(problem);
    return;
  }
  const live = (t) => Boolean(t.game_id && t.game_phase && t.game_phase !== "ended");
  const tables = [...mine.tables].sort((a, b) => Number(live(b)) - Number(live(a)) || Number(b.your_move) - Number(a.your_move));
  const details = await Promise.all(tables.map((t) => api.getTable(t.table_id).catch(() => null)));
  const rows = tables.map((t, i) => tableCard(t, details[i]));
  replace(
    container,
    h(
      "section",
      { class: "card my-games", "aria-labelledby": "my-games-title" },
      h("h1", { id: "my-games-title" }, "My games"),
      h("p", { class: "lead" }, "The tables you sit at, live games first. Open a game, read its ⏱ Meadow log, or replay a finished one."),
      rows.length
        ? h("ol", { class: "my-tables" }, rows)
        : h("p", { class: "hint" }, "You sit at no table now. ", h("a", { href: "#/" }, "Play solo"), " or ", h("a", { href: "#/lobby" }, "find a table"), ".")
    )
  );
  container.append(historyCard(app));
}

// The games played: one row each (when, seats, the others, place and stings, rating change,
// replay and export), the filter, and "More" for the next page.
function historyCard(app) {
  const list = h("ol", { class: "history" });
  const more = h("button", { class: "secondary small", hidden: true }, "More");
  const kind = h(
    "select",
    { name: "history-kind", "aria-label": "Which games" },
    [["all", "All games"], ["rated", "Rated"], ["casual", "Casual"]].map(([v, label]) => h("option", { value: v }, label))
  );
  let offset = 0;
  const load = async (fresh) => {
    if (fresh) {
      offset = 0;
      replace(list);
    }
    let page;
    try {
      page = await api.listMyHistory(kind.value, offset);
    } catch (problem) {
      app.showProblem(problem);
      return;
    }
    list.append(...page.games.map(historyRow));
    if (!offset && !page.games.length) list.append(h("li", { class: "hint" }, "No finished game yet."));
    offset = page.next_offset ?? offset;
    more.hidden = page.next_offset == null;
  };
  kind.onchange = () => load(true);
  more.onclick = () => load(false);
  load(true);
  return h(
    "section",
    { class: "card my-history", "aria-labelledby": "history-title" },
    h("div", { class: "row spread" }, h("h2", { id: "history-title" }, "Games played"), kind),
    list,
    more
  );
}

function historyRow(g) {
  const when = new Date(g.ended_at).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  const others = g.others.map((o) => (o.kind === "bee" ? `🐝 ${o.level ?? "bee"}` : o.name)).join(", ");
  const change = g.rating
    ? h("span", { class: ["rating-change", g.rating.change >= 0 ? "up" : "down"] }, `${g.rating.change >= 0 ? "+" : ""}${g.rating.change} → ${g.rating.after}${g.rating.provisional ? "?" : ""}`)
    : g.rated
      ? h("span", { class: "hint" }, "not rated for you")
      : null;
  const place = g.you.left ? "left" : `${ordinal(g.you.place)} of ${g.seats}`;
  return h(
    "li",
    { class: "past-game", dataset: { game: g.game_id } },
    h("div", { class: "row spread" }, h("b", {}, `${g.mode === "solo" ? "Solo" : g.rated ? "Rated" : "Casual"} · ${g.seats} seats`), h("span", { class: "hint" }, when)),
    h("div", {}, `${place} · ${g.you.stings} stings · vs ${others || "nobody"} `, change),
    h(
      "div",
      { class: "row" },
      h("a", { class: "button small secondary", href: `#/replay/${g.game_id}`, "aria-label": `Replay the game of ${when}` }, "Replay"),
      h("a", { class: "button small secondary", href: `#/game/${g.game_id}/meadow`, "aria-label": `The log and export of the game of ${when}` }, "⏱ Log · export")
    )
  );
}

function ordinal(n) {
  return `${n}${n === 1 ? "st" : n === 2 ? "nd" : n === 3 ? "rd" : "th"}`;
}

function tableCard(t, table) {
  const kind = t.mode === "solo" ? "Solo" : t.stake ? `Online · 💰${t.stake} buy-in table` : "Online · free table";
  const games = table?.games ?? (t.game_id ? [t.game_id] : []);
  const status =
    t.game_phase && t.game_phase !== "ended"
      ? `Turn ${t.turn} of ${t.turns}${t.your_move ? " · your move" : ""}`
      : { open: "waiting for people", playing: "playing", between_games: "between games", closed: "closed" }[t.status] ?? t.status;
  return h(
    "li",
    { class: ["my-table", t.your_move && "your-move"], dataset: { table: t.table_id } },
    h("div", { class: "row spread" }, h("b", {}, kind), h("span", { class: "hint" }, status)),
    games.length
      ? h(
          "ol",
          { class: "my-game-list", reversed: true },
          [...games].reverse().map((gameId, k) => {
            const n = games.length - k;
            const current = gameId === t.game_id;
            const ended = !current || PHASE[t.game_phase] === "ended";
            return h(
              "li",
              { class: "my-game", dataset: { game: gameId } },
              h("span", {}, `Game ${n}`, current && !ended ? " · live" : ended ? " · ended" : ""),
              h("a", { class: "button small primary", href: `#/game/${gameId}`, "aria-label": `Open game ${n}` }, current && !ended ? "Play" : "Open"),
              h("a", { class: "button small secondary", href: `#/game/${gameId}/meadow`, "aria-label": `The Meadow log of game ${n}` }, "⏱ Log"),
              ended ? h("a", { class: "button small secondary", href: `#/replay/${gameId}`, "aria-label": `Replay game ${n}` }, "Replay") : null
            );
          })
        )
      : h("p", { class: "hint" }, h("a", { href: `#/table/${t.table_id}` }, "To the table"), ": no game dealt yet.")
  );
}
