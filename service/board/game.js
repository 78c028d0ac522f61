// The game screen: the hand along the bottom, the stems in the middle, every seat's stings down
// the side (along the top on a phone). It draws from the latest view the service returned and
// animates the difference from the game's events: the picks revealed low → high, then the bees
// flying in one at a time, lowest first.

import { api, followGame, newClientSeed, savePlace, session, watchTable } from "./api.js";
import { h, motionMs, plural, replace, sleep, stingWord } from "./dom.js";
import { MeadowLog, remember } from "./meadow.js";
import { THINKING_LEVELS } from "./levels.js"; // served from the levels' registry

// Events that move bees on the board: while they play, the hand waits.
const MOVING = new Set(["picks_revealed", "bee_landed", "stem_taken", "stem_choice_required"]);

// Stings always come from the service (views and log entries carry them beside every bee).
const sum = (entries) => entries.reduce((total, e) => total + e.stings, 0);

export function beeCard(bee, n, { tag = "div", label, ...attrs } = {}) {
  return h(
    tag,
    {
      class: ["bee", `s${n}`, attrs.class],
      role: tag === "button" ? undefined : "img", // a card that is not a button is a picture of a bee
      "aria-label": label ?? `Bee ${bee}, ${stingWord(n)}`,
      ...Object.fromEntries(Object.entries(attrs).filter(([k]) => k !== "class")),
    },
    h("span", { class: "num", "aria-hidden": "true" }, String(bee)),
    h("span", { class: "stings", "aria-hidden": "true" }, "▼".repeat(n))
  );
}

export class GameScreen {
  constructor(app, gameId) {
    this.app = app;
    this.gameId = gameId;
    this.view = null; // the latest view from the service
    this.shown = null; // the view the board is drawing
    this.model = null; // stems and stings as drawn, moved on by events while animating
    this.queue = [];
    this.animating = false;
    this.lastEvent = 0; // the highest event version received
    this.shownVersion = 0; // the events the drawing reflects
    this.clock = null; // {turn_seconds, choice_seconds}
    this.notices = [];
    this.leaving = false;
    this.tapping = null;
    this.root = h("div", { class: "game-screen" });
  }

  async mount(container) {
    replace(container, this.root);
    const view = await api.getGame(this.gameId);
    this.table = await api.getTable(view.table_id).catch(() => null);
    this.mode = this.table?.mode ?? "solo";
    this.clock = this.table?.clock ?? null;
    if (view.you) savePlace({ table_id: view.table_id, game_id: this.gameId, mode: this.mode }); // not a watched game
    this.view = view;
    this.show(view);
    this.shownVersion = view.version;
    // A game opened after its end records nothing as "first shown": it was not shown before.
    this.meadow = new MeadowLog(this.gameId, { you: view.you, nameOf: (s) => this.nameOf(s), record: view.phase !== "ended" });
    this.feed = followGame(this.gameId, 0, {
      onEvents: (events) => this.onEvents(events),
      onError: (problem, failures) => {
        if (failures >= 2 || problem.status) this.app.showProblem(problem, { quiet: problem.status === 0 });
      },
      onRecover: () => this.app.clearProblem(),
    });
    this.ticker = setInterval(() => this.tick(), 200);
    this.keys = (e) => this.onKey(e);
    document.addEventListener("keydown", this.keys);
    this.render();
    // Opened after its end (a reload, a shared link): check the deal now, as a live end would.
    if (view.phase === "ended") this.onEnded();
  }

  unmount() {
    this.gone = true;
    document.body.classList.remove("meadow-open");
    this.feed?.stop();
    this.tableWatch?.stop();
    clearInterval(this.ticker);
    document.removeEventListener("keydown", this.keys);
  }

  nameOf(seat) {
    return (this.shown ?? this.view)?.seats.find((s) => s.seat === seat)?.name;
  }

  who(seat) {
    return seat === this.shown?.you ? "You" : this.nameOf(seat) ?? `Seat ${seat}`;
  }

  show(view) {
    this.shown = view;
    if (!this.inFlight) {
      // Views are drawn only once every move sent is answered: this one has them all, so
      // what the board showed ahead of the service (a tap, a confirm, a take) is in it now.
      this.tapping = null;
      this.confirming = null;
      this.taking = null;
    }
    this.model = {
      stems: view.stems.map((s) => s.bees.map((bee, k) => ({ bee, stings: s.bee_stings[k] }))),
      stings: Object.fromEntries(view.seats.map((s) => [s.seat, s.stings])),
      landed: new Set(),
      reveal: view.last_picks,
    };
    if (view.phase === "picking" && view.last_picks.length) {
      for (const p of view.last_picks) this.model.landed.add(`${p.seat}:${p.bee}`);
    }
  }

  // --- events and the animation queue ---------------------------------------------------------

  onEvents(events) {
    this.meadow.add(events);
    for (const event of events) {
      this.lastEvent = Math.max(this.lastEvent, event.version);
      if (event.type === "game_started" && event.data.clock) this.clock = event.data.clock;
      if (event.version > this.shownVersion) this.queue.push(event);
    }
    this.pump();
  }

