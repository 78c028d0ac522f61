// The game screen: the hand along the bottom, the stems in the middle, every seat's stings down
// the side (along the top on a phone). It draws from the latest view the service returned and
// animates the difference from the game's events: the picks revealed low → high, then the bees
// flying in one at a time, lowest first.
//
// This module is the screen itself: the views and events it follows, the animation queue and
// this person's moves. What it draws is in parts, one idea each, that read the screen's state:
// game-bar.js (the clock, the game bar, the Meadow log's panel), game-stems.js (the stings of
// every seat, the stems, the revealed picks), game-banner.js (what is happening, in words),
// game-hand.js (the hand, the forecast, CONFIRM) and game-result.js (the end of the game).

import { api, followGame, newClientSeed, savePlace, watchTable } from "./api.js";
import { flyBee } from "./bee.js";
import { Banner } from "./game-banner.js";
import { GameBar, MeadowPanel, TurnClock } from "./game-bar.js";
import { Hand } from "./game-hand.js";
import { Result } from "./game-result.js";
import { Reveal, Scores, Stems } from "./game-stems.js";
import { h, motionMs, replace, sleep, stingWord } from "./dom.js";
import { MeadowLog, remember } from "./meadow.js";
import { THINKING_LEVELS } from "./levels.js"; // served from the levels' registry


