// A bee card (its number and its stings) and its flight across the board.

import { h, motionMs, sleep, stingWord } from "./dom.js";

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

// A copy of the card flies from `from` (a revealed pick) to `to` (a stem's slot) and is gone;
// with animation off, or either end not drawn, the bee is simply there.
export async function flyBee(from, to, { bee, stings }) {
  const ms = motionMs(480);
  if (!from || !to || ms === 0) return;
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
