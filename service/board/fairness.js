// The fair deal of docs/fairness.md, re-derived in the browser with WebCrypto (SHA-256 and
// HMAC-SHA256), independently of the server's own verifyGame. Byte for byte as the document
// defines it; tests/browser checks these functions against the document's test vectors.

const utf8 = new TextEncoder();
const WORD_SPACE = 2 ** 32;
const TAGS = {
  commit: utf8.encode("swarm/commit/v1"),
  transcript: utf8.encode("swarm/transcript/v1"),
  deck: utf8.encode("swarm/deck/v1"),
  fingerprint: utf8.encode("swarm/fingerprint/v1"),
};

export function available() {
  return Boolean(globalThis.crypto?.subtle);
}

export function fromHex(hex) {
  if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-f]/i.test(hex)) {
    throw new Error(`not hex: ${String(hex).slice(0, 20)}`);
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function u32(x) {
  if (!Number.isInteger(x) || x < 0 || x >= WORD_SPACE) throw new Error(`${x} is not a u32`);
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, x, false);
  return out;
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

// encode(tag, f1, …, fk) = u32(len(tag)) || tag || u32(len(f1)) || f1 || …
export function encode(tag, ...fields) {
  return concat([tag, ...fields].flatMap((part) => [u32(part.length), part]));
}

const bees = (list) => concat(list.map(u32));

async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

export async function commitment(gameId, serverSeed) {
  if (serverSeed.length !== 32) throw new Error(`the server seed is ${serverSeed.length} bytes, not 32`);
  return sha256(encode(TAGS.commit, utf8.encode(gameId), serverSeed));
}

// clientSeeds: one entry a seat, in seat order: a Uint8Array, or null for a seat that gave none.
export async function transcriptHash(gameId, players, commit, clientSeeds) {
  if (clientSeeds.length !== players) throw new Error(`${clientSeeds.length} seat entries for ${players} players`);
  const entries = clientSeeds.map((seed) =>
    seed === null ? new Uint8Array([0]) : concat([new Uint8Array([1]), seed])
  );
  return sha256(encode(TAGS.transcript, u32(1), utf8.encode(gameId), u32(players), commit, ...entries));
}

// The deck stream: HMAC-SHA256(server seed, encode("swarm/deck/v1", transcript, u32(k))), read
// as unsigned 32-bit big-endian words, 8 a block.
export async function streamBlock(serverSeed, transcript, k) {
  const key = await crypto.subtle.importKey("raw", serverSeed, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encode(TAGS.deck, transcript, u32(k))));
}

function wordsFrom(serverSeed, transcript) {
  let block = null;
  let k = 0;
  let at = 8;
  return async () => {
    if (at === 8) {
      block = new DataView((await streamBlock(serverSeed, transcript, k++)).buffer);
      at = 0;
    }
    return block.getUint32(4 * at++, false);
  };
}

