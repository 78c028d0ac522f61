// The game screen's banner: what is happening now, in words (whose turn, what to do, who is
// waiting), and the notices of this turn and the last (the clock chose, someone left).

import { h, plural, replace, stingWord } from "./dom.js";

export class Banner {
  constructor(screen) {
    this.screen = screen;
    this.notices = [];
  }

  build() {
    this.el = h("div", { class: "banner", role: "status", "aria-live": "polite" });
  }

  notice(text) {
    this.notices.push({ turn: this.screen.shown.turn, text });
  }

  clearNotices() {
    this.notices = [];
  }

  // Words that hold while the bees fly (the next view's words come once they have landed).
  set(text) {
    this.override = text;
    this.draw();
  }

  draw() {
    const s = this.screen;
    const v = s.shown;
    if (!s.flying) this.override = null;
    let main;
    const me = v.seats.find((seat) => seat.seat === v.you);
    if (this.override) {
      main = this.override;
    } else if (v.phase === "ended") {
      main = v.result ? `Game over: ${s.result.headline()}` : "The game is over.";
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
        : `${s.who(c.seat)}'s bee ${c.bee} is too low: ${s.who(c.seat)} is choosing a stem to take (STEM ${c.cheapest} is the cheapest).`;
    } else if (v.confirmed !== null) {
      const waiting = v.seats.filter((seat) => seat.status === "picking" || seat.status === "tapped").map((seat) => s.who(seat.seat));
      main = `You confirmed bee ${v.confirmed}.${waiting.length ? ` Waiting for ${waiting.join(", ")}.` : ""}`;
    } else {
      main = v.tapped === null && s.tapping === null ? "Tap a bee in your hand, then CONFIRM." : "Tap another bee to change it, or CONFIRM. A confirmed pick is final.";
    }
    if (s.thinking) main = h("span", { class: "thinking" }, "The bees are thinking…");
    replace(
      this.el,
      h("div", { class: "banner-main" }, main),
      // This turn's and the last turn's notices, oldest first, each saying its turn.
      this.notices
        .filter((n) => n.turn >= v.turn - 1)
        .slice(-2)
        .map((n) => h("div", { class: "notice", role: "alert" }, `Turn ${n.turn} · ${n.text}`))
    );
  }
}
