// The data folder's lock (record 019): the embedded database (PGlite) must be
// opened by one process at a time, so whoever opens it — the server, the
// operator command line, the demo seeder — first takes DATA_DIR/coinkeep.lock.
//
// The lock is a Unix socket that its holder listens on. Its name appears
// atomically: the socket is bound and listening under a name of its own first,
// then hard-linked to coinkeep.lock, which fails when the name exists. A holder
// answers a connection; a socket left by a process that died (kill -9, power
// loss) refuses it, so a stale lock is told from a live one without pids.
// Removing a stale lock is the one check-then-act step; it is done only while
// holding coinkeep.lock.break (taken the same way, so a stale one of those is
// broken the same way in turn), and only after checking again under it, so
// two starters after a crash cannot both remove and both take it.
import { link, mkdir, readdir, unlink } from "node:fs/promises";
import { connect, createServer, type Server } from "node:net";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const LOCK_NAME = "coinkeep.lock";

/** Another live process holds the folder. */
export class DataDirLockedError extends Error {
  readonly dataDir: string;
  constructor(dataDir: string) {
    super(
      `Another Coinkeep process is using the data directory ${dataDir} ` +
        `(it holds ${path.join(dataDir, LOCK_NAME)}). The embedded database serves one process: ` +
        "stop that process first, or use its ops socket (npm run ops).",
    );
    this.dataDir = dataDir;
  }
}

export interface DataDirLock {
  /** Gives the folder up; the next process can take it at once. */
  release(): Promise<void>;
}

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** "live" when something accepts a connection there; "stale" when nothing does (or the name is gone). */
function probe(socketPath: string): Promise<"live" | "stale"> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const done = (answer: "live" | "stale") => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    // A holder that does not answer within 5 s is still taken as live: never break a lock on a guess.
    const timer = setTimeout(() => done("live"), 5000);
    socket.once("connect", () => done("live"));
    socket.once("error", (error) =>
      // Only a refused connection or a missing name says nobody is there; anything
      // else (permissions, a full queue) may be a live holder.
      done(code(error) === "ECONNREFUSED" || code(error) === "ENOENT" ? "stale" : "live"),
    );
  });
}

async function unlinkIfThere(file: string) {
  try {
    await unlink(file);
  } catch (error) {
    if (code(error) !== "ENOENT") throw error;
  }
}

/**
 * Puts our listening socket `own` under the name `target`: "taken", or "held"
 * when a live process has it. A stale `target` is removed under `target.break`.
 */
async function take(target: string, own: string, depth: number): Promise<"taken" | "held"> {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      await link(own, target);
      return "taken";
    } catch (error) {
      if (code(error) !== "EEXIST") throw error;
    }
    if ((await probe(target)) === "live") return "held";
    if (depth >= 3) {
      throw new Error(
        `Could not remove the stale lock ${target}; delete it by hand when no Coinkeep process runs.`,
      );
    }
    const breaker = `${target}.break`;
    if ((await take(breaker, own, depth + 1)) === "held") {
      // Another process is removing it right now: look again shortly.
      await sleep(10);
      continue;
    }
    try {
      // Checked again while holding the breaker: nobody can have put a live lock there since.
      if ((await probe(target)) === "stale") await unlinkIfThere(target);
    } finally {
      await unlinkIfThere(breaker);
    }
  }
  throw new Error(`Could not take ${target}.`);
}

/** Takes the folder's lock, or throws DataDirLockedError when a live process holds it. */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const dir = path.resolve(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const target = path.join(dir, LOCK_NAME);
  const own = `${target}.${randomBytes(6).toString("hex")}`;
  // A probe connects and is let go; nothing is ever read from or written to the socket.
  const server: Server = createServer((socket) => socket.destroy());
  server.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ path: own, readableAll: false, writableAll: false }, () => resolve());
  });
  // The lock lives as long as the process or until released; it never keeps the process alive.
  server.unref();
  const closeServer = () => new Promise<void>((resolve) => server.close(() => resolve()));
  let taken: "taken" | "held";
  try {
    taken = await take(target, own, 0);
  } finally {
    await unlinkIfThere(own);
  }
  if (taken === "held") {
    await closeServer();
    throw new DataDirLockedError(dir);
  }
  // Our own names left by processes that died between listening and linking: ours to clear now.
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!/^coinkeep\.lock\.[0-9a-f]{12}$/u.test(name)) continue;
    const file = path.join(dir, name);
    if ((await probe(file)) === "stale") await unlinkIfThere(file).catch(() => {});
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await unlinkIfThere(target);
      await closeServer();
    },
  };
}
