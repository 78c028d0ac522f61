// The ⏱ Meadow log: every event of the game as the API shows it to this player (redacted as
// the API redacts it), and after the end the deal checked here, in the browser, against the
// commitment and fingerprint this browser recorded when they were first shown.

import { api } from "./api.js";
import { h, plural, replace, stingWord } from "./dom.js";
import { available, publishedFrom, verifyDeal, verifyExportChain } from "./fairness.js";

const KEY = (gameId) => `swarm.meadow.${gameId}`;

export function recorded(gameId) {
  try {
    return JSON.parse(localStorage.getItem(KEY(gameId)) ?? "{}");
  } catch {
    return {};
  }
}

// Keeps the first value ever seen for each field: a later, different value must not replace
// it, or a server could rewrite history and have the board agree.
export function remember(gameId, fields) {
  const now = recorded(gameId);
  let changed = false;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === null || key in now) continue;
    now[key] = value;
    changed = true;
  }
  if (changed) localStorage.setItem(KEY(gameId), JSON.stringify(now));
  return now;
}

const short = (hex) => (hex ? `${hex.slice(0, 12)}…` : "none");

export class MeadowLog {
  constructor(gameId, { you, nameOf, record = true }) {
    this.gameId = gameId;
    this.record = record; // false for a game first opened after its end: nothing was shown before
    this.you = you;
    this.nameOf = nameOf;
    this.events = [];
    this.verdict = null;
    this.root = h("section", { class: "meadow", "aria-label": "Meadow log" });
    this.verdictBox = h("div", { class: "verdict", role: "status", "aria-live": "polite" });
    this.list = h("ol", { class: "log", "aria-label": "Every event of the game" });
    replace(
      this.root,
      h("h2", {}, "⏱ Meadow log"),
      h("a", { class: "replay-link", href: `#/replay/${gameId}` }, "▶ Replay the game step by step"),
      h(
        "p",
        { class: "hint" },
        "Every event as it happens. Other seats' hands and unrevealed picks stay hidden until the end; then the deal is published and checked here, in your browser."
      ),
      this.verdictBox,
      this.list
    );
    this.renderVerdict();
  }

  who(seat) {
    return seat === this.you ? "You" : this.nameOf(seat) ?? `Seat ${seat}`;
  }

  add(events) {
    let noted = false;
    for (const event of events) {
      this.events.push(event);
      const d = event.data;
      if (!this.record) {
        // Opened after the end: no value here was shown before turn 1.
      } else if (event.type === "deal_committed") {
        noted = true;
        remember(this.gameId, { commitment: d.commitment, commitment_seen: event.recorded_at });
      } else if (event.type === "game_started") {
        noted = true;
        const mine = this.you ? d.hands?.[this.you - 1] : null;
        remember(this.gameId, {
          fingerprint: d.proof?.fingerprint,
          fingerprint_seen: new Date().toISOString(),
          seat: this.you ?? undefined,
          hand: mine ?? undefined,
        });
      }
      this.list.append(this.entry(event)); // oldest first: the game reads in order
    }
    // The recorded commitment and fingerprint show as soon as they are stored.
    if (noted && (!this.verdict || this.verdict.status !== "checking")) this.renderVerdict();
  }

  entry(event) {
    const time = new Date(event.recorded_at).toLocaleTimeString();
    return h(
      "li",
      { class: `ev ev-${event.type}`, dataset: { version: event.version, type: event.type } },
      h("span", { class: "ev-v" }, `#${event.version}`),
      h("span", { class: "ev-t" }, time),
      h("span", { class: "ev-text" }, this.describe(event)),
      h(
        "details",
        {},
        h("summary", {}, event.type),
        h("pre", {}, JSON.stringify(event.data, null, 1))
      )
    );
  }

