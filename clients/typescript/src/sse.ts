// readEvents: the Server-Sent Events parser that the board subscriber
// (live.ts) and the cohort follower (cohort.ts) share. They read SSE with
// fetch, not EventSource, so that a key can go in the Authorization header.

/**
 * Reads the events of an SSE body, calling onEvent(type, data) for each
 * event with data, and onChunk() after each chunk read. Either returning
 * false stops the read (readEvents then resolves); the body's end is an
 * error ("the stream ended"), since a live stream never ends by itself.
 * `id:` and `retry:` are ignored: each caller has its own resume rule and
 * backoff.
 */
export async function readEvents(body: ReadableStream<Uint8Array>, onChunk: () => boolean,
  onEvent: (type: string, data: string) => boolean): Promise<void> {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  let type = "";
  let data: string[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (!onChunk()) return;
    if (done) throw new Error("podium: the stream ended");
    buf += dec.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf[nl] === "\r" && buf[nl + 1] === "\n" ? 2 : 1));
      if (line === "") {
        if (data.length && !onEvent(type, data.join("\n"))) return;
        type = "";
        data = [];
      } else if (line[0] !== ":") {
        const i = line.indexOf(":");
        const field = i < 0 ? line : line.slice(0, i);
        let v = i < 0 ? "" : line.slice(i + 1);
        if (v[0] === " ") v = v.slice(1);
        if (field === "event") type = v;
        else if (field === "data") data.push(v);
      }
    }
  }
}
