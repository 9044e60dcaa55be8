// Test harness: a real podium server (built from this repository with
// `go build`, or PODIUM_BIN), started on a free port with a temporary
// SQLite data directory, and a TCP proxy that can cut connections, hold new
// ones and drop answers, to test what the client does when the network
// fails. Nothing here sleeps to synchronise: every wait is on an event,
// with a timeout only as a failure guard.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

let built = "";

/** The podium binary: PODIUM_BIN, or one built from the repository. */
export function podiumBinary() {
  if (process.env.PODIUM_BIN) return process.env.PODIUM_BIN;
  if (built) return built;
  const out = join(tmpdir(), "podium-ts-client-test", "podium");
  // go build is incremental: an up-to-date binary is not linked again.
  execFileSync("go", ["build", "-o", out, "./cmd/podium"], { cwd: repo, stdio: ["ignore", "inherit", "inherit"] });
  if (!existsSync(out)) throw new Error(`go build did not write ${out}`);
  built = out;
  return out;
}

/** Resolves with p, or rejects after ms with a message naming what. */
export function within(p, ms, what) {
  let t;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise((_, reject) => { t = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms); }),
  ]);
}

/**
 * A podium server in a child process. start() waits for its "podium is
 * serving" line; restart() stops it and starts it again on the same port and
 * data directory.
 */
export class Podium {
  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "podium-ts-"));
    this.adminKey = "adm_" + randomBytes(16).toString("hex");
    this.port = 0;
    this.url = "";
    this.proc = null;
    this.log = [];
  }

  async start() {
    const args = ["serve", "--addr", `127.0.0.1:${this.port}`, "--data", this.dir,
      "--rate-submit", "off", "--rate-key", "off", "--rate-anon", "off", "--shutdown-timeout", "2s"];
    const proc = spawn(podiumBinary(), args, {
      env: { ...process.env, PODIUM_ADMIN_KEY: this.adminKey }, stdio: ["ignore", "ignore", "pipe"],
    });
    this.proc = proc;
    const exited = new Promise((res) => proc.once("exit", (code, sig) => res({ code, sig })));
    this.exited = exited;
    const serving = new Promise((res, rej) => {
      let buf = "";
      proc.stderr.setEncoding("utf8");
      proc.stderr.on("data", (chunk) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          this.log.push(line);
          if (this.log.length > 200) this.log.shift();
          const m = /msg="podium is serving" url=(\S+)/.exec(line);
          if (m) res(m[1]);
        }
      });
      exited.then(({ code, sig }) => rej(new Error(`podium exited (${code ?? sig}) before serving:\n${this.log.join("\n")}`)));
    });
    const url = await within(serving, 30000, "podium start");
    this.url = url.replace(/\/+$/, "");
    this.port = Number(new URL(this.url).port);
    return this;
  }

  async stop() {
    if (!this.proc) return;
    const p = this.proc;
    this.proc = null;
    p.kill("SIGTERM");
    await within(this.exited, 15000, "podium stop").catch(() => p.kill("SIGKILL"));
  }

  async restart() {
    await this.stop();
    await this.start();
  }

  async close() {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A TCP proxy in front of a server. cut() ends every open connection;
 * hold() makes new connections wait (not connected upstream) until
 * release(); dropAnswers(n) forwards the next n requests and then cuts
 * their connections at the first byte of the answer, so the server applied
 * them and the client never learns it.
 */
export class Proxy {
  constructor(target) {
    this.target = new URL(target);
    this.socks = new Set();
    this.held = [];
    this.holding = false;
    this.drop = 0;
    this.connections = 0;
    this.server = createServer((c) => this.accept(c));
  }

  async start() {
    await new Promise((res) => this.server.listen(0, "127.0.0.1", res));
    this.url = `http://127.0.0.1:${this.server.address().port}`;
    return this;
  }

  accept(c) {
    this.socks.add(c);
    c.on("close", () => this.socks.delete(c));
    c.on("error", () => {});
    if (this.holding) this.held.push(c);
    else this.pipe(c);
  }

  pipe(c) {
    if (c.destroyed) return;
    this.connections++;
    const up = connect(Number(this.target.port), this.target.hostname);
    this.socks.add(up);
    up.on("close", () => { this.socks.delete(up); c.destroy(); });
    up.on("error", () => {});
    c.on("close", () => up.destroy());
    c.on("data", (d) => up.write(d));
    up.on("data", (d) => {
      if (this.drop > 0) {
        this.drop--;
        c.destroy();
        up.destroy();
        return;
      }
      c.write(d);
    });
  }

  cut() {
    for (const s of this.socks) s.destroy();
  }

  hold() {
    this.holding = true;
  }

  release() {
    this.holding = false;
    const h = this.held;
    this.held = [];
    for (const c of h) this.pipe(c);
  }

  dropAnswers(n) {
    this.drop = n;
  }

  async close() {
    this.cut();
    await new Promise((res) => this.server.close(res));
  }
}

/** A unique id for boards and players of one test. */
export function uid(prefix = "t") {
  return `${prefix}${randomBytes(4).toString("hex")}`;
}