  async pump() {
    if (this.animating) return;
    this.animating = true;
    try {
      while (this.queue.length) {
        const event = this.queue.shift();
        if (MOVING.has(event.type) && !this.flying) {
          // The bees fly: the forecast and the hand wait until they have landed.
          this.flying = true;
          this.drawStems();
          this.drawHand();
        }
        await this.animate(event);
        this.shownVersion = event.version;
      }
    } finally {
      this.animating = false;
    }
    if (this.view.version < this.lastEvent) {
      try {
        this.adopt(await api.getGame(this.gameId));
      } catch (problem) {
        this.app.showProblem(problem);
        this.flying = false;
        this.render();
        return;
      }
    }
    // A view is drawn once the animation has caught up with it, and never while a move of
    // this person's is on its way: an older view would undo what they just did on screen.
    if (this.inFlight) return;
    if (this.view.version <= this.shownVersion && (this.view !== this.shown || this.flying)) {
      this.flying = false;
      const ended = this.view.phase === "ended" && this.shown.phase !== "ended";
      this.show(this.view);
      this.render();
      if (ended) this.onEnded();
    }
  }

  adopt(view) {
    if (!this.view || view.version >= this.view.version) this.view = view;
  }

  async animate(event) {
    const d = event.data;
    const you = this.shown.you;
    switch (event.type) {
      case "picks_revealed":
        this.model.reveal = d.picks.map((p, k) => ({ ...p, stings: event.stings[k] }));
        this.model.landed = new Set();
        this.drawReveal(true);
        this.setBanner(`Picks revealed, low → high. The bees fly in lowest first.`);
        if (motionMs(650)) await sleep(motionMs(650));
        break;
      case "bee_landed":
      case "stem_taken": {
        const stem = this.model.stems[d.stem - 1];
        const taking = event.type === "stem_taken" || d.taken.length > 0;
        const slot = taking ? (event.type === "stem_taken" ? 0 : this.capacity(d.stem)) : stem.length;
        const landing = { bee: d.bee, stings: event.bee_stings };
        await this.fly(d.seat, landing, d.stem, slot);
        this.model.landed.add(`${d.seat}:${d.bee}`);
        if (taking) {
          const took = event.taken_stings.reduce((a, b) => a + b, 0);
          this.model.stings[d.seat] = (this.model.stings[d.seat] ?? 0) + took;
          this.model.stems[d.stem - 1] = [landing];
          this.drawStems({ flash: { stem: d.stem, text: `${this.who(d.seat)} took ${stingWord(took)}` } });
          this.drawScores();
          if (d.seat === you && event.type === "stem_taken" && d.chosen_by === "clock") {
            this.notice(`⏱ The clock chose for you: STEM ${d.stem}, the cheapest (${stingWord(took)}).`);
          }
          if (motionMs(700)) await sleep(motionMs(700));
        } else {
          stem.push(landing);
          this.drawStems();
        }
        this.drawReveal(false);
        break;
      }
      case "pick_confirmed":
        if (d.seat === you && d.by_clock && d.by_clock !== "none") {
          this.notice(
            d.by_clock === "tapped"
              ? `⏱ Your bee ${d.bee} flew because the clock ran out (it was the one you tapped).`
              : `⏱ The clock ran out and you had tapped nothing, so your lowest bee, ${d.bee}, flew.`
          );
          this.drawBanner();
        }
        break;
      case "seat_left":
        this.notice(`${this.who(d.seat)} left the table: their stings no longer count.`);
        this.drawBanner();
        break;
      default:
        break;
    }
  }

  async fly(seat, { bee, stings }, stemNumber, slotIndex) {
    const from = this.root.querySelector(`.reveal [data-pick="${seat}:${bee}"]`);
    const row = this.root.querySelector(`.stem[data-stem="${stemNumber}"]`);
    const to = row?.querySelectorAll(".slot")[Math.min(slotIndex, this.capacity(stemNumber))];
    const ms = motionMs(480);
    if (!from || !to || ms === 0) return; // animation off: the bee is simply there
    const a = from.getBoundingClientRect();
    const b = to.getBoundingClientRect();
    const ghost = beeCard(bee, stings, { class: "ghost" });
    ghost.setAttribute("aria-hidden", "true");
    Object.assign(ghost.style, {
      position: "fixed",
      left: `${a.left}px`,
      top: `${a.top}px`,
      width: `${a.width}px`,
      height: `${a.height}px`,
      margin: 0,
      zIndex: 50,
    });
    document.body.append(ghost);
    from.classList.add("flying");
    const dx = b.left + b.width / 2 - (a.left + a.width / 2);
    const dy = b.top + b.height / 2 - (a.top + a.height / 2);
    const scale = b.width / Math.max(a.width, 1);
    const motion = ghost.animate(
      [
        { transform: "translate(0, 0) scale(1)" },
        { transform: `translate(${dx / 2}px, ${dy / 2 - 30}px) scale(1.15) rotate(-6deg)`, offset: 0.5 },
        { transform: `translate(${dx}px, ${dy}px) scale(${scale})` },
      ],
      { duration: ms, easing: "ease-in-out", fill: "forwards" }
    );
    await Promise.race([motion.finished.catch(() => {}), sleep(ms + 200)]);
    ghost.remove();
  }

  // --- actions ---------------------------------------------------------------------------------

  // `slowBees`: the move wakes bees that think (a level other than easy spends up to
  // a few tenths of a second a bee): after 100 ms without an answer, the banner says so.
  async act(label, run, slowBees = false) {
    this.inFlight = (this.inFlight ?? 0) + 1;
    const timer = slowBees
      ? setTimeout(() => {
          this.thinking = true;
          this.drawBanner();
        }, 100)
      : null;
    try {
      const view = await run();
      if (view) this.adopt(view);
      this.app.clearProblem();
    } catch (problem) {
      this.app.showProblem(problem);
      try {
        this.adopt(await api.getGame(this.gameId));
      } catch {
        /* the feed keeps retrying */
      }
      this.tapping = null;
      this.confirming = null;
      this.taking = null;
      this.drawHand();
      this.drawStems();
    } finally {
      this.inFlight -= 1;
      clearTimeout(timer);
      if (this.thinking) {
        this.thinking = false;
        this.drawBanner();
      }
    }
    this.feed.poke();
    this.pump();
  }

