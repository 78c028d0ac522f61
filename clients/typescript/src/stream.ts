// Follows a game's stream (streamGameEvents) and reads a table's (streamTableEvents) as NDJSON
// (`Accept: application/x-ndjson`) with openapi-fetch: each line is one message, typed by the
// document's GameStreamMessage or TableStreamMessage. Nothing is parsed by hand: a line split
// and JSON.parse (an empty line is a heartbeat).
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type Message = components["schemas"]["GameStreamMessage"];
export type TableMessage = components["schemas"]["TableStreamMessage"];
export interface Followed {
  messages: Message[];
  reconnects: number;
}

const NDJSON = { Accept: "application/x-ndjson" };

async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const line of parts) if (line !== "") yield line;
  }
}

// Reads the stream to its end; after `resumeAfter` messages it hangs up once and reconnects
// with Last-Event-ID, and checks that nothing was lost or repeated.
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
      headers: NDJSON,
      parseAs: "stream",
    });
    if (!response.ok || !response.body) throw new Error(`streamGameEvents: ${JSON.stringify(error)}`);
    if (!response.headers.get("content-type")?.startsWith("application/x-ndjson")) {
      throw new Error(`streamGameEvents answered ${response.headers.get("content-type")}`);
    }
    let hungUp = false;
    for await (const line of lines(response.body)) {
      const message = JSON.parse(line) as Message;
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

// A table's messages as far as the first of type `until` (a table's stream stays open).
export async function tableMessages(
  base: string,
  tableId: string,
  token: string,
  until: TableMessage["event"],
): Promise<TableMessage[]> {
  const api = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${token}` } });
  const { response, error } = await api.GET("/tables/{table_id}/stream", {
    params: { path: { table_id: tableId } },
    headers: NDJSON,
    parseAs: "stream",
  });
  if (!response.ok || !response.body) throw new Error(`streamTableEvents: ${JSON.stringify(error)}`);
  const messages: TableMessage[] = [];
  for await (const line of lines(response.body)) {
    messages.push(JSON.parse(line) as TableMessage);
    if (messages.at(-1)?.event === until) break;
  }
  return messages;
}
