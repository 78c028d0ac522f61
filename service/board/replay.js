// The replay screen (#/replay/<game id>, issue 26): a game step by step, as the service folds
// it (getGameState at each version, listGameSteps for the turns). Every hand the caller may see
// (all of them once the game has ended), the reveal row, each bee flying to its stem with the
// sixth-bee takes and too-low choices, and every seat's stings. Step by event or by turn, play
// and pause at a chosen speed, jump to a turn; the keyboard: ←/→ a step, Shift+←/→ a turn,
// Home/End, space to play or pause.
//
// Beside it, the fair-deal verdict (fairness.verifyDeal, as the Meadow log checks it) and, for
// each step, its event checked against the game's hash chain as this browser recomputes it from
// the export: the chain is recomputed by fairness.js (never here), and each answer's event must
// be the export's event of that version, same data and same hash.
//
// Once the game is over, "What would the bee have played?" asks analyseTurn for the chosen seat
// at the start of the turn shown: the bee the strongest level would have played there, from only
// what that seat could see then, and each bee's estimated stings to the end of the game.
// "Every turn against the bee" asks analyseGame: a bar a turn for what the seat's pick cost
// against the bee's (review.js), the costliest marked; a bar shows its turn.

import { api } from "./api.js";
import { beeCard } from "./bee.js";
import { h, motionMs, replace, sleep } from "./dom.js";
import * as fairness from "./fairness.js";
import { recorded } from "./meadow.js";
import { reviewBox } from "./review.js";

const SPEEDS = [0.5, 1, 2, 4];
const STEP_MS = 1100; // one step at 1×
const FLIGHTS = new Set(["landing", "sixth_bee", "too_low", "take"]);
const STYLE_ID = "replay-style";

const short = (hex) => (hex ? `${hex.slice(0, 10)}…` : "none");
const word = (n) => `${n} ${n === 1 ? "sting" : "stings"}`;

// A bee card as the game screen draws it (a picture of a bee to a screen reader), with its
// number in `data-bee` for the flight from the reveal.
const card = (bee, stings, { cls } = {}) => beeCard(bee, stings, { class: cls, dataset: { bee } });

function same(a, b) {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k])]));
  }
  return value;
}

// An exported value with fairness.parseJson's exact numbers, as plain JSON (numbers as numbers).
const plain = (value) => JSON.parse(fairness.canonicalJson(value));

// The export's chain as fairness.js recomputes it (the one place that asks it): the verdict,
// the export as it parsed it, and each version's link: recomputed and matched, or why not.
async function recomputeChain(text) {
  const { ok, game, table, doc } = await fairness.verifyExportChain(text);
  const byVersion = new Map();
  for (const row of doc.events) {
    const version = Number(plain(row.version));
    const reason =
      row.chained === true
        ? ""
        : version === game.failedVersion
          ? game.reason
          : "not reached: the chain broke before it";
    byVersion.set(version, { ok: row.chained === true, reason, computed: row.computed ?? null });
  }
  const failed = !game.ok ? game : table && !table.ok ? table : null;
  const reason = failed ? `${failed === game ? "event" : "table event"} v${failed.failedVersion}: ${failed.reason}` : "";
  return { ok, reason, byVersion, doc, head: game.head, scheme: game.scheme, verified: game.verified };
}

export class ReplayScreen {
  constructor(app, gameId) {
    this.app = app;
    this.gameId = gameId;
    this.cache = new Map();
    this.version = 1;
    this.playing = false;
    this.speed = 1;
    this.gone = false;
    this.exported = null;
    this.chain = null; // recomputeChain's answer once the export is read
    this.chainStatus = "checking";
    this.deal = null;
    this.onKey = (e) => this.key(e);
  }

