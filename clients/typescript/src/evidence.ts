// Evidence (replay) files: one gzip member of JSON Lines, and the two
// SHA-256 hashes an upload declares (docs/API.md, "Evidence (replay)
// uploads"). Uses the platform's CompressionStream and Web Crypto, which
// browsers and Node 18+ have.

import { webCrypto } from "./retry.js";

/** Bytes in any of the forms a browser or Node hands them over. */
export type BytesLike = Uint8Array | ArrayBuffer | Blob;

export async function toBytes(b: BytesLike): Promise<Uint8Array> {
  if (b instanceof Uint8Array) return b;
  if (b instanceof ArrayBuffer) return new Uint8Array(b);
  return new Uint8Array(await b.arrayBuffer());
}

async function pipe(data: Uint8Array, t: GenerateTransformStream): Promise<Uint8Array> {
  const stream = new Blob([data as BlobPart]).stream().pipeThrough(t);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

type GenerateTransformStream = ReadableWritablePair<Uint8Array, Uint8Array>;

function hex(buf: ArrayBuffer): string {
  return Array.from(new Uint8Array(buf), (x) => x.toString(16).padStart(2, "0")).join("");
}

/**
 * Makes an evidence file from events: one JSON object per line, gzipped as
 * one member.
 */
export async function gzipEvents(events: ReadonlyArray<Record<string, unknown>>): Promise<Uint8Array> {
  const text = events.map((e) => JSON.stringify(e)).join("\n") + "\n";
  return pipe(new TextEncoder().encode(text), new CompressionStream("gzip") as GenerateTransformStream);
}

/**
 * The hashes an upload declares: the SHA-256 of the inflated bytes
 * (`content`) and of the gzip bytes as sent (`compressed`), in hex.
 */
export async function evidenceHashes(gz: BytesLike): Promise<{ content: string; compressed: string }> {
  const bytes = await toBytes(gz);
  const inflated = await pipe(bytes, new DecompressionStream("gzip") as GenerateTransformStream);
  const subtle = (await webCrypto()).subtle;
  const [content, compressed] = await Promise.all([
    subtle.digest("SHA-256", inflated as BufferSource),
    subtle.digest("SHA-256", bytes as BufferSource),
  ]);
  return { content: hex(content), compressed: hex(compressed) };
}
