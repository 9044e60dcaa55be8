#!/usr/bin/env node
// Generates src/generated/*.ts from podium's OpenAPI description
// (openapi/openapi.json at the repository's root, the JSON the server
// serves at /v1/openapi.json), so that the client's types are the spec's.
//
//   node scripts/gen-types.mjs            write the files
//   node scripts/gen-types.mjs --check    fail (exit 1) when they differ
//   node scripts/gen-types.mjs --spec x   read another spec file
//
// No network, no dependencies: it covers the part of JSON Schema 2020-12
// the spec uses ($ref, type, const, enum, oneOf, anyOf, allOf, properties,
// required, additionalProperties, items, prefixItems). A keyword it does
// not know is an error, so a spec that grows past it fails loudly instead
// of producing types that are quietly too loose.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, "..");
const args = process.argv.slice(2);
const check = args.includes("--check");
const specArg = args.indexOf("--spec");
const specPath = specArg >= 0 ? resolve(args[specArg + 1]) : resolve(pkg, "../../openapi/openapi.json");
const outDir = join(pkg, "src/generated");

const spec = JSON.parse(readFileSync(specPath, "utf8"));
const schemas = spec.components?.schemas ?? {};

// Keywords that say nothing about the TypeScript type (validation only,
// or documentation).
const IGNORED = new Set(["description", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern",
  "minLength", "maxLength", "minItems", "maxItems", "format", "examples", "example", "default", "title",
  "unevaluatedProperties", "contentMediaType", "contentSchema", "deprecated", "readOnly", "writeOnly", "$comment",
  "uniqueItems"]);
const KNOWN = new Set([...IGNORED, "$ref", "type", "const", "enum", "oneOf", "anyOf", "allOf", "properties",
  "required", "additionalProperties", "items", "prefixItems"]);

function fail(where, msg) {
  throw new Error(`gen-types: ${where}: ${msg}`);
}

// refPrefix qualifies schema names: "" inside schemas.ts, "S." in
// operations.ts, which imports them as S.
let refPrefix = "";

function refName(ref, where) {
  const m = /^#\/components\/schemas\/([A-Za-z_][A-Za-z0-9_]*)$/.exec(ref);
  if (!m) fail(where, `unsupported $ref ${ref}`);
  if (!(m[1] in schemas)) fail(where, `$ref to a missing schema ${m[1]}`);
  return refPrefix + m[1];
}

function doc(text, indent) {
  if (!text) return "";
  const lines = String(text).trim().replace(/\*\//g, "*\\/").split("\n");
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? " " + l : ""}`).join("\n")}\n${indent} */\n`;
}

function propName(n) {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(n) ? n : JSON.stringify(n);
}

// paren wraps a type in parentheses unless it has no | or & outside
// brackets and strings (so "A | B" inside an intersection stays a union).
function paren(t) {
  let depth = 0;
  let quote = false;
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === '"') quote = false;
    } else if (c === '"') quote = true;
    else if ("{[(<".includes(c)) depth++;
    else if ("}])>".includes(c)) depth--;
    else if (depth === 0 && (c === "|" || c === "&")) return `(${t})`;
  }
  return t;
}

function union(parts) {
  const uniq = [...new Set(parts)];
  return uniq.length === 1 ? uniq[0] : uniq.map(paren).join(" | ");
}