  async mount(main) {
    if (!document.getElementById(STYLE_ID)) {
      document.head.append(h("link", { id: STYLE_ID, rel: "stylesheet", href: "replay.css" }));
    }
    this.steps = await api.gameSteps(this.gameId);
    this.latest = this.steps.latest;
    this.root = h("div", { class: "replay-screen" });
    this.bar = h("div", { class: "replay-bar" });
    this.controls = h("div", { class: "replay-controls", role: "toolbar", "aria-label": "Replay controls" });
    this.seatsBox = h("section", { class: "replay-seats", "aria-label": "Every seat: hand and stings" });
    this.stemsBox = h("section", { class: "stems replay-stems", "aria-label": "The four stems" });
    this.revealBox = h("section", { class: "reveal replay-reveal", "aria-label": "Picks, low to high" });
    this.banner = h("div", { class: "replay-banner", role: "status", "aria-live": "polite" });
    this.checksBox = h("section", { class: "replay-checks", "aria-label": "Fair deal and hash chain" });
    this.analysisBox = h("section", { class: "replay-analysis", "aria-label": "What would the bee have played?" });
    this.analyses = new Map(); // "seat/turn" -> the answer, or a Promise while it is asked
    this.reviews = new Map(); // seat -> analyseGame's answer, "asking", or { problem }
    this.logBox = h("ol", { class: "replay-log", "aria-label": "Every step of the game" });
    this.ratingsBox = this.steps.ratings?.length ? h("section", { class: "replay-ratings", "aria-label": "Ratings" }) : null;
    replace(
      this.root,
      this.bar,
      this.controls,
      h(
        "div",
        { class: "replay-grid" },
        // The stems first, under the step's words, with the reveal: a step's change is seen whole
        // without scrolling (issue 44, item 4); every seat's hand below.
        h("div", { class: "replay-board" }, this.stemsBox, this.revealBox, this.banner, this.seatsBox),
        h("aside", { class: "replay-side" }, this.ratingsBox, this.analysisBox, this.checksBox, h("h2", {}, "Steps"), this.logBox)
      )
    );
    replace(main, this.root);
    this.drawControls();
    this.drawLog();
    this.drawChecks();
    document.addEventListener("keydown", this.onKey);
    await this.show(this.steps.turns[0]?.start ?? 1);
    this.drawRatings();
    this.check(); // in the background: the export, the deal and the chain
  }

  unmount() {
    this.gone = true;
    this.playing = false;
    document.removeEventListener("keydown", this.onKey);
  }

  // --- moving through the game ------------------------------------------------------------

  async state(version) {
    if (!this.cache.has(version)) {
      this.cache.set(
        version,
        api.gameState(this.gameId, version).catch((problem) => {
          this.cache.delete(version);
          throw problem;
        })
      );
    }
    return this.cache.get(version);
  }

  async show(version, { animate = false } = {}) {
    const v = Math.max(1, Math.min(this.latest, version));
    let answer;
    try {
      answer = await this.state(v);
    } catch (problem) {
      this.app.showProblem(problem);
      this.pause();
      return;
    }
    if (this.gone) return;
    this.version = v;
    this.answer = answer;
    this.render(animate);
    if (v < this.latest) this.state(v + 1).catch(() => {}); // the next step, ahead of time
  }

  step(delta) {
    return this.show(this.version + delta, { animate: delta === 1 });
  }

  turnStarts() {
    return this.steps.turns.map((t) => t.start);
  }

  turnStep(delta) {
    const starts = this.turnStarts();
    if (delta > 0) {
      const next = starts.find((s) => s > this.version);
      return this.show(next ?? this.latest);
    }
    const earlier = starts.filter((s) => s < this.version);
    return this.show(earlier.length ? earlier[earlier.length - 1] : 1);
  }

  jumpTurn(turn) {
    const found = this.steps.turns.find((t) => t.turn === turn);
    if (found) return this.show(found.start);
    return null;
  }

  togglePlay() {
    if (this.playing) this.pause();
    else this.play();
  }

  async play() {
    if (this.playing) return;
    if (this.version >= this.latest) await this.show(1);
    this.playing = true;
    this.drawControls();
    while (this.playing && !this.gone && this.version < this.latest) {
      await sleep(motionMs(STEP_MS / this.speed));
      if (!this.playing || this.gone) break;
      await this.step(1);
    }
    this.playing = false;
    if (!this.gone) this.drawControls();
  }

  pause() {
    this.playing = false;
    if (!this.gone && this.controls) this.drawControls();
  }

  key(e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const tag = e.target?.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    // Space on a focused button or link is that control's own press, not play/pause.
    if (e.key === " " && (tag === "BUTTON" || tag === "A")) return;
    const actions = {
      ArrowRight: () => (e.shiftKey ? this.turnStep(1) : this.step(1)),
      ArrowLeft: () => (e.shiftKey ? this.turnStep(-1) : this.step(-1)),
      Home: () => this.show(1),
      End: () => this.show(this.latest),
      " ": () => this.togglePlay(),
    };
    const action = actions[e.key];
    if (!action) return;
    e.preventDefault();
    if (e.key !== " ") this.pause();
    action();
  }

