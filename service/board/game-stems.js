// The game screen's board: every seat's stings down the side, the four stems in the middle and
// the picks revealed beside them. Each draws from the screen's model (what the animation has
// reached), never from a rule of its own: a stem's capacity is the view's.

import { beeCard } from "./bee.js";
import { h, plural, replace, stingWord } from "./dom.js";

// Stings always come from the service (views and log entries carry them beside every bee).
const sum = (entries) => entries.reduce((total, e) => total + e.stings, 0);

export class Scores {
  constructor(screen) {
    this.screen = screen;
  }

  build() {
    this.el = h("aside", { class: "scores", "aria-label": "Stings of every player" });
  }

  draw() {
    const s = this.screen;
    const v = s.shown;
    const model = s.model;
    const winners = v.result?.winners ?? [];
    const status = {
      picking: "picking…",
      tapped: "tapped",
      confirmed: "✓ confirmed",
      waiting: "waiting",
      left: "left",
    };
    replace(
      this.el,
      h("h2", { class: "sr-title" }, "Stings"),
      h(
        "ol",
        {},
        v.seats.map((seat) =>
          h(
            "li",
            {
              class: ["seat", seat.seat === v.you && "me", seat.status === "left" && "left", winners.includes(seat.seat) && "winner"],
              dataset: { seat: seat.seat },
              "aria-label": `${seat.seat === v.you ? "You" : seat.name}${seat.kind === "bee" ? " (bee player)" : ""}: ${stingWord(model.stings[seat.seat] ?? seat.stings)}, ${status[this.statusOf(seat)]}${winners.includes(seat.seat) ? ", winner" : ""}`,
            },
            h("span", { class: "who" }, seat.kind === "bee" ? "🐝 " : "", seat.seat === v.you ? `You` : seat.name),
            h("span", { class: "mark", "aria-hidden": "true" }, this.statusOf(seat) === "confirmed" ? "✓" : ""),
            h("span", { class: "count" }, h("b", {}, String(model.stings[seat.seat] ?? seat.stings)), " ▼"),
            h("span", { class: "state" }, winners.includes(seat.seat) ? "🏆 winner" : v.phase === "ended" ? "" : status[this.statusOf(seat)])
          )
        )
      )
    );
  }

  // A seat's status as drawn: this person's own confirm shows before the service's answer.
  statusOf(seat) {
    const s = this.screen;
    if (seat.seat === s.shown.you && s.confirming !== null && s.confirming !== undefined && seat.status === "tapped") return "confirmed";
    if (seat.seat === s.shown.you && s.tapping !== null && s.tapping !== undefined && seat.status === "picking") return "tapped";
    return seat.status;
  }
}

export class Stems {
  constructor(screen) {
    this.screen = screen;
  }

  build() {
    this.el = h("section", { class: "stems", "aria-label": "The four stems" });
  }

  // Where a bee landing on a stem goes: its slot (the last one for the sixth bee).
  slot(stemNumber, slotIndex) {
    const row = this.el.querySelector(`.stem[data-stem="${stemNumber}"]`);
    return row?.querySelectorAll(".slot")[Math.min(slotIndex, this.screen.capacity(stemNumber))];
  }

  // The cheapest stem's TAKE takes the keyboard when this person chooses.
  focusTake() {
    const v = this.screen.shown;
    if (v.phase === "choosing" && v.choice?.yours) {
      this.el.querySelector(`.stem[data-stem="${v.choice.cheapest}"] button.take`)?.focus({ preventScroll: true });
    }
  }

  draw(opts = {}) {
    const s = this.screen;
    const v = s.shown;
    const choosing = v.phase === "choosing" && !s.flying ? v.choice : null;
    const forecast = s.currentForecast();
    replace(
      this.el,
      s.model.stems.map((bees, i) => {
        const number = i + 1;
        const capacity = s.capacity(number);
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
                  disabled: s.taking !== undefined && s.taking !== null,
                  onclick: () => s.take(number),
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
}

export class Reveal {
  constructor(screen) {
    this.screen = screen;
  }

  build() {
    this.el = h("section", { class: "reveal", "aria-label": "Picks, low to high", "aria-live": "polite" });
  }

  // A revealed pick's card: where its bee flies from.
  card(seat, bee) {
    return this.el.querySelector(`[data-pick="${seat}:${bee}"]`);
  }

  draw(fresh) {
    const s = this.screen;
    const picks = s.model.reveal ?? [];
    const v = s.shown;
    const past = !fresh && v.phase === "picking" && picks.every((p) => s.model.landed.has(`${p.seat}:${p.bee}`));
    if (!picks.length) {
      replace(this.el, h("p", { class: "hint" }, "Picks are revealed here, low → high, when everyone is in."));
      return;
    }
    replace(
      this.el,
      h("span", { class: "reveal-title" }, past ? "Last turn" : "Revealed"),
      h(
        "ol",
        { class: ["picks", past && "past"] },
        picks.map((p) =>
          h(
            "li",
            {
              class: ["pick", s.model.landed.has(`${p.seat}:${p.bee}`) && "landed", p.seat === v.you && "mine"],
              dataset: { pick: `${p.seat}:${p.bee}` },
            },
            beeCard(p.bee, p.stings, { label: `${s.who(p.seat)}: bee ${p.bee}, ${stingWord(p.stings)}` }),
            h("span", { class: "by" }, s.who(p.seat))
          )
        )
      )
    );
  }
}