// ts returns the TypeScript type of schema s; indent is the indentation
// of the line the type starts on.
function ts(s, where, indent = "") {
  if (s === true || s === undefined) return "unknown";
  if (s === false) return "never";
  if (typeof s !== "object" || s === null) fail(where, "a schema must be an object");
  for (const k of Object.keys(s)) {
    if (!KNOWN.has(k) && !k.startsWith("x-")) fail(where, `unsupported keyword ${k}`);
  }
  if (s.$ref) return refName(s.$ref, where);
  if ("const" in s) return JSON.stringify(s.const);
  if (s.enum) return union(s.enum.map((v) => JSON.stringify(v)));
  if (s.oneOf || s.anyOf) {
    const alts = (s.oneOf || s.anyOf).map((a, i) => ts(a, `${where}/oneOf/${i}`, indent));
    const own = ownObject(s, where, indent);
    const u = union(alts);
    return own ? `${paren(u)} & ${own}` : u;
  }
  if (s.allOf) {
    const parts = s.allOf.map((a, i) => paren(ts(a, `${where}/allOf/${i}`, indent)));
    const own = ownObject(s, where, indent);
    if (own) parts.push(own);
    return parts.join(" & ");
  }
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length === 0) {
    if (s.properties || s.additionalProperties !== undefined || s.required) return object(s, where, indent);
    if (s.items || s.prefixItems) return array(s, where, indent);
    return "unknown";
  }
  return union(types.map((t) => {
    switch (t) {
      case "string": return "string";
      case "integer": case "number": return "number";
      case "boolean": return "boolean";
      case "null": return "null";
      case "object": return object(s, where, indent);
      case "array": return array(s, where, indent);
      default: return fail(where, `unsupported type ${t}`);
    }
  }));
}

// ownObject is the object part of a schema that also has allOf or oneOf:
// its own properties and required names, or "" when it has none.
function ownObject(s, where, indent) {
  if (!s.properties && !s.required) return "";
  return object(s, where, indent);
}

function object(s, where, indent) {
  const props = s.properties || {};
  const required = new Set(s.required || []);
  const inner = indent + "  ";
  let out = "";
  for (const [name, p] of Object.entries(props)) {
    const d = typeof p === "object" && p ? p.description : "";
    out += doc(d, inner);
    out += `${inner}${propName(name)}${required.has(name) ? "" : "?"}: ${ts(p, `${where}/properties/${name}`, inner)};\n`;
  }
  // A required name whose property is defined by an allOf part.
  for (const name of required) {
    if (!(name in props)) out += `${inner}${propName(name)}: unknown;\n`;
  }
  const ap = s.additionalProperties;
  if (ap !== undefined && ap !== false) {
    const t = Object.keys(props).length ? "unknown" : ts(ap, `${where}/additionalProperties`, inner);
    out += `${inner}[key: string]: ${t};\n`;
  } else if (ap === undefined && Object.keys(props).length === 0 && !s.required) {
    out += `${inner}[key: string]: unknown;\n`;
  }
  return out ? `{\n${out}${indent}}` : "Record<string, never>";
}