  // --- drawing -------------------------------------------------------------------------------

  nameOf(seat) {
    const s = this.answer?.view.seats.find((x) => x.seat === seat);
    return s ? s.name : `Seat ${seat}`;
  }

  drawControls() {
    const button = (label, text, onclick, extra = {}) =>
      h("button", { class: ["ghost-btn", extra.cls], "aria-label": label, title: label, onclick, ...extra.attrs }, text);
    const speed = h(
      "select",
      { "aria-label": "Speed", onchange: (e) => { this.speed = Number(e.target.value); } },
      SPEEDS.map((s) => h("option", { value: s, selected: s === this.speed }, `${s}×`))
    );
    // It shows the turn on screen, whatever moved there (a jump, a step, a redraw of these).
    const shownTurn = this.answer?.view.turn;
    const turns = (this.turnSelect = h(
      "select",
      { "aria-label": "Jump to turn", onchange: (e) => { this.pause(); this.jumpTurn(Number(e.target.value)); } },
      h("option", { value: "", selected: !shownTurn }, "Turn…"),
      this.steps.turns.map((t) => h("option", { value: t.turn, selected: t.turn === shownTurn }, `Turn ${t.turn}`))
    ));
    replace(
      this.controls,
      button("First step (Home)", "⏮", () => { this.pause(); this.show(1); }),
      button("Turn back (Shift+←)", "⏪", () => { this.pause(); this.turnStep(-1); }),
      button("Step back (←)", "◀", () => { this.pause(); this.step(-1); }),
      button(this.playing ? "Pause (space)" : "Play (space)", this.playing ? "⏸" : "▶", () => this.togglePlay(), { cls: "play" }),
      button("Step forward (→)", "▶|", () => { this.pause(); this.step(1); }),
      button("Turn forward (Shift+→)", "⏩", () => { this.pause(); this.turnStep(1); }),
      button("Last step (End)", "⏭", () => { this.pause(); this.show(this.latest); }),
      h("label", { class: "replay-select" }, "Speed ", speed),
      h("label", { class: "replay-select" }, turns),
      h("a", { class: "button ghost-btn", href: `#/game/${this.gameId}` }, "Back to the game")
    );
  }

  drawLog() {
    const items = [];
    for (const step of this.steps.steps) {
      if (step.kind === "turn") items.push(h("li", { class: "turn-head", "aria-hidden": "true" }, `Turn ${step.turn}`));
      items.push(
        h(
          "li",
          { class: ["step", `k-${step.kind}`], dataset: { version: step.version } },
          h(
            "button",
            { class: "link step-link", onclick: () => { this.pause(); this.show(step.version); } },
            h("span", { class: "v" }, `v${step.version}`),
            " ",
            step.text
          )
        )
      );
    }
    replace(this.logBox, items);
  }

  render(animate) {
    const a = this.answer;
    const step = a.step;
    const v = a.view;
    const turnText = v.turn ? `Turn ${v.turn} of ${v.turns}` : "Before turn 1";
    replace(
      this.bar,
      h("h1", { class: "replay-title" }, "▶ Replay"),
      h("span", { class: "turn" }, turnText),
      h("span", { class: "replay-pos", "aria-label": `Step ${a.version} of ${a.latest}` }, `Step ${a.version} / ${a.latest}`),
      a.over ? null : h("span", { class: "watching" }, "Game still running: you see what your seat saw then"),
      h("p", { class: "replay-step", "aria-live": "polite", dataset: { kind: step.kind } }, step.text)
    );
    if (this.turnSelect) this.turnSelect.value = this.steps.turns.some((t) => t.turn === v.turn) ? String(v.turn) : "";
    this.drawSeats();
    this.drawStems();
    this.drawReveal();
    if (animate) this.fly(step);
    this.drawBanner();
    this.drawStepCheck();
    this.drawAnalysis();
    for (const li of this.logBox.querySelectorAll("li.step")) {
      const here = Number(li.dataset.version) === a.version;
      li.classList.toggle("current", here);
      if (here) {
        li.setAttribute("aria-current", "step");
        // Scroll the list only, never the page (on a phone the list is far below).
        const box = this.logBox;
        if (li.offsetTop < box.scrollTop || li.offsetTop + li.offsetHeight > box.scrollTop + box.clientHeight) {
          box.scrollTop = li.offsetTop - box.clientHeight / 2;
        }
      } else li.removeAttribute("aria-current");
    }
  }