  canPick() {
    const v = this.shown;
    const me = v.seats.find((s) => s.seat === v.you);
    return v.phase === "picking" && me && me.status !== "left" && v.confirmed === null && !this.flying;
  }

  tap(bee) {
    if (!this.canPick()) return;
    this.notices = [];
    this.tapping = bee;
    this.drawHand();
    this.drawScores();
    this.act("tap", () => api.move(this.gameId, { type: "tap", bee }));
  }

  confirm() {
    if (!this.canPick()) return;
    const bee = this.tapping ?? this.shown.tapped;
    if (bee === null || bee === undefined) return;
    this.confirming = bee;
    this.drawHand();
    this.drawScores();
    // The bees are about to fly: bring the stems into view if the middle was scrolled away.
    const middle = this.root.querySelector(".middle");
    if (middle && this.stems.getBoundingClientRect().top < middle.getBoundingClientRect().top) middle.scrollTop = 0;
    this.act("confirm", () => api.move(this.gameId, { type: "confirm", bee }), this.slowBees());
  }

  take(stem) {
    const c = this.shown.choice;
    if (!c?.yours || this.flying) return;
    this.taking = stem;
    this.act("take", () => api.move(this.gameId, { type: "take_stem", stem }), this.slowBees());
  }

  // Whether a bee at the table thinks long enough to be waited for (any level but easy).
  slowBees() {
    return this.shown.seats.some((s) => s.kind === "bee" && THINKING_LEVELS.includes(s.level));
  }

  onKey(event) {
    if (event.target.closest?.("input, select, textarea")) return;
    if (event.key === "Escape") {
      if (this.app.meadowOpen) {
        this.toggleMeadow();
        this.meadowToggle.focus();
      } else if (this.leaving) {
        this.leaving = false;
        this.render();
      } else if (this.shown.phase === "ended" && this.result.firstChild) {
        this.closeResult();
      } else return;
      event.preventDefault();
      return;
    }
    // Enter confirms the tapped bee from anywhere but a button or link (those act themselves).
    if (event.key === "Enter" && !event.target.closest?.("button, a, summary") && this.canPick()) {
      if ((this.tapping ?? this.shown.tapped) !== null) {
        event.preventDefault();
        this.confirm();
      }
    }
  }

  async leave() {
    try {
      await api.leaveTable(this.shown.table_id);
      savePlace(null);
      this.app.go(this.mode === "solo" ? "#/" : "#/lobby");
    } catch (problem) {
      this.app.showProblem(problem);
    }
  }

  async playAgain() {
    const tableId = this.shown.table_id;
    try {
      const table = await api.getTable(tableId);
      let seed;
      if (table.next_game) {
        seed = newClientSeed();
        remember(table.next_game.game_id, {
          commitment: table.next_game.commitment,
          commitment_seen: new Date().toISOString(),
          seed,
        });
      }
      const next = await api.playAgain(tableId, seed);
      const gameId = next.game?.game_id ?? next.games[next.games.length - 1];
      this.app.go(`#/game/${gameId}`);
    } catch (problem) {
      this.app.showProblem(problem);
    }
  }

  // How many bees a stem holds, as the view says (the board keeps no rule of its own).
  capacity(stemNumber) {
    return this.shown.stems[stemNumber - 1].capacity;
  }

  onEnded() {
    this.meadow.verify().then(() => this.drawResult());
    this.learnPaid();
    // Whether Play again can work depends on the table now (who is still seated, closed or not):
    // not offered until the table is read again (the one held may be from before the end).
    if (this.table) {
      this.tableBeforeEnd = true;
      api
        .getTable(this.shown.table_id)
        .then((table) => {
          this.table = table;
        })
        .catch(() => {})
        .finally(() => {
          this.tableBeforeEnd = false;
          this.drawResult();
          this.drawGameBar?.();
        });
    }
    if (this.mode === "online" && this.shown.you) {
      // Play again by anyone still at the table deals everyone in: follow them to it.
      this.tableWatch = watchTable(this.shown.table_id, {
        onTable: (table) => {
          if (table.next_game) {
            remember(table.next_game.game_id, {
              commitment: table.next_game.commitment,
              commitment_seen: new Date().toISOString(),
            });
          }
          const latest = table.games[table.games.length - 1];
          if (latest && latest !== this.gameId && table.game?.game_id === latest) {
            this.app.go(`#/game/${latest}`);
          }
        },
      });
    }
  }

  // --- drawing ---------------------------------------------------------------------------------

  focusKey() {
    const a = document.activeElement;
    if (!a || !this.root.contains(a)) return null;
    if (a.dataset.bee) return `bee:${a.dataset.bee}`;
    if (a.classList.contains("confirm")) return "confirm";
    if (a.classList.contains("meadow-toggle")) return "meadow";
    return null;
  }

  restoreFocus(key) {
    if (!key) return;
    const enabled = (el) => (el && !el.disabled ? el : null);
    const target =
      key === "meadow"
        ? this.meadowToggle
        : key === "confirm"
          ? enabled(this.hand.querySelector("button.confirm")) ?? enabled(this.hand.querySelector("button.bee.tapped"))
          : enabled(this.hand.querySelector(`[data-bee="${key.slice(4)}"]`)) ?? enabled(this.hand.querySelector("button.bee"));
    target?.focus({ preventScroll: true });
  }

