// The game screen's result: who won and why, the standings, what the game paid, whether the
// deal checked out, and what to do next (Play again, the replay, back). It can be closed to
// study the board and opened again from the game bar.

import { api, savePlace, session } from "./api.js";
import { h, replace, sleep, stingWord } from "./dom.js";

export class Result {
  constructor(screen) {
    this.screen = screen;
    this.closed = false;
  }

  build() {
    this.el = h("div", { class: "result-slot" });
  }

  draw() {
    const a = document.activeElement;
    const hadFocus = this.el.contains(a) || !a || a === document.body || a === this.screen.app.main;
    this.drawBody();
    if (hadFocus) this.focus();
  }

  drawBody() {
    const s = this.screen;
    const v = s.shown;
    if (v.phase !== "ended" || !v.result) {
      replace(this.el);
      return;
    }
    const r = v.result;
    if (this.closed) {
      replace(this.el);
      return;
    }
    const headline = this.headline();
    // Bee players still seated when the last person stands alone: they don't win (seed §9).
    const beesStay = v.seats.some((seat) => seat.kind === "bee" && seat.status !== "left");
    const reason = {
      finished: `After ${v.turns} turns, the fewest stings wins.`,
      last_person_standing: beesStay
        ? "Every other person left the table: the last person standing wins at once, whatever the stings. Bee players don't keep a game going, and don't win it."
        : "Everyone else left the table: the last person standing wins at once.",
      abandoned: v.seats.some((seat) => seat.kind === "person" && seat.status !== "left")
        ? `Abandoned: ${v.idle_turns_to_end} turns in a row passed with nobody picking. Every buy-in goes back.`
        : "Abandoned: everyone left, so nobody wins. Every buy-in goes back.",
    }[r.reason];
    // The winners first, then the fewest stings; a seat that left last, as its stings no longer
    // count (seed §9): a bee with fewer stings never reads above the last person standing.
    const won = (seat) => (r.winners.includes(seat.seat) ? 0 : 1);
    const gone = (seat) => (seat.status === "left" ? 1 : 0);
    const many = v.seats.length > 4;
    const standings = [...v.seats].sort((a, b) => won(a) - won(b) || gone(a) - gone(b) || r.stings[a.seat - 1] - r.stings[b.seat - 1]);
    const verdict = s.meadow.verdict;
    const verdictText =
      verdict?.status === "ok"
        ? "✔ Fair deal: checked in your browser"
        : verdict?.status === "failed"
          ? "✘ The deal does not check out"
          : verdict?.status === "checking" || !verdict
            ? "⏳ Checking the deal…"
            : "⚠ The deal could not be checked";
    replace(
      this.el,
      h(
        "section",
        { class: "result", role: "dialog", "aria-modal": "false", "aria-labelledby": "result-title" },
        h(
          "button",
          { class: "ghost-btn small close-result", "aria-label": "Close the result to study the board", onclick: () => this.close() },
          "✕"
        ),
        h("h2", { id: "result-title", tabindex: "-1" }, headline),
        h("p", { class: "reason" }, reason),
        // The head and the actions stay put; what lies between scrolls when the window is short.
        h(
          "div",
          { class: "result-body" },
          this.paidLines(),
          h(
            "ol",
            // More than 4 seats: two columns, so the result fits the window with the board's others.
            { class: ["standings", many && "many"] },
            standings.map((seat) =>
              h(
                "li",
                { class: [r.winners.includes(seat.seat) && "winner", seat.seat === v.you && "me", seat.status === "left" && "left"] },
                h("span", { class: "who" }, seat.kind === "bee" ? "🐝 " : "", seat.seat === v.you ? "You" : seat.name),
                h(
                  "span",
                  { class: "count" },
                  many
                    ? [String(r.stings[seat.seat - 1]), h("span", { "aria-hidden": "true" }, " ▼"), h("span", { class: "sr-only" }, " stings")]
                    : stingWord(r.stings[seat.seat - 1])
                ),
                h(
                  "span",
                  { class: "tag" },
                  r.winners.includes(seat.seat)
                    ? many
                      ? [h("span", { "aria-hidden": "true" }, "🏆"), h("span", { class: "sr-only" }, " winner")]
                      : "🏆 winner"
                    : seat.status === "left"
                      ? "left"
                      : ""
                )
              )
            )
          ),
          s.watchedLive
            ? h("p", { class: "following" }, "👀 If the table plays again, you follow it to the next game.")
            : null,
          h(
            "p",
            { class: ["verdict-line", verdict && `verdict-${verdict.status}`] },
            verdictText,
            " · ",
            h("button", { class: "link", onclick: () => { if (!s.app.meadowOpen) s.meadowPanel.toggle(); } }, "open the ⏱ Meadow log")
          )
        ),
        h(
          "div",
          { class: "result-actions" },
          this.canPlayAgain()
            ? h("button", { class: "primary play-again", onclick: () => s.playAgain() }, s.table?.stake ? "Play again (no buy-in)" : "Play again")
            : null,
          h("a", { class: "button secondary replay-link", href: `#/replay/${s.gameId}` }, "▶ Replay"),
          s.mode === "solo"
            ? h("button", { class: "secondary", onclick: () => { savePlace(null); s.app.go("#/"); } }, "Back to setup")
            : h("button", { class: "secondary", onclick: () => s.leaveToLobby() }, "Back to the lobby")
        )
      )
    );
  }

  // The result in one line: who won, or that nobody did.
  headline() {
    const s = this.screen;
    const v = s.shown;
    const r = v.result;
    const mine = r.winners.includes(v.you);
    const others = r.winners.filter((seat) => seat !== v.you).map((seat) => s.who(seat));
    if (!r.winners.length) return r.reason === "abandoned" ? "Nobody won: the game was abandoned." : "Nobody won.";
    if (mine) return others.length ? `You share the win with ${others.join(" and ")}!` : "You won!";
    return `${others.join(" and ")} ${others.length > 1 ? "share the win" : "won"}.`;
  }