  drawSeats() {
    const a = this.answer;
    const v = a.view;
    const winners = v.result?.winners ?? [];
    const changed = new Set(a.changes.seats);
    replace(
      this.seatsBox,
      v.seats.map((s) => {
        const at = a.seats.find((x) => x.seat === s.seat) ?? {};
        const hand = at.hand;
        return h(
          "div",
          {
            class: ["replay-seat", s.status === "left" && "left", winners.includes(s.seat) && "winner", changed.has(s.seat) && "changed", a.step.seat === s.seat && "acting"],
            dataset: { seat: s.seat },
          },
          h(
            "div",
            { class: "replay-seat-head" },
            h("span", { class: "who" }, s.kind === "bee" ? "🐝 " : "", s.name, s.seat === v.you ? " (you)" : ""),
            h("span", { class: "count" }, h("b", {}, String(s.stings)), h("span", { "aria-hidden": "true" }, " ▼"), h("span", { class: "sr-only" }, s.stings === 1 ? " sting" : " stings")),
            h("span", { class: "state" }, winners.includes(s.seat) ? "🏆 winner" : s.status === "left" ? "left" : at.confirmed != null ? "✓ picked" : at.tapped != null ? "tapped" : "")
          ),
          h(
            "div",
            { class: "replay-hand", role: "group", "aria-label": `${s.name}'s hand` },
            hand == null
              ? h("span", { class: "hint" }, "hand hidden until the end")
              : hand.map((bee, i) =>
                  card(bee, at.hand_stings[i], {
                    cls: [bee === at.confirmed && "confirmed", bee === at.tapped && at.confirmed == null && "tapped"].filter(Boolean).join(" "),
                  })
                )
          ),
          s.pile.length
            ? h("div", { class: "replay-pile" }, h("span", { class: "sr-only" }, `${s.name} `), "took ", s.pile.join(" "))
            : null
        );
      })
    );
  }

  drawStems() {
    const a = this.answer;
    const step = a.step;
    const choice = a.view.choice;
    replace(
      this.stemsBox,
      a.view.stems.map((stem) => {
        const bees = stem.bees;
        const here = step.stem === stem.stem && FLIGHTS.has(step.kind);
        const slots = [];
        for (let k = 0; k < stem.capacity; k++) {
          const arrived = here && k === bees.length - 1 && bees[k] === step.bee;
          slots.push(
            h(
              "div",
              { class: ["slot", k < bees.length && "filled"] },
              k < bees.length ? card(bees[k], stem.bee_stings[k], { cls: arrived ? "arrived" : null }) : null
            )
          );
        }
        slots.push(
          h(
            "div",
            { class: ["slot", "sixth", stem.sixth_bee && "armed"] },
            stem.sixth_bee ? h("div", { class: "sixth-label" }, h("b", {}, "SIXTH BEE"), h("span", {}, `takes ${stem.stings} ▼`)) : h("div", { class: "sixth-label quiet" }, "6th")
          )
        );
        const cost = choice?.costs.find((c) => c.stem === stem.stem);
        const took = here && (step.kind === "sixth_bee" || step.kind === "take");
        return h(
          "div",
          {
            class: ["stem", took && "flash", choice && choice.cheapest === stem.stem && "cheapest", here && "active"],
            role: "group",
            "aria-label": `STEM ${stem.stem}: ${bees.length} ${bees.length === 1 ? "bee" : "bees"}, ${word(stem.stings)}`,
            dataset: { stem: stem.stem },
          },
          h("div", { class: "stem-name" }, `STEM ${stem.stem}`, h("small", {}, `${stem.stings} ▼`)),
          h("div", { class: "slots" }, slots),
          cost ? h("div", { class: "cost" }, `TAKE ${cost.stings} `, h("span", { "aria-hidden": "true" }, "▼"), h("span", { class: "sr-only" }, cost.stings === 1 ? "sting" : "stings")) : null,
          took ? h("div", { class: "replay-took" }, `${this.nameOf(step.seat)} took ${step.taken.join(" ")} (${word(step.taken_stings)})`) : null
        );
      })
    );
  }