  describe({ type, data: d, taken_stings: takenStings = [] }) {
    const took = takenStings.reduce((a, b) => a + b, 0); // the log entry carries each bee's stings
    const bee = (b) => (b === null || b === undefined ? "a hidden bee" : `bee ${b}`);
    switch (type) {
      case "deal_committed":
        return `The server committed to its secret seed: ${short(d.commitment)}`;
      case "game_started": {
        const given = (d.proof?.client_seeds ?? []).filter((s) => s !== null).length;
        return `Dealt to ${plural(d.seats.length, "seat")}; ${plural(given, "seed")} given; fingerprint ${short(d.proof?.fingerprint)}`;
      }
      case "turn_started":
        return `Turn ${d.turn} begins${d.deadline ? " (clock running)" : ""}`;
      case "bee_tapped":
        return `${this.who(d.seat)} tapped ${bee(d.bee)}`;
      case "pick_confirmed":
        if (d.by_clock === "tapped") return `The clock ran out: ${this.who(d.seat)} — ${bee(d.bee)} (tapped) flies`;
        if (d.by_clock === "lowest") return `The clock ran out: ${this.who(d.seat)} — lowest ${bee(d.bee)} flies`;
        return `${this.who(d.seat)} confirmed ${bee(d.bee)}`;
      case "picks_revealed":
        return `Picks revealed, low → high: ${d.picks.map((p) => `${p.bee} (${this.who(p.seat)})`).join(", ")}`;
      case "bee_landed":
        return d.taken.length
          ? `${d.bee} (${this.who(d.seat)}) was the SIXTH BEE on STEM ${d.stem}: took ${plural(d.taken.length, "bee")}, ${stingWord(took)}`
          : `${d.bee} (${this.who(d.seat)}) landed on STEM ${d.stem}`;
      case "stem_choice_required":
        return `${d.bee} (${this.who(d.seat)}) is too low for every stem: a stem must be taken`;
      case "stem_taken": {
        const by = { player: "chosen", rule: "the cheapest, by the rule", clock: "the cheapest, by the clock" }[d.chosen_by] ?? d.chosen_by;
        return `${this.who(d.seat)} took STEM ${d.stem} with ${d.bee} (${plural(d.taken.length, "bee")}, ${stingWord(took)}; ${by})`;
      }
      case "seat_left":
        return `${this.who(d.seat)} left the table`;
      case "game_ended":
        return `The game ended (${d.reason.replaceAll("_", " ")}): ${d.winners.map((s) => this.who(s)).join(" and ")} ${d.winners.length > 1 ? "share the win" : "won"}`;
      case "deal_revealed":
        return `The deal is published: server seed ${short(d.server_seed)}`;
      default:
        return type;
    }
  }

  // After the end: fetch the whole, now unredacted log and check the deal in this browser.
  async verify() {
    if (!available()) {
      this.verdict = { status: "unavailable" };
      this.renderVerdict();
      return this.verdict;
    }
    this.verdict = { status: "checking" };
    this.renderVerdict();
    const events = [];
    try {
      for (let after = 0; ; ) {
        const page = await api.listGameEvents(this.gameId, after, 1000);
        events.push(...page.events);
        if (page.events.length < 1000) break;
        after = page.events[page.events.length - 1].version;
      }
    } catch (problem) {
      this.verdict = { status: "error", reason: `${problem.title}. ${problem.advice}` };
      this.renderVerdict();
      return this.verdict;
    }
    const published = publishedFrom(this.gameId, events);
    if (!published) {
      this.verdict = { status: "failed", steps: [], reason: "The log has no published deal to check." };
    } else {
      const steps = await verifyDeal(published, recorded(this.gameId));
      const chain = await this.verifyChain();
      const ok = steps.every((s) => s.status === "ok") && chain.status === "ok";
      const seeded = published.clientSeeds.some((s) => s !== null);
      this.verdict = { status: ok ? "ok" : "failed", steps, seeded, chain };
    }
    this.renderVerdict();
    return this.verdict;
  }