// Fisher–Yates from the top down, with rejection sampling (no modulo bias).
export async function shuffleWords(n, nextWord) {
  const order = Array.from({ length: n }, (_, i) => i + 1);
  for (let i = n - 1; i >= 1; i--) {
    const m = i + 1;
    const bound = m * Math.floor(WORD_SPACE / m);
    let word = await nextWord();
    while (word >= bound) word = await nextWord();
    const j = word % m;
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

export async function deckOrder(serverSeed, transcript, players) {
  return shuffleWords(10 * players + 4, wordsFrom(serverSeed, transcript));
}

export function deal(order, players) {
  const hands = Array.from({ length: players }, (_, s) => order.slice(10 * s, 10 * s + 10));
  return { hands, stems: order.slice(10 * players, 10 * players + 4) };
}

export async function fingerprint(transcript, serverSeed, hands, stems) {
  return sha256(
    encode(TAGS.fingerprint, transcript, serverSeed, u32(hands.length), ...hands.map(bees), bees(stems))
  );
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const show = (list) => list.join(" ");

// Checks a finished game against what this browser recorded when it was first shown.
//   published: {gameId, players, commitment, clientSeeds (hex|null), transcript, fingerprint,
//               serverSeed, deckOrder, hands, stems}  (hex strings for hashes and seeds)
//   recorded:  {commitment, fingerprint, seat, hand, seed}  (what this browser saw first)
// Returns one step per check, in the document's order; the first failure skips the rest.
export async function verifyDeal(published, recorded) {
  const p = published;
  const checks = [
    [
      "commitment",
      "The revealed server seed is the one committed to for this game, before anyone gave a seed",
      async () => {
        if (recorded.commitment && recorded.commitment !== p.commitment) {
          return `the commitment shown first was ${recorded.commitment}, but the log now says ${p.commitment}`;
        }
        const got = toHex(await commitment(p.gameId, fromHex(p.serverSeed)));
        if (got !== p.commitment) return `commitment(game id, server seed) is ${got}, but ${p.commitment} was published`;
        return null;
      },
    ],
    [
      "transcript",
      "Every seat's seed is in the transcript the deck was drawn from",
      async () => {
        const seeds = p.clientSeeds.map((s) => (s === null ? null : fromHex(s)));
        const got = toHex(await transcriptHash(p.gameId, p.players, fromHex(p.commitment), seeds));
        if (got !== p.transcript) return `the transcript of the published seeds is ${got}, but ${p.transcript} was published`;
        if (recorded.seed && recorded.seat && p.clientSeeds[recorded.seat - 1] !== recorded.seed) {
          return `you gave the seed ${recorded.seed}, but seat ${recorded.seat}'s entry is ${p.clientSeeds[recorded.seat - 1] ?? "none"}`;
        }
        return null;
      },
    ],
    [
      "deck",
      "The shuffle of the server seed and the transcript gives the published deck order",
      async () => {
        const order = await deckOrder(fromHex(p.serverSeed), fromHex(p.transcript), p.players);
        if (!same(order, p.deckOrder)) return `the shuffle gives ${show(order)}, but ${show(p.deckOrder)} was published`;
        return null;
      },
    ],
    [
      "deal",
      "Dealing that deck gives the published hands and stems, and the hand you were shown",
      async () => {
        const { hands, stems } = deal(p.deckOrder, p.players);
        if (p.hands.length !== hands.length) return `${p.hands.length} hands were published for ${p.players} players`;
        for (let s = 0; s < hands.length; s++) {
          if (!same(hands[s], p.hands[s])) return `seat ${s + 1} was dealt ${show(hands[s])}, but ${show(p.hands[s])} was published`;
        }
        if (!same(stems, p.stems)) return `the stems were dealt ${show(stems)}, but ${show(p.stems)} was published`;
        if (recorded.hand && recorded.seat && !same(recorded.hand, hands[recorded.seat - 1])) {
          return `you were shown the hand ${show(recorded.hand)}, but the deck deals seat ${recorded.seat} ${show(hands[recorded.seat - 1])}`;
        }
        return null;
      },
    ],
    [
      "fingerprint",
      "The deal hashes to the fingerprint published before turn 1",
      async () => {
        if (recorded.fingerprint && recorded.fingerprint !== p.fingerprint) {
          return `the fingerprint shown before turn 1 was ${recorded.fingerprint}, but the log now says ${p.fingerprint}`;
        }
        const got = toHex(await fingerprint(fromHex(p.transcript), fromHex(p.serverSeed), p.hands, p.stems));
        if (got !== p.fingerprint) return `the fingerprint of the published deal is ${got}, but ${p.fingerprint} was published`;
        return null;
      },
    ],
  ];
  const steps = [];
  let failed = false;
  for (const [name, what, check] of checks) {
    if (failed) {
      steps.push({ name, what, status: "skipped", reason: "not checked: an earlier step failed" });
      continue;
    }
    let reason;
    try {
      reason = await check();
    } catch (error) {
      reason = String(error.message ?? error);
    }
    steps.push({ name, what, status: reason ? "failed" : "ok", reason: reason ?? "" });
    failed = Boolean(reason);
  }
  return steps;
}

// The published values, from a finished game's events (as listGameEvents shows them after the
// end: nothing redacted).
export function publishedFrom(gameId, events) {
  const byType = (type) => events.find((e) => e.type === type)?.data;
  const committed = byType("deal_committed");
  const started = byType("game_started");
  const revealed = byType("deal_revealed");
  if (!committed || !started || !revealed || !started.proof) return null;
  return {
    gameId,
    players: started.seats.length,
    commitment: committed.commitment,
    clientSeeds: started.proof.client_seeds,
    transcript: started.proof.transcript,
    fingerprint: started.proof.fingerprint,
    serverSeed: revealed.server_seed,
    deckOrder: revealed.deck_order,
    hands: started.hands,
    stems: started.stems,
  };
}