  // A step forward that landed a bee: it flies from its place in the reveal row to its stem.
  fly(step) {
    if (!FLIGHTS.has(step.kind) || step.kind === "too_low" || step.stem == null) return;
    const target = this.stemsBox.querySelector(`.stem[data-stem="${step.stem}"] .bee.arrived`);
    const source = this.revealBox.querySelector(`.pick[data-seat="${step.seat}"][data-bee="${step.bee}"] .bee`);
    if (!target || !source || !target.animate) return;
    const from = source.getBoundingClientRect();
    const to = target.getBoundingClientRect();
    target.animate(
      [{ transform: `translate(${from.left - to.left}px, ${from.top - to.top}px) scale(1.1)` }, { transform: "none" }],
      { duration: motionMs(550), easing: "cubic-bezier(.3,.7,.4,1)" }
    );
  }

  drawReveal() {
    const a = this.answer;
    const picks = a.view.last_picks;
    if (!picks.length) {
      replace(this.revealBox, h("p", { class: "hint" }, "The picks are revealed here, low → high."));
      return;
    }
    const waiting = new Set(a.in_flight.map((p) => `${p.seat}:${p.bee}`));
    const pending = a.view.choice ? `${a.view.choice.seat}:${a.view.choice.bee}` : null;
    const tooLow = a.step.kind === "too_low" || a.step.kind === "take" ? `${a.step.seat}:${a.step.bee}` : pending;
    const flying = a.in_flight.length > 0 || FLIGHTS.has(a.step.kind) || a.step.kind === "reveal";
    replace(
      this.revealBox,
      h("span", { class: "reveal-title" }, flying ? "Revealed" : "Last turn"),
      h(
        "ol",
        { class: "picks" },
        picks.map((p) => {
          const key = `${p.seat}:${p.bee}`;
          return h(
            "li",
            { class: ["pick", !waiting.has(key) && "landed", key === tooLow && "too-low"], dataset: { seat: p.seat, bee: p.bee } },
            card(p.bee, p.stings),
            h("span", { class: "pick-who" }, this.nameOf(p.seat)),
            key === tooLow ? h("span", { class: "too-low-tag" }, "too low") : null
          );
        })
      )
    );
  }

  drawBanner() {
    const a = this.answer;
    const c = a.view.choice;
    if (c) {
      replace(
        this.banner,
        h("b", {}, `${this.nameOf(c.seat)}'s ${c.bee} is too low. `),
        `${this.nameOf(c.seat)} chooses a stem to take; the cheapest is STEM ${c.cheapest}.`
      );
    } else if (a.view.result) {
      const r = a.view.result;
      const names = r.winners.map((w) => this.nameOf(w));
      replace(this.banner, h("b", {}, r.reason === "abandoned" ? "Abandoned: nobody wins." : `${names.join(" and ")} ${names.length > 1 ? "share the win" : "wins"}.`));
    } else replace(this.banner);
  }

  // --- what would the bee have played? -----------------------------------------------------

  // The turn the analysis looks at: the one shown (its start), turn 1 before the first.
  analysedTurn() {
    return Math.max(1, this.answer?.view.turn ?? 1);
  }

  analysisSeat() {
    const seats = this.answer?.view.seats ?? [];
    if (this.askedSeat && seats.some((s) => s.seat === this.askedSeat)) return this.askedSeat;
    return seats.find((s) => s.seat === this.answer?.view.you)?.seat ?? seats[0]?.seat ?? 1;
  }

  async analyse() {
    const seat = this.analysisSeat();
    const turn = this.analysedTurn();
    const key = `${seat}/${turn}`;
    if (this.analyses.has(key)) return;
    this.analyses.set(key, "asking");
    this.drawAnalysis();
    try {
      this.analyses.set(key, await api.analyseTurn(this.gameId, seat, turn));
    } catch (problem) {
      this.analyses.set(key, { problem: problem?.detail ?? problem?.title ?? "the analysis could not be made" });
    }
    if (!this.gone) this.drawAnalysis();
  }