  render() {
    const v = this.shown;
    const focus = this.focusKey();
    this.clockLine = h("div", { class: "clockline", role: "timer", "aria-label": "Turn clock" }, h("div", { class: "bar" }));
    this.clockText = h("span", { class: "clocktext" });
    this.scores = h("aside", { class: "scores", "aria-label": "Stings of every player" });
    this.stems = h("section", { class: "stems", "aria-label": "The four stems" });
    this.reveal = h("section", { class: "reveal", "aria-label": "Picks, low to high", "aria-live": "polite" });
    this.banner = h("div", { class: "banner", role: "status", "aria-live": "polite" });
    this.hand = h("section", { class: "hand-area", "aria-label": "Your hand" });
    this.result = h("div", { class: "result-slot" });
    const meadowOpen = this.app.meadowOpen;
    this.meadowToggle = h(
      "button",
      {
        class: "ghost-btn meadow-toggle",
        "aria-expanded": String(meadowOpen),
        "aria-controls": "meadow-panel",
        onclick: () => this.toggleMeadow(),
      },
      "⏱ ",
      h("span", { class: "wide-only" }, "Meadow "),
      "log"
    );
    document.body.classList.toggle("meadow-open", meadowOpen);
    this.meadowPanel = h(
      "div",
      { id: "meadow-panel", class: ["meadow-panel", meadowOpen && "open"], hidden: !meadowOpen },
      h("button", { class: "ghost-btn small close", "aria-label": "Close the Meadow log", onclick: () => this.toggleMeadow() }, "✕ Close"),
      this.meadow.root
    );
    this.gameBar = h("div", { class: "game-bar" });
    this.drawGameBar();
    replace(
      this.root,
      this.clockLine,
      this.gameBar,
      h(
        "div",
        { class: "board" },
        this.scores,
        h("div", { class: "middle" }, h("div", { class: "middle-grid" }, this.stems, h("div", { class: "side" }, this.reveal, this.banner))),
        this.hand
      ),
      this.result,
      this.meadowPanel
    );
    this.drawScores();
    this.drawStems();
    this.drawReveal(false);
    this.drawBanner();
    this.drawHand();
    this.drawResult();
    this.tick();
    this.restoreFocus(focus);
    if (v.phase === "ended" && !this.resultClosed && !this.root.contains(document.activeElement)) this.focusResult();
    this.focusTake();
  }

  modeText() {
    if (this.mode === "solo") return "Solo · untimed";
    const t = this.table;
    if (!t?.stake) return "Online · free table";
    // Only a table's first game holds a buy-in (seed §9): Play again has none.
    return t.games?.[0] === this.gameId ? `Online · 💰${t.stake} buy-in` : "Online · Play again, no buy-in";
  }

  drawGameBar() {
    const v = this.shown;
    const turnText = v.phase === "ended" ? "Game over" : `Turn ${v.turn} of ${v.turns}`;
    // A redraw (a late view or table update) must not drop the focus to <body>.
    const hadFocus = document.activeElement?.matches?.("button.show-result");
    replace(
      this.gameBar,
      h("span", { class: "turn" }, turnText),
      h("span", { class: "mode" }, this.modeText()),
      v.you ? null : h("span", { class: "watching" }, "👀 Watching"),
      this.clockText,
      h("span", { class: "spacer" }),
      v.phase === "ended" && this.resultClosed ? h("button", { class: "secondary show-result", onclick: () => this.openResult() }, "🏆 Result") : null,
      this.meadowToggle,
      v.phase !== "ended" && v.you ? this.leaveButton() : null
    );
    if (hadFocus) this.gameBar.querySelector("button.show-result")?.focus();
  }

  toggleMeadow() {
    this.app.meadowOpen = !this.app.meadowOpen;
    document.body.classList.toggle("meadow-open", this.app.meadowOpen);
    this.meadowToggle.setAttribute("aria-expanded", String(this.app.meadowOpen));
    this.meadowPanel.hidden = !this.app.meadowOpen;
    this.meadowPanel.classList.toggle("open", this.app.meadowOpen);
    if (this.app.meadowOpen) this.meadowPanel.querySelector("h2")?.focus?.();
  }

  leaveButton() {
    if (this.leaving) {
      return h(
        "span",
        { class: "leave-confirm" },
        "Leave this game? ",
        h("button", { class: "danger", onclick: () => this.leave() }, "Yes, leave"),
        h("button", { class: "ghost-btn", onclick: () => { this.leaving = false; this.render(); } }, "Stay")
      );
    }
    return h("button", { class: "ghost-btn", onclick: () => { this.leaving = true; this.render(); } }, "Leave");
  }

  drawScores() {
    const v = this.shown;
    const winners = v.result?.winners ?? [];
    const status = {
      picking: "picking…",
      tapped: "tapped",
      confirmed: "✓ confirmed",
      waiting: "waiting",
      left: "left",
    };
    replace(
      this.scores,
      h("h2", { class: "sr-title" }, "Stings"),
      h(
        "ol",
        {},
        v.seats.map((s) =>
          h(
            "li",
            {
              class: ["seat", s.seat === v.you && "me", s.status === "left" && "left", winners.includes(s.seat) && "winner"],
              dataset: { seat: s.seat },
              "aria-label": `${s.seat === v.you ? "You" : s.name}${s.kind === "bee" ? " (bee player)" : ""}: ${stingWord(this.model.stings[s.seat] ?? s.stings)}, ${status[this.statusOf(s)]}${winners.includes(s.seat) ? ", winner" : ""}`,
            },
            h("span", { class: "who" }, s.kind === "bee" ? "🐝 " : "", s.seat === v.you ? `You` : s.name),
            h("span", { class: "mark", "aria-hidden": "true" }, this.statusOf(s) === "confirmed" ? "✓" : ""),
            h("span", { class: "count" }, h("b", {}, String(this.model.stings[s.seat] ?? s.stings)), " ▼"),
            h("span", { class: "state" }, winners.includes(s.seat) ? "🏆 winner" : v.phase === "ended" ? "" : status[this.statusOf(s)])
          )
        )
      )
    );
  }

