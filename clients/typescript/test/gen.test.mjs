// The type generator's check mode, which CI runs: it passes on the spec as
// it is and fails when the spec no longer gives the committed files.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const spec = resolve(pkg, "../../openapi/openapi.json");

function gen(...args) {
  return spawnSync(process.execPath, [join(pkg, "scripts/gen-types.mjs"), ...args], { encoding: "utf8" });
}

function withSpec(change, fn) {
  const dir = mkdtempSync(join(tmpdir(), "podium-gen-"));
  try {
    const doc = JSON.parse(readFileSync(spec, "utf8"));
    change(doc);
    const p = join(dir, "openapi.json");
    writeFileSync(p, JSON.stringify(doc));
    fn(p);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("check: the committed types are the spec's", () => {
  const r = gen("--check");
  assert.equal(r.status, 0, r.stderr);
});

test("check: a changed spec fails, naming the files to regenerate", () => {
  withSpec((doc) => { doc.components.schemas.Board.properties.new_field = { type: "string" }; }, (p) => {
    const r = gen("--check", "--spec", p);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /src\/generated\/schemas\.ts/);
    assert.match(r.stderr, /npm run gen:types/);
  });
  withSpec((doc) => { doc.paths["/v1/boards/{board}/entries"].get.operationId = "entriesRenamed"; }, (p) => {
    assert.equal(gen("--check", "--spec", p).status, 1);
  });
});

test("a schema keyword the generator does not know fails loudly", () => {
  withSpec((doc) => { doc.components.schemas.Board.patternProperties = { "^x": { type: "string" } }; }, (p) => {
    const r = gen("--check", "--spec", p);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /unsupported keyword patternProperties/);
  });
});