// Events that move bees on the board: while they play, the hand waits.
const MOVING = new Set(["picks_revealed", "bee_landed", "stem_taken", "stem_choice_required"]);

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
    this.leaving = false;
    this.tapping = null;
    this.root = h("div", { class: "game-screen" });
    this.turnClock = new TurnClock(this);
    this.meadowPanel = new MeadowPanel(this);
    this.bar = new GameBar(this);
    this.scores = new Scores(this);
    this.stems = new Stems(this);
    this.reveal = new Reveal(this);
    this.banner = new Banner(this);
    this.hand = new Hand(this);
    this.result = new Result(this);
  }

  async mount(container) {
    replace(container, this.root);
    const view = await api.getGame(this.gameId);
    this.table = await api.getTable(view.table_id).catch(() => null);
    this.mode = this.table?.mode ?? "solo";
    this.clock = this.table?.clock ?? null;
    if (view.you) savePlace({ table_id: view.table_id, game_id: this.gameId, mode: this.mode }); // not a watched game
    this.view = view;
    this.watchedLive = !view.you && view.phase !== "ended"; // a spectator from before its end
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
    this.ticker = setInterval(() => this.turnClock.tick(), 200);
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

  // How many bees a stem holds, as the view says (the board keeps no rule of its own).
  capacity(stemNumber) {
    return this.shown.stems[stemNumber - 1].capacity;
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

  // The tapped bee's forecast, while it can still be confirmed (the hand and the stems show it).
  currentForecast() {
    const v = this.shown;
    const bee = this.tapping ?? v.tapped;
    if (bee === null || bee === undefined || v.phase !== "picking") return null;
    if (v.confirmed !== null || this.confirming || this.flying) return null;
    return v.forecast.find((f) => f.bee === bee) ?? null;
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
          this.stems.draw();
          this.hand.draw();
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
        this.reveal.draw(true);
        this.banner.set(`Picks revealed, low → high. The bees fly in lowest first.`);
        if (motionMs(650)) await sleep(motionMs(650));
        break;
      case "bee_landed":
      case "stem_taken": {
        const stem = this.model.stems[d.stem - 1];
        const taking = event.type === "stem_taken" || d.taken.length > 0;
        const slot = taking ? (event.type === "stem_taken" ? 0 : this.capacity(d.stem)) : stem.length;
        const landing = { bee: d.bee, stings: event.bee_stings };
        await flyBee(this.reveal.card(d.seat, d.bee), this.stems.slot(d.stem, slot), landing);
        this.model.landed.add(`${d.seat}:${d.bee}`);
        if (taking) {
          const took = event.taken_stings.reduce((a, b) => a + b, 0);
          this.model.stings[d.seat] = (this.model.stings[d.seat] ?? 0) + took;
          this.model.stems[d.stem - 1] = [landing];
          this.stems.draw({ flash: { stem: d.stem, text: `${this.who(d.seat)} took ${stingWord(took)}` } });
          this.scores.draw();
          if (d.seat === you && event.type === "stem_taken" && d.chosen_by === "clock") {
            this.banner.notice(`⏱ The clock chose for you: STEM ${d.stem}, the cheapest (${stingWord(took)}).`);
          }
          if (motionMs(700)) await sleep(motionMs(700));
        } else {
          stem.push(landing);
          this.stems.draw();
        }
        this.reveal.draw(false);
        break;
      }
      case "pick_confirmed":
        if (d.seat === you && d.by_clock && d.by_clock !== "none") {
          this.banner.notice(
            d.by_clock === "tapped"
              ? `⏱ Your bee ${d.bee} flew because the clock ran out (it was the one you tapped).`
              : `⏱ The clock ran out and you had tapped nothing, so your lowest bee, ${d.bee}, flew.`
          );
          this.banner.draw();
        }
        break;
      case "seat_left":
        this.banner.notice(`${this.who(d.seat)} left the table: their stings no longer count.`);
        this.banner.draw();
        break;
      default:
        break;
    }
  }

  onEnded() {
    this.meadow.verify().then(() => this.result.draw());
    this.result.learnPaid();
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
          this.result.draw();
          this.bar.draw();
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
    } else if (this.mode === "online" && this.watchedLive) {
      // A spectator who watched this game come to its end follows the table to the game dealt
      // after it (Play again: `game_opened` names this one as the game it `follows`). Not one
      // who opened it already ended (a shared link, the replay's way back): they asked for it.
      this.tableWatch = watchTable(this.shown.table_id, {
        onTable: (table) => {
          const next = table.games[table.games.indexOf(this.gameId) + 1];
          if (next && table.status === "playing" && next === table.games[table.games.length - 1]) {
            this.app.go(`#/game/${next}`);
          }
        },
      });
    }
  }

  // --- actions ---------------------------------------------------------------------------------

  // `slowBees`: the move wakes bees that think (a level other than easy spends up to
  // a few tenths of a second a bee): after 100 ms without an answer, the banner says so.
  async act(label, run, slowBees = false) {
    this.inFlight = (this.inFlight ?? 0) + 1;
    const timer = slowBees
      ? setTimeout(() => {
          this.thinking = true;
          this.banner.draw();
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
      this.hand.draw();
      this.stems.draw();
    } finally {
      this.inFlight -= 1;
      clearTimeout(timer);
      if (this.thinking) {
        this.thinking = false;
        this.banner.draw();
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
    this.banner.clearNotices();
    this.tapping = bee;
    this.hand.draw();
    this.scores.draw();
    this.act("tap", () => api.move(this.gameId, { type: "tap", bee }));
  }

  confirm() {
    if (!this.canPick()) return;
    const bee = this.tapping ?? this.shown.tapped;
    if (bee === null || bee === undefined) return;
    this.confirming = bee;
    this.hand.draw();
    this.scores.draw();
    // The bees are about to fly: bring the stems into view if the middle was scrolled away.
    const middle = this.root.querySelector(".middle");
    if (middle && this.stems.el.getBoundingClientRect().top < middle.getBoundingClientRect().top) middle.scrollTop = 0;
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
        this.meadowPanel.toggle();
        this.meadowPanel.toggleButton.focus();
      } else if (this.leaving) {
        this.leaving = false;
        this.render();
      } else if (this.shown.phase === "ended" && this.result.el.firstChild) {
        this.result.close();
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

  async leaveToLobby() {
    try {
      await api.leaveTable(this.shown.table_id);
    } catch {
      /* already gone */
    }
    savePlace(null);
    this.app.go("#/lobby");
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
    const hand = this.hand.el;
    const enabled = (el) => (el && !el.disabled ? el : null);
    const target =
      key === "meadow"
        ? this.meadowPanel.toggleButton
        : key === "confirm"
          ? enabled(hand.querySelector("button.confirm")) ?? enabled(hand.querySelector("button.bee.tapped"))
          : enabled(hand.querySelector(`[data-bee="${key.slice(4)}"]`)) ?? enabled(hand.querySelector("button.bee"));
    target?.focus({ preventScroll: true });
  }

  // The whole screen anew: every part builds its element and draws into it.
  render() {
    const v = this.shown;
    const focus = this.focusKey();
    for (const part of [this.turnClock, this.scores, this.stems, this.reveal, this.banner, this.hand, this.result, this.meadowPanel, this.bar]) {
      part.build();
    }
    replace(
      this.root,
      this.turnClock.line,
      this.bar.el,
      h(
        "div",
        { class: "board" },
        this.scores.el,
        h("div", { class: "middle" }, h("div", { class: "middle-grid" }, this.stems.el, h("div", { class: "side" }, this.reveal.el, this.banner.el))),
        this.hand.el
      ),
      this.result.el,
      this.meadowPanel.el
    );
    this.scores.draw();
    this.stems.draw();
    this.reveal.draw(false);
    this.banner.draw();
    this.hand.draw();
    this.result.draw();
    this.turnClock.tick();
    this.restoreFocus(focus);
    if (v.phase === "ended" && !this.result.closed && !this.root.contains(document.activeElement)) this.result.focus();
    this.stems.focusTake();
  }
}