  // A seat's status as drawn: this person's own confirm shows before the service's answer.
  statusOf(seat) {
    if (seat.seat === this.shown.you && this.confirming !== null && this.confirming !== undefined && seat.status === "tapped") return "confirmed";
    if (seat.seat === this.shown.you && this.tapping !== null && this.tapping !== undefined && seat.status === "picking") return "tapped";
    return seat.status;
  }

  focusTake() {
    const v = this.shown;
    if (v.phase === "choosing" && v.choice?.yours) {
      this.stems.querySelector(`.stem[data-stem="${v.choice.cheapest}"] button.take`)?.focus({ preventScroll: true });
    }
  }

  drawStems(opts = {}) {
    const v = this.shown;
    const choosing = v.phase === "choosing" && !this.flying ? v.choice : null;
    const forecast = this.currentForecast();
    replace(
      this.stems,
      this.model.stems.map((bees, i) => {
        const number = i + 1;
        const capacity = this.capacity(number);
        const full = bees.length >= capacity;
        const cost = choosing?.costs.find((c) => c.stem === number);
        const isCheapest = choosing && choosing.cheapest === number;
        const forecastHere = forecast && !forecast.too_low && forecast.stem === number;
        const label = `STEM ${number}: ${plural(bees.length, "bee")}, ${stingWord(sum(bees))}, top bee ${bees[bees.length - 1]?.bee}${full ? ", full: the next bee here is the SIXTH BEE" : ""}`;
        const slots = [];
        for (let k = 0; k < capacity; k++) {
          slots.push(h("div", { class: ["slot", k < bees.length && "filled"] }, k < bees.length ? beeCard(bees[k].bee, bees[k].stings) : null));
        }
        slots.push(
          h(
            "div",
            { class: ["slot", "sixth", full && "armed"] },
            full
              ? h("div", { class: "sixth-label" }, h("b", {}, "SIXTH BEE"), h("span", {}, `takes ${sum(bees)} ▼`))
              : h("div", { class: "sixth-label quiet" }, `${capacity + 1}th`)
          )
        );
        return h(
          "div",
          {
            class: ["stem", forecastHere && "forecast", isCheapest && "cheapest", opts.flash?.stem === number && "flash", cost && choosing.yours && "has-take"],
            role: "group",
            "aria-label": label,
            dataset: { stem: number },
          },
          h("div", { class: "stem-name" }, `STEM ${number}`, h("small", {}, `${sum(bees)} ▼`)),
          h("div", { class: "slots" }, slots),
          forecastHere ? h("div", { class: "forecast-mark", "aria-hidden": "true" }, `◀ ${forecast.bee}`) : null,
          opts.flash?.stem === number ? h("div", { class: "flash-text" }, opts.flash.text) : null,
          cost && choosing.yours
            ? h(
                "button",
                {
                  class: ["take", isCheapest && "cheapest"],
                  "aria-label": `Take STEM ${number}: ${plural(cost.bees, "bee")}, ${stingWord(cost.stings)}${isCheapest ? ", the cheapest" : ""}`,
                  disabled: this.taking !== undefined && this.taking !== null,
                  onclick: () => this.take(number),
                },
                h("b", {}, "TAKE"),
                h("span", {}, `${cost.stings} ▼`)
              )
            : cost
              ? h("div", { class: "cost" }, `${cost.stings} ▼`)
              : null
        );
      })
    );
  }

  drawReveal(fresh) {
    const picks = this.model.reveal ?? [];
    const v = this.shown;
    const past = !fresh && v.phase === "picking" && picks.every((p) => this.model.landed.has(`${p.seat}:${p.bee}`));
    if (!picks.length) {
      replace(this.reveal, h("p", { class: "hint" }, "Picks are revealed here, low → high, when everyone is in."));
      return;
    }
    replace(
      this.reveal,
      h("span", { class: "reveal-title" }, past ? "Last turn" : "Revealed"),
      h(
        "ol",
        { class: ["picks", past && "past"] },
        picks.map((p) =>
          h(
            "li",
            {
              class: ["pick", this.model.landed.has(`${p.seat}:${p.bee}`) && "landed", p.seat === v.you && "mine"],
              dataset: { pick: `${p.seat}:${p.bee}` },
            },
            beeCard(p.bee, p.stings, { label: `${this.who(p.seat)}: bee ${p.bee}, ${stingWord(p.stings)}` }),
            h("span", { class: "by" }, this.who(p.seat))
          )
        )
      )
    );
  }

  notice(text) {
    this.notices.push({ turn: this.shown.turn, text });
  }

  setBanner(text) {
    this.bannerOverride = text;
    this.drawBanner();
  }