function array(s, where, indent) {
  if (s.prefixItems) {
    return `[${s.prefixItems.map((p, i) => ts(p, `${where}/prefixItems/${i}`, indent)).join(", ")}]`;
  }
  const t = ts(s.items, `${where}/items`, indent);
  return /^[A-Za-z0-9_."]+$/.test(t) ? `${t}[]` : `Array<${t}>`;
}

const header = (what) => `// Code generated by scripts/gen-types.mjs from ${relative(pkg, specPath).split("\\").join("/")} (${what}). DO NOT EDIT.
// podium ${spec.info?.version ?? ""}, OpenAPI ${spec.openapi}. Run \`npm run gen:types\` after changing the spec;
// \`npm run check:types\` (CI) fails when this file and the spec differ.
/* eslint-disable */
`;

// --- schemas.ts: every component schema as a type ---

let schemasTS = header("components/schemas");
for (const [name, s] of Object.entries(schemas)) {
  schemasTS += "\n" + doc(s.description, "") + `export type ${name} = ${ts(s, `#/components/schemas/${name}`)};\n`;
}

// --- operations.ts: every /v1 operation, its parameters, body and answers ---

const METHODS = ["get", "put", "post", "delete", "patch", "head"];

function resolveParam(p, where) {
  if (p.$ref) {
    const m = /^#\/components\/parameters\/(.+)$/.exec(p.$ref);
    const q = m && spec.components.parameters[m[1]];
    if (!q) fail(where, `unsupported parameter $ref ${p.$ref}`);
    return q;
  }
  return p;
}

function pascal(id) {
  return id.replace(/(^|[^A-Za-z0-9])([a-z])/g, (_, __, c) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, "");
}

function contentType(content, where, indent) {
  if (!content) return "void";
  const json = content["application/json"];
  if (json) return ts(json.schema, `${where}/application/json`, indent);
  return "unknown"; // a stream, a file or text: read by hand
}

refPrefix = "S.";
let opsTS = header("paths") + `import type * as S from "./schemas.js";\n`;
let table = "";
let iface = "";
const ids = new Set();
for (const [path, item] of Object.entries(spec.paths)) {
  if (!path.startsWith("/v1/")) continue;
  for (const method of METHODS) {
    const op = item[method];
    if (!op) continue;
    const where = `${method.toUpperCase()} ${path}`;
    const id = op.operationId;
    if (!id) fail(where, "no operationId");
    if (ids.has(id)) fail(where, `operationId ${id} used twice`);
    ids.add(id);
    const params = [...(item.parameters || []), ...(op.parameters || [])].map((p) => resolveParam(p, where));
    const section = (kind) => {
      const ps = params.filter((p) => p.in === kind);
      if (ps.length === 0) return "Record<string, never>";
      let s = "{\n";
      for (const p of ps) {
        s += doc(p.description, "      ");
        s += `      ${propName(p.name)}${p.required ? "" : "?"}: ${ts(p.schema, `${where} ${p.name}`, "      ")};\n`;
      }
      return s + "    }";
    };
    let body = "void";
    if (op.requestBody) {
      body = contentType(op.requestBody.content, `${where} requestBody`, "    ");
      if (!op.requestBody.content["application/json"]) body = "Blob | ArrayBuffer | Uint8Array";
      else if (!op.requestBody.required) body = `${paren(body)} | void`;
    }
    let responses = "{\n";
    for (const [code, r0] of Object.entries(op.responses)) {
      if (!/^2\d\d$/.test(code)) continue;
      let r = r0;
      if (r.$ref) {
        const m = /^#\/components\/responses\/(.+)$/.exec(r.$ref);
        r = m && spec.components.responses[m[1]];
        if (!r) fail(where, `unsupported response $ref ${r0.$ref}`);
      }
      responses += `      ${code}: ${contentType(r.content, `${where} ${code}`, "      ")};\n`;
    }
    responses += "    }";
    iface += "\n" + doc([op.summary, op.description && op.description.split("\n\n")[0]].filter(Boolean).join("\n\n"), "  ");
    iface += `  ${id}: {\n    method: ${JSON.stringify(method.toUpperCase())};\n    path: ${JSON.stringify(path)};\n` +
      `    params: ${section("path")};\n    query: ${section("query")};\n    headers: ${section("header")};\n` +
      `    body: ${body};\n    responses: ${responses};\n  };\n`;
    table += `  ${id}: { method: ${JSON.stringify(method.toUpperCase())}, path: ${JSON.stringify(path)} },\n`;
  }
}
opsTS += `\n/** Every /v1 operation of the spec, by operationId. */\nexport interface Operations {${iface}}\n`;
opsTS += `\n/** The method and path template of every operation, from the spec. */\nexport const operations = {\n${table}} as const;\n`;
opsTS += `\n/** The name of an operation (its operationId). */\nexport type OperationId = keyof Operations;\n`;

const files = { "schemas.ts": schemasTS, "operations.ts": opsTS };
let differ = [];
for (const [name, text] of Object.entries(files)) {
  const p = join(outDir, name);
  let old = null;
  try { old = readFileSync(p, "utf8"); } catch { /* absent */ }
  if (old === text) continue;
  if (check) {
    differ.push(relative(pkg, p));
  } else {
    mkdirSync(outDir, { recursive: true });
    writeFileSync(p, text);
    console.log(`wrote ${relative(pkg, p)}`);
  }
}
if (check) {
  if (differ.length) {
    console.error(`gen-types: ${differ.join(", ")} differ from ${relative(pkg, specPath)}: the spec changed; run \`npm run gen:types\` in clients/typescript and commit the result`);
    process.exit(1);
  }
  console.log(`gen-types: src/generated matches ${relative(pkg, specPath)}`);
}
