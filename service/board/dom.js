// A tiny element builder: h("button", {class: "bee", onclick}, "23"). No framework: the board
// redraws a screen from the latest view, as chessground does, and keeps no state in the DOM.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
    } else if (key === "style" && typeof value === "object") {
      Object.assign(el.style, value);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replace(parent, ...children) {
  parent.replaceChildren();
  append(parent, children);
}

export function plural(n, one, many = one + "s") {
  return `${n} ${n === 1 ? one : many}`;
}

export function stingWord(n) {
  return n === 1 ? "1 sting" : `${n} stings`;
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Animation speed, the person's choice kept in this browser: normal, fast (a third of the
// time) or off (no flight: the board jumps to the outcome). `prefers-reduced-motion` caps every
// animation at a blink whatever the setting (the order of the bees is still shown).
const SPEED_KEY = "swarm.board.speed";
export const SPEEDS = [
  ["normal", "Normal"],
  ["fast", "Fast"],
  ["off", "Off"],
];

export function speed() {
  const value = localStorage.getItem(SPEED_KEY);
  return SPEEDS.some(([v]) => v === value) ? value : "normal";
}

export function setSpeed(value) {
  localStorage.setItem(SPEED_KEY, value);
}

export function motionMs(ms) {
  const chosen = speed();
  const scaled = chosen === "off" ? 0 : chosen === "fast" ? Math.round(ms / 3) : ms;
  return matchMedia("(prefers-reduced-motion: reduce)").matches ? Math.min(scaled, 90) : scaled;
}

// The setting as a radio group, for setup and the profile.
export function speedChoice() {
  const now = speed();
  return h(
    "fieldset",
    { class: "speed-choice" },
    h("legend", {}, "Animation speed"),
    SPEEDS.map(([value, label]) =>
      h(
        "label",
        { class: "check" },
        h("input", { type: "radio", name: "speed", value, checked: value === now, onchange: () => setSpeed(value) }),
        ` ${label}`
      )
    ),
    matchMedia("(prefers-reduced-motion: reduce)").matches
      ? h("small", { class: "hint" }, " Your system asks for reduced motion: every animation is a blink.")
      : null
  );
}
