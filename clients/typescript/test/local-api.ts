/**
 * Runs the repository's local-api binary on a free loopback port, with its own state directory,
 * as infra/local-api/tests do: the smoke test drives the real server, not a mock.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";

const run = promisify(execFile);
/** The debug build scripts/test makes (this file runs from build/test/); LOCAL_API_BIN names another. */
const BINARY =
  process.env["LOCAL_API_BIN"] ?? resolve(import.meta.dirname, "../../../../target/debug/local-api");
const START_TIMEOUT_MS = 30_000;

export class LocalApi {
  private constructor(
    private readonly child: ChildProcess,
    private readonly stateDir: string,
    /** e.g. `http://127.0.0.1:40123` */
    readonly base: string,
  ) {}

  static async start(): Promise<LocalApi> {
    const stateDir = await mkdtemp(join(tmpdir(), "fan-api-tsclient-"));
    const env: NodeJS.ProcessEnv = { ...process.env, FAN_API_STATE_DIR: stateDir };
    // The in-memory store and the local identity provider, whatever the caller's shell sets.
    delete env["TABLE_NAME"];
    delete env["AUTH_ISSUER"];
    const stderr = openSync(join(stateDir, "stderr.log"), "w");
    const child = spawn(BINARY, ["--port", "0"], { env, stdio: ["ignore", "pipe", stderr] });
    closeSync(stderr); // the child has its own copy
    // Its first line ends with the address it listens on; the rest is drained by readline.
    const first = new Promise<string>((resolveLine, reject) => {
      createInterface({ input: child.stdout! }).once("line", resolveLine);
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`local-api exited with ${code} at start`)));
      setTimeout(() => reject(new Error("local-api printed no address in time")), START_TIMEOUT_MS).unref();
    });
    try {
      const base = (await first).split(" ").pop() ?? "";
      if (!base.startsWith("http://127.0.0.1:")) {
        throw new Error(`unexpected first line of local-api: ${base}`);
      }
      return new LocalApi(child, stateDir, base);
    } catch (error) {
      const logs = await readFile(join(stateDir, "stderr.log"), "utf8").catch(() => "");
      await stop(child);
      await rm(stateDir, { recursive: true, force: true });
      throw new Error(`${String(error)} (binary ${BINARY}; build it with cargo build -p local-api)\n${logs}`);
    }
  }

  /** A session token of the local identity provider for `sub`. */
  async token(sub: string): Promise<string> {
    const { stdout } = await run(BINARY, ["token", "--sub", sub], {
      env: { ...process.env, FAN_API_STATE_DIR: this.stateDir },
    });
    return stdout.trim();
  }

  async stop(): Promise<void> {
    await stop(this.child);
    await rm(this.stateDir, { recursive: true, force: true });
  }
}

async function stop(child: ChildProcess): Promise<void> {
  // Never started (no binary), or already gone.
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}