  drawBanner() {
    const v = this.shown;
    if (!this.flying) this.bannerOverride = null;
    let main;
    const me = v.seats.find((s) => s.seat === v.you);
    if (this.bannerOverride) {
      main = this.bannerOverride;
    } else if (v.phase === "ended") {
      main = v.result ? `Game over: ${this.headline()}` : "The game is over.";
    } else if (!me) {
      main = "You are watching this game.";
    } else if (me.status === "left") {
      main = "You left this game: you pick no more bees and your stings no longer count.";
    } else if (v.phase === "choosing" && v.choice) {
      const c = v.choice;
      const cheap = c.costs.find((x) => x.stem === c.cheapest);
      main = c.yours
        ? h(
            "span",
            { class: "too-low" },
            h("b", {}, `Your bee ${c.bee} is too low for every stem. `),
            "Choose a stem to take (TAKE): ",
            h("b", { class: "cheapest-name" }, `STEM ${c.cheapest} is the cheapest`),
            ` (${stingWord(cheap?.stings ?? 0)}, ${plural(cheap?.bees ?? 0, "bee")}).`
          )
        : `${this.who(c.seat)}'s bee ${c.bee} is too low: ${this.who(c.seat)} is choosing a stem to take (STEM ${c.cheapest} is the cheapest).`;
    } else if (v.confirmed !== null) {
      const waiting = v.seats.filter((s) => s.status === "picking" || s.status === "tapped").map((s) => this.who(s.seat));
      main = `You confirmed bee ${v.confirmed}.${waiting.length ? ` Waiting for ${waiting.join(", ")}.` : ""}`;
    } else {
      main = v.tapped === null && this.tapping === null ? "Tap a bee in your hand, then CONFIRM." : "Tap another bee to change it, or CONFIRM. A confirmed pick is final.";
    }
    if (this.thinking) main = h("span", { class: "thinking" }, "The bees are thinking…");
    replace(
      this.banner,
      h("div", { class: "banner-main" }, main),
      // This turn's and the last turn's notices, oldest first, each saying its turn.
      this.notices
        .filter((n) => n.turn >= v.turn - 1)
        .slice(-2)
        .map((n) => h("div", { class: "notice", role: "alert" }, `Turn ${n.turn} · ${n.text}`))
    );
  }

  currentForecast() {
    const v = this.shown;
    const bee = this.tapping ?? v.tapped;
    if (bee === null || bee === undefined || v.phase !== "picking") return null;
    if (v.confirmed !== null || this.confirming || this.flying) return null;
    return v.forecast.find((f) => f.bee === bee) ?? null;
  }

  drawHand() {
    const v = this.shown;
    const me = v.seats.find((s) => s.seat === v.you);
    if (!me) {
      replace(this.hand);
      return;
    }
    const selected = this.tapping ?? v.tapped;
    const locked = v.confirmed ?? this.confirming ?? null;
    const can = this.canPick() && locked === null;
    const forecast = this.currentForecast();
    const active = document.activeElement;
    const focused = this.hand.contains(active) ? (active.classList.contains("confirm") ? "confirm" : active.dataset.bee) : null;
    const lost = !active || active === document.body || active === this.app.main;
    // Nothing more to pick (the game is over, or this person left): no CONFIRM to offer.
    const done = v.phase === "ended" || me.status === "left";
    let forecastText = "";
    if (done) {
      const why = me.status === "left" ? "You left this game" : "The game is over";
      forecastText = v.hand.length ? `${why}: these bees stay unplayed.` : `${why}: every bee has been played.`;
    } else if (locked !== null && v.phase === "picking") forecastText = `Bee ${locked} is confirmed.`;
    else if (forecast) {
      forecastText = forecast.too_low
        ? `Forecast: bee ${forecast.bee} is too low for every stem; you would choose a stem to take.`
        : forecast.sixth
          ? `Forecast: bee ${forecast.bee} would be the SIXTH BEE on STEM ${forecast.stem}: you'd take ${plural(forecast.takes.length, "bee")}, ${stingWord(forecast.takes_stings)}.`
          : `Forecast: bee ${forecast.bee} would land on STEM ${forecast.stem}.`;
      // Its caveat in a span of its own: a short phone keeps it for screen readers only.
      forecastText = [forecastText, h("span", { class: "caveat" }, " Lower bees fly first and can change that.")];
    } else if (v.phase === "picking") forecastText = "Tap a bee to see where it would land.";
    else if (v.phase === "choosing") {
      forecastText = v.choice?.yours ? `Bee ${v.choice.bee} waits for the stem you TAKE.` : "Waiting for a stem to be taken.";
    }
    replace(
      this.hand,
      h(
        "div",
        { class: "hand-row" },
      h(
        "div",
        { class: "hand", role: "group", "aria-label": `Your hand: ${plural(v.hand.length, "bee")}` },
        v.hand.map((bee, i) =>
          beeCard(bee, v.hand_stings[i], {
            tag: "button",
            class: [bee === selected && "tapped", bee === locked && "confirmed"].filter(Boolean).join(" "),
            label: `Bee ${bee}, ${stingWord(v.hand_stings[i])}${bee === locked ? ", confirmed" : bee === selected ? ", tapped" : ""}`,
            "aria-pressed": String(bee === selected || bee === locked),
            disabled: !can,
            dataset: { bee },
            onclick: () => this.tap(bee),
            onkeydown: (e) => this.handKeys(e),
          })
        )
      ),
      h(
        "div",
        { class: "hand-actions" },
        h("p", { class: "forecast-text", "aria-live": "polite" }, forecastText),
        done
          ? null
          : h(
          "button",
          {
            class: "confirm",
            disabled: !can || selected === null || selected === undefined,
            onclick: () => this.confirm(),
          },
          "CONFIRM"
        )
      )
      )
    );
    // Redrawing must not lose a keyboard user's place: refocus the same bee (or CONFIRM), or
    // the lowest bee once a new turn lets them pick again.
    const target =
      (focused && this.hand.querySelector(focused === "confirm" ? "button.confirm" : `[data-bee="${focused}"]`)) ||
      (lost && can ? this.hand.querySelector("button.bee") : null);
    if (target && !target.disabled) target.focus({ preventScroll: true });
  }