  drawAnalysis() {
    if (!this.analysisBox || !this.answer) return;
    if (!this.steps.over) {
      replace(this.analysisBox, h("h2", {}, "What would the bee have played?"), h("p", { class: "hint" }, "Once the game is over."));
      return;
    }
    const seats = this.answer.view.seats;
    const seat = this.analysisSeat();
    const turn = this.analysedTurn();
    const got = this.analyses.get(`${seat}/${turn}`);
    const picker = h(
      "select",
      {
        "aria-label": "Seat to analyse",
        onchange: (e) => {
          this.askedSeat = Number(e.target.value);
          this.drawAnalysis();
        },
      },
      seats.map((s) => h("option", { value: s.seat, selected: s.seat === seat }, s.name))
    );
    let body;
    if (got === undefined) {
      body = h("button", { class: "ghost-btn analyse", onclick: () => this.analyse() }, "What would the bee have played?");
    } else if (got === "asking") {
      body = h("p", { class: "analysis-wait", role: "status" }, "🐝 The expert bee is thinking…");
    } else if (got.problem) {
      body = h("p", { class: "bad analysis-problem", role: "status" }, `No analysis: ${got.problem}`);
    } else {
      const who = this.nameOf(got.seat);
      const played = got.played == null ? `${who} had left` : got.played === got.pick ? `${who} played it too` : `${who} played ${got.played}`;
      body = h(
        "div",
        { class: "analysis", dataset: { pick: got.pick, seat: got.seat, turn: got.turn } },
        h("p", { class: "analysis-pick" }, h("b", {}, `The ${got.level} bee would have played ${got.pick}`), ` (${played}).`),
        h(
          "table",
          { class: "analysis-table" },
          h("caption", {}, `${who}'s hand at the start of turn ${got.turn}, by the bee played: the stings it would take from then to the end, and how often it would win, in the games the bee imagined`),
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Bee"), h("th", { scope: "col" }, "Stings (est.)"), h("th", { scope: "col" }, "Wins"), h("th", { scope: "col" }, "Deals"))),
          h(
            "tbody",
            {},
            got.estimates.map((e) =>
              h(
                "tr",
                { class: [e.bee === got.pick && "pick", e.bee === got.played && "played"], dataset: { bee: e.bee } },
                h("th", { scope: "row" }, String(e.bee), e.bee === got.pick ? " 🐝" : "", e.bee === got.played ? " ✓" : ""),
                h("td", {}, e.stings.toFixed(2)),
                h("td", { class: "win" }, `${Math.round(100 * e.win)}%`),
                h("td", {}, String(e.samples))
              )
            )
          )
        ),
        h("p", { class: "hint legend" }, `🐝 the ${got.level} bee's pick, ✓ the bee ${who} played. From only what ${who} could see then.`)
      );
    }
    replace(
      this.analysisBox,
      h("h2", {}, "What would the bee have played?"),
      h("label", { class: "replay-select" }, "Seat ", picker, ` at turn ${turn}`),
      body,
      this.reviewPart(seat)
    );
  }

  // The seat's whole game against the expert bee (analyseGame): what each turn's pick cost.
  async review(seat) {
    if (this.reviews.has(seat)) return;
    this.reviews.set(seat, "asking");
    this.drawAnalysis();
    try {
      this.reviews.set(seat, await api.analyseGame(this.gameId, seat));
    } catch (problem) {
      this.reviews.set(seat, { problem: problem?.detail ?? problem?.title ?? "the analysis could not be made" });
    }
    if (!this.gone) this.drawAnalysis();
  }

  reviewPart(seat) {
    const got = this.reviews.get(seat);
    if (got === undefined) return h("button", { class: "ghost-btn review-ask", onclick: () => this.review(seat) }, "Every turn against the bee");
    if (got === "asking") return h("p", { class: "analysis-wait", role: "status" }, "🐝 The expert bee goes over the whole game…");
    if (got.problem) return h("p", { class: "bad analysis-problem", role: "status" }, `No analysis: ${got.problem}`);
    return reviewBox(got, this.nameOf(seat), (turn) => this.jumpTurn(turn));
  }

  // --- the checks ----------------------------------------------------------------------------

  async check() {
    if (!this.steps.over) {
      this.chainStatus = "running";
      this.drawChecks();
      return;
    }
    let text;
    try {
      text = await api.exportGameText(this.gameId);
    } catch (problem) {
      this.chainStatus = "unavailable";
      this.chainReason = problem?.detail ?? "the export could not be read";
      this.drawChecks();
      return;
    }
    if (this.gone) return;
    try {
      this.chain = await recomputeChain(text);
      this.exported = this.chain.doc;
      this.chainStatus = "done";
    } catch (error) {
      this.chain = null;
      this.chainStatus = "unavailable";
      this.chainReason = String(error?.message ?? error);
    }
    if (this.exported) {
      const events = this.exported.events.map((e) => ({ type: e.type, data: plain(e.data) }));
      const published = fairness.publishedFrom(this.gameId, events);
      if (published && fairness.available()) {
        const steps = await fairness.verifyDeal(published, recorded(this.gameId));
        this.deal = { ok: steps.every((s) => s.status === "ok"), steps };
      }
    }
    if (this.gone) return;
    this.drawChecks();
  }