  // What the game paid, as the service says it: the pot seat by seat (public) and, for a person
  // with an account, their own reward. A reward still on its way through the table's outbox is
  // `pending`: ask again until it has arrived. Then the balance, for the line under it.
  async learnPaid() {
    const s = this.screen;
    if (s.mode !== "online") return;
    let view = s.view;
    const waiting = (v) => v?.reward?.status === "pending" || v?.ratings?.some((r) => r.status === "pending");
    for (let i = 0; waiting(view) && i < 40 && !s.gone; i++) {
      await sleep(i < 5 ? 400 : 1000);
      view = await api.getGame(s.gameId).catch(() => view);
    }
    if (s.gone) return;
    this.paid = { pot: view?.pot ?? null, reward: view?.reward ?? null, ratings: view?.ratings ?? null };
    if (this.paid.reward?.status === "delivered" || this.paid.pot?.seats.some((seat) => seat.seat === s.shown.you)) {
      this.balance = (await api.me().catch(() => null))?.coins.balance;
    }
    this.draw();
  }

  paidLines() {
    const s = this.screen;
    if (s.mode !== "online") return null;
    const v = s.shown;
    const { pot, reward } = this.paid ?? { pot: v.pot ?? null, reward: v.reward ?? null };
    const me = v.seats.find((seat) => seat.seat === v.you);
    const lines = [];
    if (pot) {
      const mine = pot.seats.find((seat) => seat.seat === v.you);
      const paid = pot.seats.filter((seat) => seat.paid > 0);
      if (mine && pot.reason === "refund") lines.push(`💰 Your ${mine.buy_in} buy-in is back.`);
      else if (mine && mine.paid > 0) {
        lines.push(paid.length > 1 ? `💰 +${mine.paid} coins: your share of the ${pot.coins}-coin pot, split ${paid.length} ways` : `💰 +${mine.paid} coins: the whole pot`);
      } else if (mine) lines.push(`💰 Your ${mine.buy_in} buy-in stayed in the pot.`);
      else if (pot.reason === "refund") lines.push(`💰 The ${pot.coins}-coin pot went back: every buy-in was returned.`);
      else lines.push(`💰 The ${pot.coins}-coin pot: ${paid.map((seat) => `${s.who(seat.seat)} took ${seat.paid}`).join(", ")}.`);
    }
    if (reward?.status === "pending") {
      lines.push(h("span", { class: "pending" }, "⏳ Your reward is on its way…"));
      lines.push(`⭐ +${reward.xp} XP`);
    } else if (reward) {
      const cap = reward.daily_cap;
      lines.push(
        !reward.capped
          ? `💰 +${reward.coins} reward coins`
          : reward.coins > 0
            ? `💰 +${reward.coins} of ${reward.coins_earned} reward coins: today's cap of ${cap} reward coins is reached`
            : `💰 No reward coins: today's cap of ${cap} reward coins was already reached`
      );
      lines.push(`⭐ +${reward.xp} XP`);
      for (const b of reward.badges) lines.push([`🏅 New badge: ${b.name.replaceAll("_", " ")} `, h("small", {}, `· ${b.description}`)]);
    } else if (me) {
      lines.push(
        me.status === "left"
          ? "You left this game: it earns you nothing."
          : v.result.reason === "abandoned"
            ? "An abandoned game earns no coins or XP."
            : !session()?.registered
              ? "Guests earn no coins or XP: register to keep them."
              : "This game earned you nothing."
      );
    }
    // A rated game: each person's rating change, seat by seat (public, like the pot).
    const ratings = this.paid?.ratings ?? v.ratings ?? null;
    for (const r of ratings ?? []) {
      const who = r.seat === v.you ? "Your rating" : `${s.who(r.seat)}'s rating`;
      lines.push(
        r.status === "pending"
          ? h("span", { class: "pending" }, `📈 ${who}: on its way…`)
          : `📈 ${who}: ${r.change >= 0 ? "+" : ""}${r.change} → ${r.after}${r.provisional ? "?" : ""}`
      );
    }
    if (!lines.length) return null;
    if (this.balance !== undefined && this.balance !== null && reward?.status !== "pending") lines.push(`Balance: 💰 ${this.balance}`);
    return h(
      "ul",
      { class: "paid", "aria-label": me ? "What the game paid you" : "What the game paid" },
      lines.map((line) => h("li", {}, line))
    );
  }

  // Play again works for someone still seated at an open table, with a second person online
  // (seed §9: bee players don't keep a game going).
  canPlayAgain() {
    const s = this.screen;
    const v = s.shown;
    const me = v.seats.find((seat) => seat.seat === v.you);
    if (!me || me.status === "left") return false;
    const t = s.table;
    if (!t) return s.mode === "solo";
    if (s.tableBeforeEnd) return false;
    if (t.status === "closed" || t.you === null || t.you === undefined) return false;
    if (t.mode === "online" && t.seats.filter((seat) => seat.kind === "person").length < 2) return false;
    return true;
  }

  close() {
    this.closed = true;
    this.draw();
    this.screen.bar.draw();
    this.screen.bar.el.querySelector("button.show-result")?.focus();
  }

  open() {
    this.closed = false;
    this.draw();
    this.screen.bar.draw();
    this.focus();
  }

  // The result takes the keyboard: its first action (Play again, or going back).
  focus() {
    const target = this.el.querySelector(".result-actions button") ?? this.el.querySelector("#result-title");
    target?.focus({ preventScroll: true });
  }
}
