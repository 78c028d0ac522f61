// Answers as a newer server may send them (a phase, a bee level, an event type and a problem
// code this document does not list), read through the generated types only: no cast, and no
// exception. Reads {view, page, problem} as JSON on stdin, writes what it understood.
import type { components } from "./schema.js";

type GameView = components["schemas"]["GameView"];
type EventPage = components["schemas"]["EventPage"];
type VisibleEvent = components["schemas"]["VisibleEvent"];
type Problem = components["schemas"]["Problem"];

function describe(event: VisibleEvent): string {
  switch (event.type) {
    case "bee_tapped":
      return `seat ${event.data.seat} tapped ${event.data.bee ?? "a hidden bee"}`;
    case "game_ended":
      return `the game ended (${event.data.reason})`;
    case "deal_committed":
      return `deal committed ${event.data.commitment}`;
    default:
      return `an event of type ${event.type}`;
  }
}

function phase(view: GameView): string {
  switch (view.phase) {
    case "picking":
    case "choosing":
    case "ended":
      return `known phase ${view.phase}`;
    default:
      return `unknown phase ${view.phase}`;
  }
}

let input = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) input += chunk;
const { view, page, problem } = JSON.parse(input) as {
  view: GameView;
  page: EventPage;
  problem: Problem;
};
const levels = view.seats.filter((s) => s.kind === "bee").map((s) => s.level ?? "none");
process.stdout.write(
  JSON.stringify({
    phase: phase(view),
    levels,
    events: page.events.map(describe),
    code: problem.code,
  }) + "\n",
);
