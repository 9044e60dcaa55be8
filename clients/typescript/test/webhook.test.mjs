// docs/API.md's TypeScript snippet that verifies a webhook's signature,
// as published there (this test takes it out of the document and
// compiles it with the package's TypeScript), against a delivery signed by
// podium: the values are webhooks' Go test TestSnippetVector's
// (webhooks/vector_test.go), which checks that podium's signer makes this
// signature; clients/csharp's WebhookSnippet test uses them too. Keep them
// equal.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const doc = readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), "../../../docs/API.md"), "utf8");

async function publishedVerify() {
  const blocks = [...doc.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  const snippet = blocks.find((b) => b.startsWith("// TypeScript (Node 18+)"));
  assert.ok(snippet, "docs/API.md has the TypeScript verification snippet");
  const out = ts.transpileModule(snippet, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    reportDiagnostics: true,
  });
  assert.deepEqual(out.diagnostics, [], "the snippet compiles");
  const mod = await import("data:text/javascript," + encodeURIComponent(out.outputText));
  return mod.verify;
}

const secret = "whsec_cG9kaXVtLXdlYmhvb2stdGVzdC12ZWN0b3ItMzItYnk=";
const id = "evt_4f1c2a9be07d5c31";
const at = 1796230800;
const body = `{"id":"evt_4f1c2a9be07d5c31","type":"leader.changed","at":"2026-12-02T17:00:00.000Z","data":{"board":"weekly","leader":{"player":"zoë","rank":1}}}`;
const sig = "v1,juzK3yxZxJzRL8128R4upbfGe9zY1AVtVtvO/UoNCIE=";

// withNow runs f with Date.now() at unix second now (the snippet checks the
// timestamp against it).
function withNow(now, f) {
  const real = Date.now;
  Date.now = () => now * 1000;
  try {
    return f();
  } finally {
    Date.now = real;
  }
}

test("the published TypeScript snippet verifies podium's signature", async () => {
  const verify = await publishedVerify();
  const h = (over = {}) => ({ "webhook-id": id, "webhook-timestamp": String(at), "webhook-signature": sig, ...over });
  const v = (headers, b = body, now = at) => withNow(now, () => verify(secret, headers, b));
  assert.equal(v(h()), true, "podium's signature");
  assert.equal(v(h(), body, at + 299), true, "within 5 minutes");
  assert.equal(v(h({ "webhook-signature": "v1,AAAA " + sig })), true, "either of two signatures (a rotation)");
  assert.equal(withNow(at, () => verify(secret.slice(6), h(), body)), true, "a secret without whsec_");
  assert.equal(v(h(), body.replace("zoë", "zoe")), false, "a changed body");
  assert.equal(v(h({ "webhook-id": "evt_other" })), false, "another id");
  assert.equal(v(h({ "webhook-timestamp": String(at + 1) }), body, at), false, "another timestamp");
  assert.equal(v(h({ "webhook-signature": "v2," + sig.slice(3) })), false, "another version");
  assert.equal(v(h({ "webhook-signature": sig.slice(0, -1) })), false, "a shorter signature");
  assert.equal(v(h(), body, at + 301), false, "a stale timestamp");
  assert.equal(v(h(), body, at - 301), false, "a future timestamp");
  assert.equal(v(h({ "webhook-signature": "" })), false, "no signature");
});
