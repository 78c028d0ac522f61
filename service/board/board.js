// The reference board: the app shell, the router (#/…), the header and the problem banner.

import { session } from "./api.js";
import { h, replace } from "./dom.js";
import { GameScreen } from "./game.js";
import { myGamesScreen } from "./mygames.js";
import { ReplayScreen } from "./replay.js";
import { accountScreen, identityCard, leaderboardScreen, lobbyScreen, profileScreen, setupScreen, tableScreen } from "./screens.js";

// The screens a link to one game opens, and what a newcomer is told it is.
const SHARED = {
  game: "Someone shared a game with you. Choose a name to watch it (no account needed).",
  replay: "Someone shared a game's replay with you. Choose a name to watch it (no account needed).",
};

class App {
  constructor() {
    sessionStorage.removeItem("swarm.board.boot-retries"); // the modules loaded (boot.js)
    this.main = document.getElementById("main");
    this.header = document.getElementById("identity");
    this.problemBox = document.getElementById("problem");
    this.cleanup = null;
    this.meadowOpen = false;
    window.addEventListener("hashchange", () => this.route());
  }

  go(hash) {
    if (location.hash === hash) this.route();
    else location.hash = hash;
  }

  refreshHeader() {
    const me = session();
    replace(
      this.header,
      me?.token
        ? h("a", { href: "#/profile", class: "me-chip", "aria-label": `Your profile: ${me.name}` }, me.registered ? "👤 " : "🙂 ", me.name, me.registered ? "" : " · guest")
        : h("a", { href: "#/account", class: "me-chip" }, "Log in")
    );
    for (const link of document.querySelectorAll("nav a[data-route]")) {
      const here = (location.hash || "#/").startsWith(link.getAttribute("href")) && (link.getAttribute("href") !== "#/" || ["", "#/", "#"].includes(location.hash));
      if (here) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
  }

  showProblem(problem, { quiet = false } = {}) {
    if (problem?.status === 401) {
      // The token is gone (expired or revoked): forget it so the next action makes a new one.
      localStorage.removeItem("swarm.board.session");
      this.refreshHeader();
    }
    replace(
      this.problemBox,
      h(
        "div",
        { class: ["problem", quiet && "quiet"], role: "alert" },
        h("b", { class: "problem-title" }, problem?.title ?? "Something went wrong"),
        problem?.detail ? h("span", { class: "problem-detail" }, ` ${problem.detail}`) : null,
        h("span", { class: "problem-advice" }, ` ${problem?.advice ?? "Try again."}`),
        h("button", { class: "ghost-btn small", "aria-label": "Dismiss", onclick: () => this.clearProblem() }, "✕")
      )
    );
  }

  clearProblem() {
    replace(this.problemBox);
  }

  async route() {
    this.cleanup?.();
    this.cleanup = null;
    this.clearProblem();
    this.refreshHeader();
    const [, screen, arg, extra] = (location.hash || "#/").split("/");
    document.body.dataset.screen = screen || "setup";
    // A shared link (a game, its Meadow log, its replay) opened by someone who has never been
    // here: every game operation needs an identity, so ask for a name first, then open it.
    if (SHARED[screen] && !session()?.token) {
      replace(this.main, identityCard(this, () => this.route(), { lead: SHARED[screen] }));
      if (!this.main.contains(document.activeElement)) this.main.focus({ preventScroll: true });
      return;
    }
    try {
      switch (screen) {
        case "game": {
          if (extra === "meadow") this.meadowOpen = true; // #/game/<id>/meadow: its log open
          const game = new GameScreen(this, arg);
          this.cleanup = () => game.unmount();
          this.game = game;
          await game.mount(this.main);
          break;
        }
        case "games":
          await myGamesScreen(this, this.main, identityCard);
          break;
        case "replay": {
          const replay = new ReplayScreen(this, arg);
          this.cleanup = () => replay.unmount();
          await replay.mount(this.main);
          break;
        }
        case "lobby":
          this.cleanup = lobbyScreen(this, this.main);
          break;
        case "table":
          this.cleanup = tableScreen(this, this.main, arg);
          break;
        case "account":
          accountScreen(this, this.main);
          break;
        case "profile":
          await profileScreen(this, this.main);
          break;
        case "leaderboard":
          await leaderboardScreen(this, this.main, arg === "xp" || arg === "rating" ? arg : "wins");
          break;
        default:
          setupScreen(this, this.main);
      }
    } catch (problem) {
      if (SHARED[screen] && problem.status === 401) {
        // The identity kept here has expired or was revoked: ask for a name again.
        this.showProblem(problem, { quiet: true });
        replace(this.main, identityCard(this, () => this.route(), { lead: SHARED[screen] }));
        return;
      }
      if (SHARED[screen] && problem.status === 403) {
        // Someone's solo game (theirs alone, ended or not): say so, and where to go instead.
        problem.advice = "A solo game is its player's alone: only they can open it, its replay or its log. Play one of your own from setup, or watch an online game from the lobby.";
      }
      this.showProblem(problem);
      if (screen === "game" && (problem.status === 404 || problem.status === 403)) {
        localStorage.removeItem("swarm.board.place");
      }
    }
    // The screen may have put the keyboard somewhere already (the hand, the result).
    if (!this.main.contains(document.activeElement)) this.main.focus({ preventScroll: true });
  }
}

const app = new App();
// The menu's height, for what lies over the screen below it (the result dialog): it keeps the
// menu usable and never slides under it, whatever the window's width makes the menu's height.
const top = document.querySelector("header.top");
const measure = () => document.documentElement.style.setProperty("--header-h", `${Math.ceil(top.getBoundingClientRect().height)}px`);
new ResizeObserver(measure).observe(top);
measure();
// A menu too wide for its row (a game on a phone) scrolls: its edge fades while more lies past it.
const nav = top.querySelector("nav");
const moreRight = () => nav.classList.toggle("more-right", nav.scrollLeft + nav.clientWidth < nav.scrollWidth - 1);
nav.addEventListener("scroll", moreRight, { passive: true });
new ResizeObserver(moreRight).observe(nav);
window.addEventListener("hashchange", () => requestAnimationFrame(moreRight));
window.swarmBoard = app; // for people poking at it in the console
app.route();
