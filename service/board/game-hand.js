// The game screen's hand: this person's bees (tap one), the forecast of where the tapped bee
// would land, and CONFIRM. Arrow keys walk the hand; Enter on the tapped bee confirms it.

import { beeCard } from "./bee.js";
import { h, plural, replace, stingWord } from "./dom.js";

export class Hand {
  constructor(screen) {
    this.screen = screen;
  }

  build() {
    this.el = h("section", { class: "hand-area", "aria-label": "Your hand" });
  }

  forecastText(me, locked) {
    const s = this.screen;
    const v = s.shown;
    const forecast = s.currentForecast();
    // Nothing more to pick (the game is over, or this person left): no CONFIRM to offer.
    if (v.phase === "ended" || me.status === "left") {
      const why = me.status === "left" ? "You left this game" : "The game is over";
      return v.hand.length ? `${why}: these bees stay unplayed.` : `${why}: every bee has been played.`;
    }
    if (locked !== null && v.phase === "picking") return `Bee ${locked} is confirmed.`;
    if (forecast) {
      const text = forecast.too_low
        ? `Forecast: bee ${forecast.bee} is too low for every stem; you would choose a stem to take.`
        : forecast.sixth
          ? `Forecast: bee ${forecast.bee} would be the SIXTH BEE on STEM ${forecast.stem}: you'd take ${plural(forecast.takes.length, "bee")}, ${stingWord(forecast.takes_stings)}.`
          : `Forecast: bee ${forecast.bee} would land on STEM ${forecast.stem}.`;
      // Its caveat in a span of its own: a short phone keeps it for screen readers only.
      return [text, h("span", { class: "caveat" }, " Lower bees fly first and can change that.")];
    }
    if (v.phase === "picking") return "Tap a bee to see where it would land.";
    if (v.phase === "choosing") {
      return v.choice?.yours ? `Bee ${v.choice.bee} waits for the stem you TAKE.` : "Waiting for a stem to be taken.";
    }
    return "";
  }

  draw() {
    const s = this.screen;
    const v = s.shown;
    const me = v.seats.find((seat) => seat.seat === v.you);
    if (!me) {
      replace(this.el);
      return;
    }
    const selected = s.tapping ?? v.tapped;
    const locked = v.confirmed ?? s.confirming ?? null;
    const can = s.canPick() && locked === null;
    const active = document.activeElement;
    const focused = this.el.contains(active) ? (active.classList.contains("confirm") ? "confirm" : active.dataset.bee) : null;
    const lost = !active || active === document.body || active === s.app.main;
    const done = v.phase === "ended" || me.status === "left";
    replace(
      this.el,
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
              onclick: () => s.tap(bee),
              onkeydown: (e) => this.keys(e),
            })
          )
        ),
        h(
          "div",
          { class: "hand-actions" },
          h("p", { class: "forecast-text", "aria-live": "polite" }, this.forecastText(me, locked)),
          done
            ? null
            : h(
                "button",
                {
                  class: "confirm",
                  disabled: !can || selected === null || selected === undefined,
                  onclick: () => s.confirm(),
                },
                "CONFIRM"
              )
        )
      )
    );
    // Redrawing must not lose a keyboard user's place: refocus the same bee (or CONFIRM), or
    // the lowest bee once a new turn lets them pick again.
    const target =
      (focused && this.el.querySelector(focused === "confirm" ? "button.confirm" : `[data-bee="${focused}"]`)) ||
      (lost && can ? this.el.querySelector("button.bee") : null);
    if (target && !target.disabled) target.focus({ preventScroll: true });
  }

  keys(event) {
    const s = this.screen;
    const buttons = [...this.el.querySelectorAll("button.bee")];
    const i = buttons.indexOf(event.currentTarget);
    // Enter on the tapped bee confirms it: a turn is Enter (tap), Enter (CONFIRM).
    if (event.key === "Enter" && Number(event.currentTarget.dataset.bee) === (s.tapping ?? s.shown.tapped)) {
      event.preventDefault();
      event.stopPropagation();
      s.confirm();
      return;
    }
    if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      event.preventDefault();
      const next = buttons[(i + (event.key === "ArrowRight" ? 1 : buttons.length - 1)) % buttons.length];
      next?.focus();
    }
  }
}