  // The hash chain (docs/fairness.md), recomputed here from the export: under v2 the seal key
  // comes from the server seed the game published at its end.
  async verifyChain() {
    try {
      const { ok, game, table } = await verifyExportChain(await api.exportGameText(this.gameId));
      const failed = !game.ok ? game : table && !table.ok ? table : null;
      const where = failed === game ? "event" : "table event";
      return ok
        ? { status: "ok", detail: `${game.verified} events chained (swarm/event/v${game.scheme}), head ${game.head.slice(0, 16)}…` }
        : { status: "failed", detail: `${where} v${failed.failedVersion}: ${failed.reason}` };
    } catch (error) {
      return { status: "failed", detail: error.title ?? String(error.message ?? error) };
    }
  }

  renderVerdict() {
    const v = this.verdict;
    const box = this.verdictBox;
    box.className = `verdict verdict-${v?.status ?? "pending"}`;
    box.dataset.status = v?.status ?? "pending";
    const rec = recorded(this.gameId);
    const lines = h(
      "dl",
      { class: "recorded" },
      h("dt", {}, "Commitment, first shown"),
      h("dd", { class: "hex" }, rec.commitment ?? (this.record ? "not yet" : "not seen by this browser")),
      h("dt", {}, "Fingerprint, before turn 1"),
      h("dd", { class: "hex" }, rec.fingerprint ?? (this.record ? "not yet" : "not seen by this browser")),
      rec.seed ? h("dt", {}, "Your seed") : null,
      rec.seed ? h("dd", { class: "hex" }, rec.seed) : null
    );
    if (!v) {
      replace(box, h("p", { class: "verdict-title" }, "⏳ The deal is checked when the game ends."), lines);
      return;
    }
    if (v.status === "checking") {
      replace(box, h("p", { class: "verdict-title" }, "⏳ Checking the deal…"), lines);
      return;
    }
    if (v.status === "unavailable") {
      replace(
        box,
        h("p", { class: "verdict-title" }, "⚠ Not checked: this browser offers WebCrypto only on https or localhost."),
        lines
      );
      return;
    }
    if (v.status === "error") {
      replace(box, h("p", { class: "verdict-title" }, `⚠ Not checked: ${v.reason}`), lines);
      return;
    }
    const chainOnly = v.status !== "ok" && v.chain?.status === "failed" && (v.steps ?? []).every((s) => s.status === "ok");
    const title =
      v.status === "ok"
        ? "✔ Fair deal: checked in your browser"
        : chainOnly
        ? "✘ The log does not check out at “chain”"
        : `✘ The deal does not check out${v.steps?.find((s) => s.status === "failed") ? ` at “${v.steps.find((s) => s.status === "failed").name}”` : ""}`;
    replace(
      box,
      h("p", { class: "verdict-title" }, title),
      v.reason ? h("p", {}, v.reason) : null,
      v.status === "ok"
        ? h(
            "p",
            { class: "hint" },
            v.seeded
              ? "The server was bound to its seed before any seed was given, and the deal played is the one locked in before turn 1."
              : "Nobody gave a seed to this game, so it proves the deal was fixed before turn 1 and not changed, not that the server could not choose it."
          )
        : null,
      v.status === "ok" && !rec.fingerprint
        ? h(
            "p",
            { class: "hint stranger" },
            "This browser did not see this game before it ended, so the deal is checked against the published log alone, not against a fingerprint recorded before turn 1."
          )
        : null,
      v.chain
        ? h(
            "p",
            { class: `chain-line chain-${v.chain.status}`, dataset: { status: v.chain.status } },
            v.chain.status === "ok" ? "✔ Hash chain: " : "✘ Hash chain: ",
            v.chain.detail
          )
        : null,
      h(
        "ol",
        { class: "steps" },
        (v.steps ?? []).map((s) =>
          h(
            "li",
            { class: `step step-${s.status}`, dataset: { step: s.name, status: s.status } },
            h("span", { class: "mark" }, s.status === "ok" ? "✔ ok" : s.status === "failed" ? "✘ failed" : "– skipped"),
            h("b", {}, ` ${s.name}: `),
            s.what,
            s.reason ? h("div", { class: "reason" }, s.reason) : null
          )
        )
      ),
      lines
    );
  }
}
