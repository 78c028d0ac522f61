// Follows a game's stream (streamGameEvents) with openapi-fetch, each message typed by the
// document's GameStreamMessage. The one part written by hand is the Server-Sent Events framing
// (`id:`, `event:`, `data:` lines, a blank line ends a message, `:` lines are comments), which
// no OpenAPI generator reads from a document: a text/event-stream body has no schema they use.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type Message = components["schemas"]["GameStreamMessage"];
export interface Followed {
  messages: Message[];
  reconnects: number;
}

async function* frames(body: ReadableStream<Uint8Array>): AsyncGenerator<Map<string, string>> {
  const decoder = new TextDecoder();
  let buffer = "";
  let fields = new Map<string, string>();
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end).replace(/\r$/, "");
      buffer = buffer.slice(end + 1);
      if (line === "") {
        if (fields.has("data")) yield fields;
        fields = new Map();
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        fields.set(name, fields.has(name) && name === "data" ? `${fields.get(name)}\n${value}` : value);
      }
    }
  }
}

// Reads the stream to its end; after `resumeAfter` messages it hangs up once and reconnects
// with Last-Event-ID, as EventSource would, and checks that nothing was lost or repeated.
export async function follow(
  base: string,
  gameId: string,
  token: string,
  { resumeAfter }: { resumeAfter: number },
): Promise<Followed> {
  const api = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${token}` } });
  const messages: Message[] = [];
  let reconnects = 0;
  for (;;) {
    const lastId = messages.at(-1)?.id;
    const { response, error } = await api.GET("/games/{game_id}/stream", {
      params: {
        path: { game_id: gameId },
        header: lastId === undefined ? {} : { "Last-Event-ID": String(lastId) },
      },
      parseAs: "stream",
    });
    if (!response.ok || !response.body) throw new Error(`streamGameEvents: ${JSON.stringify(error)}`);
    let hungUp = false;
    for await (const fields of frames(response.body)) {
      const message: Message = {
        id: Number(fields.get("id")),
        event: fields.get("event") ?? "message",
        data: JSON.parse(fields.get("data") ?? "null"),
      };
      const expected = (messages.at(-1)?.id ?? 0) + 1;
      if (message.id !== expected) throw new Error(`expected version ${expected}, got ${message.id}`);
      messages.push(message);
      if (reconnects === 0 && messages.length === resumeAfter) {
        hungUp = true;
        break; // ends the body's reader: the connection is closed
      }
    }
    if (!hungUp) return { messages, reconnects };
    reconnects += 1;
  }
}
