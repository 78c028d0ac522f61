// The whole game of one seat against the expert bee (analyseGame), for the replay screen: one
// bar a turn, as tall as the stings the seat's pick cost against the expert's, the costliest
// turns marked; a turn's bar shows that turn. Drawn from the API's answer alone.

import { h } from "./dom.js";

const stings = (n) => `${n.toFixed(2)} ${n === 1 ? "sting" : "stings"}`;

// `review`: analyseGame's answer; `name`: the seat's name; `goTo(turn)`: show that turn.
export function reviewBox(review, name, goTo) {
  const worst = new Set(review.worst);
  const most = Math.max(1, ...review.turns.map((t) => t.cost ?? 0));
  const said =
    review.worst.length === 0
      ? `${name}'s picks cost nothing against the expert bee's.`
      : `${name}'s picks cost ${stings(review.cost)} in all against the expert bee's, most at turn${review.worst.length > 1 ? "s" : ""} ${review.worst.join(", ")}.`;
  return h(
    "div",
    { class: "review", dataset: { seat: review.seat, cost: review.cost } },
    h("p", { class: "review-sum" }, said),
    h(
      "ol",
      { class: "review-turns", "aria-label": "What each turn's pick cost" },
      review.turns.map((t) => {
        const what =
          t.cost == null
            ? `Turn ${t.turn}: ${name} had left`
            : t.cost === 0
              ? `Turn ${t.turn}: ${name} played ${t.played}, as good as the bee's ${t.pick}`
              : `Turn ${t.turn}: ${name} played ${t.played} (${t.played_stings.toFixed(2)} stings to the end, est.), the bee ${t.pick} (${t.pick_stings.toFixed(2)}): it cost ${stings(t.cost)}`;
        const bar = h("span", { class: "review-bar", style: { height: `${Math.round((100 * (t.cost ?? 0)) / most)}%` } });
        return h(
          "li",
          { class: ["review-turn", worst.has(t.turn) && "worst"], dataset: { turn: t.turn, cost: t.cost ?? "" } },
          h("button", { type: "button", title: what, "aria-label": what, onclick: () => goTo(t.turn) }, bar, h("span", { class: "review-n" }, String(t.turn)))
        );
      })
    ),
    h("p", { class: "hint" }, "Each bar: the stings a turn's pick cost against the expert bee's (est.). Press one to see that turn.")
  );
}