  handKeys(event) {
    const buttons = [...this.hand.querySelectorAll("button.bee")];
    const i = buttons.indexOf(event.currentTarget);
    // Enter on the tapped bee confirms it: a turn is Enter (tap), Enter (CONFIRM).
    if (event.key === "Enter" && Number(event.currentTarget.dataset.bee) === (this.tapping ?? this.shown.tapped)) {
      event.preventDefault();
      event.stopPropagation();
      this.confirm();
      return;
    }
    if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      event.preventDefault();
      const next = buttons[(i + (event.key === "ArrowRight" ? 1 : buttons.length - 1)) % buttons.length];
      next?.focus();
    }
  }

  drawResult() {
    const a = document.activeElement;
    const hadFocus = this.result.contains(a) || !a || a === document.body || a === this.app.main;
    this.drawResultBody();
    if (hadFocus) this.focusResult();
  }

  drawResultBody() {
    const v = this.shown;
    if (v.phase !== "ended" || !v.result) {
      replace(this.result);
      return;
    }
    const r = v.result;
    if (this.resultClosed) {
      replace(this.result);
      return;
    }
    const headline = this.headline();
    const reason = {
      finished: `After ${v.turns} turns, the fewest stings wins.`,
      last_person_standing: "Everyone else left the table: the last person standing wins at once.",
      abandoned: `Abandoned: ${v.idle_turns_to_end} turns in a row passed with nobody picking. Every buy-in goes back.`,
    }[r.reason];
    // Fewest stings first; a seat that left last, as its stings no longer count (seed §9).
    const gone = (s) => (s.status === "left" ? 1 : 0);
    const many = v.seats.length > 4;
    const standings = [...v.seats].sort((a, b) => gone(a) - gone(b) || r.stings[a.seat - 1] - r.stings[b.seat - 1]);
    const verdict = this.meadow.verdict;
    const verdictText =
      verdict?.status === "ok"
        ? "✔ Fair deal: checked in your browser"
        : verdict?.status === "failed"
          ? "✘ The deal does not check out"
          : verdict?.status === "checking" || !verdict
            ? "⏳ Checking the deal…"
            : "⚠ The deal could not be checked";
    replace(
      this.result,
      h(
        "section",
        { class: "result", role: "dialog", "aria-modal": "false", "aria-labelledby": "result-title" },
        h(
          "button",
          { class: "ghost-btn small close-result", "aria-label": "Close the result to study the board", onclick: () => this.closeResult() },
          "✕"
        ),
        h("h2", { id: "result-title", tabindex: "-1" }, headline),
        h("p", { class: "reason" }, reason),
        // The head and the actions stay put; what lies between scrolls when the window is short.
        h(
          "div",
          { class: "result-body" },
          this.paidLines(),
          h(
          "ol",
          // More than 4 seats: two columns, so the result fits the window with the board's others.
          { class: ["standings", many && "many"] },
          standings.map((s) =>
            h(
              "li",
              { class: [r.winners.includes(s.seat) && "winner", s.seat === v.you && "me", s.status === "left" && "left"] },
              h("span", { class: "who" }, s.kind === "bee" ? "🐝 " : "", s.seat === v.you ? "You" : s.name),
              h(
                "span",
                { class: "count" },
                many
                  ? [String(r.stings[s.seat - 1]), h("span", { "aria-hidden": "true" }, " ▼"), h("span", { class: "sr-only" }, " stings")]
                  : stingWord(r.stings[s.seat - 1])
              ),
              h(
                "span",
                { class: "tag" },
                r.winners.includes(s.seat)
                  ? many
                    ? [h("span", { "aria-hidden": "true" }, "🏆"), h("span", { class: "sr-only" }, " winner")]
                    : "🏆 winner"
                  : s.status === "left"
                    ? "left"
                    : ""
              )
            )
          )
        ),
        h(
          "p",
          { class: ["verdict-line", verdict && `verdict-${verdict.status}`] },
          verdictText,
          " · ",
          h("button", { class: "link", onclick: () => { if (!this.app.meadowOpen) this.toggleMeadow(); } }, "open the ⏱ Meadow log")
        )
        ),
        h(
          "div",
          { class: "result-actions" },
          this.canPlayAgain()
            ? h("button", { class: "primary play-again", onclick: () => this.playAgain() }, this.table?.stake ? "Play again (no buy-in)" : "Play again")
            : null,
          h("a", { class: "button secondary replay-link", href: `#/replay/${this.gameId}` }, "▶ Replay"),
          this.mode === "solo"
            ? h("button", { class: "secondary", onclick: () => { savePlace(null); this.app.go("#/"); } }, "Back to setup")
            : h("button", { class: "secondary", onclick: () => this.leaveToLobby() }, "Back to the lobby")
        )
      )
    );
  }

  // The result in one line: who won, or that nobody did.
  headline() {
    const v = this.shown;
    const r = v.result;
    const mine = r.winners.includes(v.you);
    const others = r.winners.filter((s) => s !== v.you).map((s) => this.who(s));
    if (!r.winners.length) return r.reason === "abandoned" ? "Nobody won: the game was abandoned." : "Nobody won.";
    if (mine) return others.length ? `You share the win with ${others.join(" and ")}!` : "You won!";
    return `${others.join(" and ")} ${others.length > 1 ? "share the win" : "won"}.`;
  }

  // What the game paid, as the service says it: the pot seat by seat (public) and, for a person
  // with an account, their own reward. A reward still on its way through the table's outbox is
  // `pending`: ask again until it has arrived. Then the balance, for the line under it.
  async learnPaid() {
    if (this.mode !== "online") return;
    let view = this.view;
    for (let i = 0; view?.reward?.status === "pending" && i < 40 && !this.gone; i++) {
      await sleep(i < 5 ? 400 : 1000);
      view = await api.getGame(this.gameId).catch(() => view);
    }
    if (this.gone) return;
    this.paid = { pot: view?.pot ?? null, reward: view?.reward ?? null };
    if (this.paid.reward?.status === "delivered" || this.paid.pot?.seats.some((s) => s.seat === this.shown.you)) {
      this.balance = (await api.me().catch(() => null))?.coins.balance;
    }
    this.drawResult();
  }

  paidLines() {
    if (this.mode !== "online") return null;
    const v = this.shown;
    const { pot, reward } = this.paid ?? { pot: v.pot ?? null, reward: v.reward ?? null };
    const me = v.seats.find((s) => s.seat === v.you);
    const lines = [];
    if (pot) {
      const mine = pot.seats.find((s) => s.seat === v.you);
      const paid = pot.seats.filter((s) => s.paid > 0);
      if (mine && pot.reason === "refund") lines.push(`💰 Your ${mine.buy_in} buy-in is back.`);
      else if (mine && mine.paid > 0) {
        lines.push(paid.length > 1 ? `💰 +${mine.paid} coins: your share of the ${pot.coins}-coin pot, split ${paid.length} ways` : `💰 +${mine.paid} coins: the whole pot`);
      } else if (mine) lines.push(`💰 Your ${mine.buy_in} buy-in stayed in the pot.`);
      else if (pot.reason === "refund") lines.push(`💰 The ${pot.coins}-coin pot went back: every buy-in was returned.`);
      else lines.push(`💰 The ${pot.coins}-coin pot: ${paid.map((s) => `${this.who(s.seat)} took ${s.paid}`).join(", ")}.`);
    }
    if (reward?.status === "pending") {
      lines.push(h("span", { class: "pending" }, "⏳ Your reward is on its way…"));
      lines.push(`⭐ +${reward.xp} XP`);
    } else if (reward) {
      const cap = reward.daily_cap;
      lines.push(
        !reward.capped
          ? `💰 +${reward.coins} reward coins`
          : reward.coins > 0
            ? `💰 +${reward.coins} of ${reward.coins_earned} reward coins: today's cap of ${cap} reward coins is reached`
            : `💰 No reward coins: today's cap of ${cap} reward coins was already reached`
      );
      lines.push(`⭐ +${reward.xp} XP`);
      for (const b of reward.badges) lines.push([`🏅 New badge: ${b.name.replaceAll("_", " ")} `, h("small", {}, `· ${b.description}`)]);
    } else if (me) {
      lines.push(
        me.status === "left"
          ? "You left this game: it earns you nothing."
          : v.result.reason === "abandoned"
            ? "An abandoned game earns no coins or XP."
            : !session()?.registered
              ? "Guests earn no coins or XP: register to keep them."
              : "This game earned you nothing."
      );
    }
    if (!lines.length) return null;
    if (this.balance !== undefined && this.balance !== null && reward?.status !== "pending") lines.push(`Balance: 💰 ${this.balance}`);
    return h(
      "ul",
      { class: "paid", "aria-label": me ? "What the game paid you" : "What the game paid" },
      lines.map((line) => h("li", {}, line))
    );
  }

  // Play again works for someone still seated at an open table, with a second person online
  // (seed §9: bee players don't keep a game going).
  canPlayAgain() {
    const v = this.shown;
    const me = v.seats.find((s) => s.seat === v.you);
    if (!me || me.status === "left") return false;
    const t = this.table;
    if (!t) return this.mode === "solo";
    if (this.tableBeforeEnd) return false;
    if (t.status === "closed" || t.you === null || t.you === undefined) return false;
    if (t.mode === "online" && t.seats.filter((s) => s.kind === "person").length < 2) return false;
    return true;
  }

  closeResult() {
    this.resultClosed = true;
    this.drawResult();
    this.drawGameBar();
    this.gameBar.querySelector("button.show-result")?.focus();
  }

  openResult() {
    this.resultClosed = false;
    this.drawResult();
    this.drawGameBar();
    this.focusResult();
  }

  // The result takes the keyboard: its first action (Play again, or going back).
  focusResult() {
    const target = this.result.querySelector(".result-actions button") ?? this.result.querySelector("#result-title");
    target?.focus({ preventScroll: true });
  }

  async leaveToLobby() {
    try {
      await api.leaveTable(this.shown.table_id);
    } catch {
      /* already gone */
    }
    savePlace(null);
    this.app.go("#/lobby");
  }

  tick() {
    const v = this.shown;
    if (!this.clockLine) return;
    const bar = this.clockLine.firstChild;
    if (!v?.deadline || v.phase === "ended" || !v.server_time) {
      this.clockLine.hidden = true;
      this.clockText.textContent = "";
      return;
    }
    this.clockLine.hidden = false;
    if (this.offsetFor !== v) {
      this.offsetFor = v;
      this.offset = Date.parse(v.server_time) - Date.now();
    }
    const left = Math.max(0, Date.parse(v.deadline) - (Date.now() + this.offset)) / 1000;
    const choosing = v.phase === "choosing";
    const total = (choosing ? this.clock?.choice_seconds : this.clock?.turn_seconds) ?? Math.max(left, 1);
    bar.style.width = `${Math.min(100, (100 * left) / total)}%`;
    this.clockLine.classList.toggle("low", left <= 5);
    const secs = Math.ceil(left);
    this.clockLine.setAttribute("aria-label", `${choosing ? "Choice clock" : "Turn clock"}: ${secs} seconds left`);
    // On a phone "to choose" goes (.wide-only): the TAKE buttons say it, and the bar stays one row.
    replace(this.clockText, `⏱ ${secs} s`, choosing ? h("span", { class: "wide-only" }, " to choose") : null);
  }
}
