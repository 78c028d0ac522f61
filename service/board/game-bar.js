// The game screen's top: the turn clock's bar, the game bar (turn, mode, the clock in seconds,
// the result once closed, the Meadow log's toggle, Leave) and the Meadow log's panel it opens.

import { session } from "./api.js";
import { h, replace } from "./dom.js";

export class TurnClock {
  constructor(screen) {
    this.screen = screen;
  }

  build() {
    this.line = h("div", { class: "clockline", role: "timer", "aria-label": "Turn clock" }, h("div", { class: "bar" }));
    this.text = h("span", { class: "clocktext" });
  }

  tick() {
    const v = this.screen.shown;
    if (!this.line) return;
    const bar = this.line.firstChild;
    if (!v?.deadline || v.phase === "ended" || !v.server_time) {
      this.line.hidden = true;
      this.text.textContent = "";
      return;
    }
    this.line.hidden = false;
    if (this.offsetFor !== v) {
      this.offsetFor = v;
      this.offset = Date.parse(v.server_time) - Date.now();
    }
    const left = Math.max(0, Date.parse(v.deadline) - (Date.now() + this.offset)) / 1000;
    const choosing = v.phase === "choosing";
    const clock = this.screen.clock;
    const total = (choosing ? clock?.choice_seconds : clock?.turn_seconds) ?? Math.max(left, 1);
    bar.style.width = `${Math.min(100, (100 * left) / total)}%`;
    this.line.classList.toggle("low", left <= 5);
    const secs = Math.ceil(left);
    this.line.setAttribute("aria-label", `${choosing ? "Choice clock" : "Turn clock"}: ${secs} seconds left`);
    // On a phone "to choose" goes (.wide-only): the TAKE buttons say it, and the bar stays one row.
    replace(this.text, `⏱ ${secs} s`, choosing ? h("span", { class: "wide-only" }, " to choose") : null);
  }
}

export class MeadowPanel {
  constructor(screen) {
    this.screen = screen;
  }

  build() {
    const app = this.screen.app;
    const open = app.meadowOpen;
    this.toggleButton = h(
      "button",
      {
        class: "ghost-btn meadow-toggle",
        "aria-expanded": String(open),
        "aria-controls": "meadow-panel",
        onclick: () => this.toggle(),
      },
      "⏱ ",
      h("span", { class: "wide-only" }, "Meadow "),
      "log"
    );
    document.body.classList.toggle("meadow-open", open);
    this.el = h(
      "div",
      { id: "meadow-panel", class: ["meadow-panel", open && "open"], hidden: !open },
      h("button", { class: "ghost-btn small close", "aria-label": "Close the Meadow log", onclick: () => this.toggle() }, "✕ Close"),
      this.screen.meadow.root
    );
  }

  toggle() {
    const app = this.screen.app;
    app.meadowOpen = !app.meadowOpen;
    document.body.classList.toggle("meadow-open", app.meadowOpen);
    this.toggleButton.setAttribute("aria-expanded", String(app.meadowOpen));
    this.el.hidden = !app.meadowOpen;
    this.el.classList.toggle("open", app.meadowOpen);
    if (app.meadowOpen) this.el.querySelector("h2")?.focus?.();
  }
}

export class GameBar {
  constructor(screen) {
    this.screen = screen;
  }

  build() {
    this.el = h("div", { class: "game-bar" });
    this.draw();
  }

  modeText() {
    const s = this.screen;
    if (s.mode === "solo") return "Solo · untimed";
    const t = s.table;
    if (!t?.stake) return "Online · free table";
    // Only a table's first game holds a buy-in (seed §9): Play again has none.
    return t.games?.[0] === s.gameId ? `Online · 💰${t.stake} buy-in` : "Online · Play again, no buy-in";
  }

  draw() {
    const s = this.screen;
    const v = s.shown;
    const turnText = v.phase === "ended" ? "Game over" : `Turn ${v.turn} of ${v.turns}`;
    // A redraw (a late view or table update) must not drop the focus to <body>.
    const hadFocus = document.activeElement?.matches?.("button.show-result");
    replace(
      this.el,
      h("span", { class: "turn" }, turnText),
      h("span", { class: "mode" }, this.modeText()),
      v.you ? null : h("span", { class: "watching" }, "👀 Watching"),
      s.turnClock.text,
      h("span", { class: "spacer" }),
      v.phase === "ended" && s.result.closed ? h("button", { class: "secondary show-result", onclick: () => s.result.open() }, "🏆 Result") : null,
      s.meadowPanel.toggleButton,
      v.phase !== "ended" && v.you ? this.leaveButton() : null
    );
    if (hadFocus) this.el.querySelector("button.show-result")?.focus();
  }

  // What leaving does, said before it is done (seed §9).
  leaveWords() {
    const s = this.screen;
    const v = s.shown;
    const others = v.seats.filter((seat) => seat.kind === "person" && seat.seat !== v.you && seat.status !== "left");
    if (!others.length) return "Leave this game? It ends here and nobody wins: the bees don't play on alone. ";
    const buyIn = s.table?.stake && s.table.games?.[0] === s.gameId ? ` Your 💰${s.table.stake} buy-in stays in the pot.` : "";
    const next = others.length === 1 ? ` ${s.who(others[0].seat)} wins at once.` : "";
    // A rated table rates a leaver too: last place (domain/ratings.py), when others are rated.
    const rated = s.table?.rated && session()?.registered ? " Your rating counts it as last place." : "";
    return `Leave this game? You pick no more bees and your stings stop counting; you earn nothing.${buyIn}${next}${rated} `;
  }

  leaveButton() {
    const s = this.screen;
    if (s.leaving) {
      return h(
        "span",
        { class: "leave-confirm", role: "group", "aria-label": "Leave this game?" },
        h("span", { class: "leave-words" }, this.leaveWords()),
        h("button", { class: "danger", onclick: () => s.leave() }, "Yes, leave"),
        h("button", { class: "ghost-btn", onclick: () => { s.leaving = false; s.render(); } }, "Stay")
      );
    }
    return h("button", { class: "ghost-btn", onclick: () => { s.leaving = true; s.render(); } }, "Leave");
  }
}