  // A rated game: each person's rating before and after it, and the change (listGameSteps'
  // `ratings`, as the end of the game showed them).
  drawRatings() {
    if (!this.ratingsBox) return;
    const name = (seat) => this.answer?.view.seats.find((s) => s.seat === seat)?.name ?? `Seat ${seat}`;
    const you = this.answer?.view.you;
    replace(
      this.ratingsBox,
      h("h2", {}, "📈 Ratings"),
      h(
        "ul",
        {},
        this.steps.ratings.map((r) =>
          h(
            "li",
            { dataset: { seat: r.seat } },
            h("b", {}, r.seat === you ? "You" : name(r.seat)),
            ": ",
            r.status === "pending"
              ? h("span", { class: "pending" }, "on its way…")
              : `${r.before} → ${r.after}${r.provisional ? "?" : ""} (${r.change >= 0 ? "+" : ""}${r.change})`
          )
        )
      )
    );
  }

  drawChecks() {
    const deal = this.deal
      ? h(
          "div",
          { class: ["verdict", this.deal.ok ? "ok" : "bad"], dataset: { verdict: this.deal.ok ? "ok" : "failed" } },
          h("b", {}, this.deal.ok ? "✓ A fair deal" : "✗ The deal does not check out"),
          h("ul", {}, this.deal.steps.map((s) => h("li", { class: s.status }, `${s.status === "ok" ? "✓" : s.status === "failed" ? "✗" : "·"} ${s.name}${s.reason ? `: ${s.reason}` : ""}`)))
        )
      : h("div", { class: "verdict" }, this.steps.over ? "⏳ Checking the deal…" : "The deal is checked when the game ends.");
    const chainText = {
      checking: "⏳ Recomputing the hash chain…",
      running: "The hash chain is checked when the game ends (no hash is shown while it runs).",
      unavailable: `The chain could not be checked: ${this.chainReason ?? ""}`,
      done: this.chain?.ok
        ? `✓ The hash chain is whole: ${this.chain.verified} events (swarm/event/v${this.chain.scheme}) recomputed in this browser, head ${short(this.chain.head)}`
        : `✗ The hash chain breaks: ${this.chain?.reason ?? ""}`,
    }[this.chainStatus];
    replace(
      this.checksBox,
      h("h2", {}, "Checks"),
      deal,
      h("div", { class: ["chain", this.chainStatus === "done" && (this.chain.ok ? "ok" : "bad")], dataset: { chain: this.chainStatus === "done" ? (this.chain.ok ? "ok" : "failed") : this.chainStatus } }, chainText),
      (this.stepCheck = h("div", { class: "step-check", role: "status", "aria-live": "polite" }))
    );
    this.drawStepCheck();
  }

  // This step's event held to the chain: the answer's event must be the export's event of the
  // same version (data and hash), and that hash must be one the chain recomputed here.
  drawStepCheck() {
    if (!this.stepCheck || !this.answer) return;
    const a = this.answer;
    const shown = a.event;
    if (!this.exported) {
      replace(this.stepCheck, this.steps.over ? "" : `v${a.version}: no hash while the game runs.`);
      delete this.stepCheck.dataset.check;
      return;
    }
    const row = this.exported.events.find((e) => Number(plain(e.version)) === a.version);
    const link = this.chain?.byVersion.get(a.version);
    let reason = null;
    if (!row) reason = `the export has no event v${a.version}`;
    else if (row.type !== shown.type || !same(plain(row.data), shown.data)) reason = `the answer's ${shown.type} is not the export's event v${a.version}`;
    else if (row.hash !== shown.hash) reason = `the answer's hash ${short(shown.hash)} is not the chain's ${short(row.hash)}`;
    else if (!link?.ok) reason = link?.reason || "the chain breaks here";
    this.stepCheck.dataset.check = reason ? "failed" : "ok";
    replace(
      this.stepCheck,
      reason
        ? h("span", { class: "bad" }, `✗ v${a.version}: ${reason}`)
        : h("span", { class: "ok" }, `🔗 v${a.version} ${short(shown.hash)} ✓ the chain's link, recomputed in this browser`)
    );
  }
}
