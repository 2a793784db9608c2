// Two hosts on one PostgreSQL behind nginx (issue 29 item 3, record 051): two `npm start`
// processes (server/host/host.ts, the production build), each with its own port and data
// folder and the same secrets, behind a real nginx `upstream` (round robin), as the README's
// "Running more than one host" sets them up. It shows what the database shares between them:
//   - a change made through host A reaches a signed-in stream open on host B (an operator's
//     message, a send requested and then decided);
//   - sessions: one ended through A is refused on B at its next request (and its stream on B
//     hears so);
//   - rate limits: wrong passwords through A and B count together;
//   - each host's /readyz, and the operator commands run with each host's own settings;
//   - `kill -9` of one host while sends go through nginx in a loop: every acknowledged send
//     is in the database exactly once, and the clients carry on through the other host.
// Needs PostgreSQL (TEST_DATABASE_URL) and nginx; skipped without them (CI has both).
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openEventStream, type OpenEventStream } from "../support/event-stream.ts";
import { inputValue } from "../../scripts/html-forms.ts";
import { built, freePort, root, spawnHost, TEST_SECRETS, type HostProcess } from "../../scripts/host.ts";
import { seedSenders, type Sender } from "../../scripts/bench/seed.ts";
import { sendBody } from "../../scripts/bench/sends.ts";
import { NGINX, startNginx, type RunningNginx } from "../../scripts/nginx.ts";
import { openDatabase, rowsOf, type Database } from "../../server/backend/db/index.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import {
  cookiesOf,
  createAccount,
  fastLoginPath,
  raw,
  rawCall,
  type RawAnswer,
} from "../security/support/http.ts";
import { createTempPostgres } from "./helpers.ts";

const adminUrl = process.env.TEST_DATABASE_URL;
const skipReason = !adminUrl
  ? "TEST_DATABASE_URL is not set (two hosts need PostgreSQL)"
  : !existsSync(NGINX)
    ? "nginx is not installed (apt-get install -y nginx; .ci/run installs it)"
    : !built
      ? "no production build (npx react-router build)"
      : undefined;
if (skipReason) console.warn(`two-hosts.test.ts skipped: ${skipReason}`);

const runFile = promisify(execFile);

// ---------------------------------------------------------------------------
// A signed-in page's event stream, as a browser holds it.
// ---------------------------------------------------------------------------

interface Stream extends OpenEventStream {
  /** The host that answered (through nginx: its X-Upstream). */
  upstream: string | undefined;
}

/** A stream through `port` (a host, or nginx), with which upstream answered it. */
async function openStream(port: number, cookie: string): Promise<Stream> {
  const stream = await openEventStream(port, cookie, { waitMs: 15_000 });
  const upstream = stream.headers["x-upstream"];
  return { ...stream, upstream: Array.isArray(upstream) ? upstream[0] : upstream };
}

/** A Cookie header with the pairs of `fresh` replacing those of the same name. */
function merge(cookie: string, fresh: string): string {
  const pairs = new Map<string, string>();
  for (const pair of [...cookie.split("; "), ...fresh.split("; ")].filter(Boolean)) {
    pairs.set(pair.slice(0, pair.indexOf("=")), pair);
  }
  return [...pairs.values()].join("; ");
}

/**
 * A browser signed in to the account through host `port`; it may then visit either host with
 * its cookies. Its requests carry the public Host, as nginx passes it on (React Router and the
 * origin check of record 014 compare a form post's Origin with it).
 */
async function browser(port: number, account: { email: string; password: string }, origin: string) {
  const host = new URL(origin).host;
  const signedIn = await raw(port, { path: fastLoginPath(account), headers: { host } });
  expect(signedIn.headers.location).toBe("/home");
  let cookie = cookiesOf(signedIn);
  return {
    get cookie() {
      return cookie;
    },
    async open(at: number, page: string): Promise<RawAnswer> {
      const answer = await raw(at, { path: page, headers: { cookie, host } });
      cookie = merge(cookie, cookiesOf(answer));
      return answer;
    },
    async post(at: number, page: string, fields: Record<string, string>): Promise<RawAnswer> {
      const answer = await raw(at, {
        method: "POST",
        path: page,
        headers: { cookie, host, "content-type": "application/x-www-form-urlencoded", origin },
        body: new URLSearchParams(fields).toString(),
      });
      cookie = merge(cookie, cookiesOf(answer));
      return answer;
    },
  };
}

const sessionPair = (cookie: string) => cookie.split("; ").find((p) => p.startsWith("ck_session=")) ?? "";

// ---------------------------------------------------------------------------

describe.skipIf(skipReason !== undefined)("two hosts on one PostgreSQL behind nginx", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  let nginx: RunningNginx;
  let a: HostProcess;
  let b: HostProcess;
  let publicUrl: string;

  /** An operator command run with host `host`'s own settings (its data folder, the shared database and secrets). */
  async function ops(host: HostProcess, ...args: string[]): Promise<string> {
    const { stdout } = await runFile(process.execPath, [path.join(root, "server/ops/cli.ts"), ...args], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        OPERATOR: "two-hosts-test",
        DATA_DIR: host.dataDir,
        DATABASE_URL: database.url,
        ...TEST_SECRETS,
      },
      timeout: 60_000,
    });
    return stdout;
  }

  beforeAll(async () => {
    database = await createTempPostgres(adminUrl ?? "", "hosts_");
    const nginxPort = await freePort();
    publicUrl = `http://127.0.0.1:${nginxPort}`;
    // The same database, secrets and public URL; each its own port and data folder. Started
    // at once on the empty database: one applies the migrations, the other waits for it.
    const env = {
      DATABASE_URL: database.url,
      ...TEST_SECRETS,
      PUBLIC_URL: publicUrl,
      TRUST_PROXY: "loopback",
    };
    [a, b] = await Promise.all([spawnHost({ env }), spawnHost({ env })]);
    await Promise.all([a.ready(), b.ready()]);
    nginx = await startNginx({ port: nginxPort, upstreams: [a.port, b.port] });
    db = await openDatabase({ databaseUrl: database.url, dataDir: tmpdir() });
  }, 90_000);

  afterAll(async () => {
    await nginx?.stop();
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.close();
    await database?.drop();
  });

  test("nginx spreads requests over both; each host answers /readyz; operator commands run with either host's settings", async () => {
    const answered = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const page = await raw(nginx.port, { path: "/healthz" });
      expect([page.status, page.text]).toEqual([200, "ok\n"]);
      answered.add(String(page.headers["x-upstream"]));
    }
    expect([...answered].toSorted()).toEqual([`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`].toSorted());
    for (const host of [a, b]) {
      const ready = await raw(host.port, { path: "/readyz" });
      expect([ready.status, ready.text]).toEqual([200, "ready\n"]);
    }
    // PostgreSQL hosts have no ops socket (record 019): a command opens the database itself,
    // and does the same with either host's data folder and settings.
    const account = await createAccount(a.port, "ops");
    for (const host of [a, b]) {
      const listed = JSON.parse(await ops(host, "user", account.email, "--json")) as { email: string };
      expect(listed.email).toBe(account.email);
    }
  }, 60_000);

  test("a change made through host A reaches a stream open on host B: a message, a send requested, the send decided", async () => {
    const [sender] = await seedSenders(
      { db: db.db, keys: deriveServerKeys(TEST_SECRETS.BACKEND_SECRET) },
      1,
      1,
      "decided",
    );
    if (!sender) throw new Error("no sender");
    const signedIn = await raw(b.port, {
      path: fastLoginPath({ email: sender.email, password: sender.password }),
    });
    expect(signedIn.headers.location).toBe("/home");
    const stream = await openStream(b.port, cookiesOf(signedIn));
    try {
      expect(stream.status).toBe(200);
      await stream.next("ready");

      // An operator's message, with host A's settings.
      await ops(a, "message", "--to", sender.email, "Please confirm the source of your funds.");
      expect(await stream.next("messages")).toEqual({ event: "messages", data: "you" });

      // A send requested through host A's API…
      let from = stream.events.length;
      const sent = await send(a.port, sender, randomBytes(16).toString("hex"));
      expect(sent.status).toBe(200);
      const id = (JSON.parse(sent.text) as { transaction: { id: string } }).transaction.id;
      expect(await stream.next("sends", from)).toEqual({ event: "sends", data: "you" });

      // …and decided by an operator with host A's settings.
      from = stream.events.length;
      await ops(a, "approve", id);
      expect(await stream.next("sends", from)).toEqual({ event: "sends", data: "you" });
      const status = rowsOf<{ status: string }>(
        await db.db.execute(sql`SELECT status FROM withdrawals WHERE id = ${id}`),
      );
      expect(status).toEqual([{ status: "Confirmed" }]);
    } finally {
      stream.close();
    }
  }, 60_000);

  test("a session ended through host A is refused on host B at its next request, and its stream on B hears so", async () => {
    const account = await createAccount(a.port, "sessions");
    const here = await browser(a.port, account, publicUrl);
    const there = await browser(a.port, account, publicUrl);
    // Signed in through A, served by B.
    expect((await there.open(b.port, "/home")).status).toBe(200);
    const stream = await openStream(b.port, sessionPair(there.cookie));
    try {
      await stream.next("ready");
      const page = await here.open(a.port, "/security/sessions");
      expect(page.status).toBe(200);
      const ended = await here.post(a.port, "/security/sessions", {
        csrf: inputValue(page.text, "csrf"),
        intent: "end-others",
      });
      expect([ended.status, ended.headers.location]).toEqual([302, "/security/sessions"]);
      await stream.next("session-ended");
      await stream.ended;
      const next = await there.open(b.port, "/home");
      expect([next.status, next.headers.location]).toEqual([302, "/"]);
      // The one that ended the others is still signed in, on either host.
      expect((await here.open(b.port, "/home")).status).toBe(200);
    } finally {
      stream.close();
    }
  }, 60_000);

  test("wrong passwords through A and through B count together: the sixth waits, on both", async () => {
    const account = await createAccount(a.port, "limits");
    const login = (port: number) =>
      rawCall(port, "/aml-authorization", { email: account.email, password: "not the password" });
    const statuses: number[] = [];
    for (const port of [a.port, b.port, a.port, b.port, a.port]) statuses.push((await login(port)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    for (const port of [b.port, a.port]) {
      const waited = await login(port);
      expect(waited.status).toBe(429);
      expect((JSON.parse(waited.text) as { code: string }).code).toBe("too_many_attempts");
    }
  }, 60_000);

  test("kill -9 of host A while sends go through nginx: every acknowledged send is in the database once; the clients carry on through B", async () => {
    const senders = await seedSenders(
      { db: db.db, keys: deriveServerKeys(TEST_SECRETS.BACKEND_SECRET) },
      6,
      3,
      "killed",
    );
    // A stream through nginx on host A, to see it end with A and come back through nginx on B.
    const onA = await (async () => {
      for (let i = 0; i < 4; i++) {
        const signedIn = await raw(a.port, {
          path: fastLoginPath({ email: senders[0]?.email ?? "", password: senders[0]?.password ?? "" }),
        });
        const stream = await openStream(nginx.port, cookiesOf(signedIn));
        if (stream.upstream === `127.0.0.1:${a.port}`) return { stream, cookie: cookiesOf(signedIn) };
        stream.close();
      }
      throw new Error("round robin never sent the stream to A");
    })();
    await onA.stream.next("ready");

    const acknowledged: { key: string; id: string }[] = [];
    const retried = { count: 0 };
    const run: { killed: boolean; ackedAfterKill: number; stop: boolean; failure?: Error } = {
      killed: false,
      ackedAfterKill: 0,
      stop: false,
    };
    /** Waits (polling) until `done` holds or a client failed. */
    const until = async (done: () => boolean) => {
      while (!done() && !run.failure) await new Promise((r) => setTimeout(r, 10));
    };
    // Each client sends through nginx back to back; a send that got no answer (the host died
    // under it: 502, or the connection dropped) is sent again with the same idempotency key,
    // as the real client's form does, until it is answered.
    const client = async (sender: Sender) => {
      while (!run.stop) {
        const key = randomBytes(16).toString("hex");
        for (;;) {
          let answer: RawAnswer | undefined;
          try {
            answer = await send(nginx.port, sender, key);
          } catch {
            answer = undefined;
          }
          if (answer?.status === 200) {
            const id = (JSON.parse(answer.text) as { transaction: { id: string } }).transaction.id;
            acknowledged.push({ key, id });
            if (run.killed) run.ackedAfterKill++;
            break;
          }
          if (answer !== undefined && answer.status !== 502) {
            run.failure = new Error(`a send answered ${answer.status}: ${answer.text}`);
            run.stop = true;
            return;
          }
          retried.count++;
        }
      }
    };
    const load = Promise.all(senders.map((s) => client(s)));
    // Mid-load: once sends are being acknowledged through both hosts.
    await until(() => acknowledged.length >= 60);
    a.child.kill("SIGKILL");
    run.killed = true;
    await a.exited;
    await until(() => run.ackedAfterKill >= 60);
    run.stop = true;
    await load;
    if (run.failure) throw run.failure;

    // Every acknowledged send, exactly once: by its id, and by its idempotency key.
    const ids = acknowledged.map((x) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
    const rows = rowsOf<{ id: string; n: number }>(
      await db.db.execute(
        sql`SELECT w.id, (SELECT count(*)::int FROM send_requests r WHERE r.withdrawal_id = w.id) AS n
            FROM withdrawals w WHERE w.id = ANY(${`{${ids.join(",")}}`}::uuid[])`,
      ),
    );
    expect(rows).toHaveLength(ids.length);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    const byKey = rowsOf<{ key: string; n: number }>(
      await db.db.execute(
        sql`SELECT idempotency_key AS key, count(*)::int AS n FROM send_requests
            WHERE idempotency_key = ANY(${`{${acknowledged.map((x) => x.key).join(",")}}`}::text[])
            GROUP BY idempotency_key`,
      ),
    );
    expect(byKey).toHaveLength(acknowledged.length);
    expect(byKey.every((r) => r.n === 1)).toBe(true);
    // Nothing was created twice: a client gives up no key before it is answered, so the
    // senders' wallets hold exactly the acknowledged sends.
    const total = rowsOf<{ n: number }>(
      await db.db.execute(
        sql`SELECT count(*)::int AS n FROM withdrawals w JOIN wallets l ON l.id = w.wallet_id
            WHERE l.id = ANY(${`{${senders.map((s) => s.walletId).join(",")}}`}::uuid[])`,
      ),
    );
    expect(total[0]?.n).toBe(ids.length);

    // The stream on A ended with it; the browser's reconnect through nginx reaches B.
    await onA.stream.ended;
    const again = await openStream(nginx.port, onA.cookie);
    try {
      expect([again.status, again.upstream]).toEqual([200, `127.0.0.1:${b.port}`]);
      await again.next("ready");
    } finally {
      again.close();
    }
    console.log(
      `two hosts: ${acknowledged.length} sends acknowledged (${run.ackedAfterKill} after the kill), ${retried.count} sent again`,
    );
  }, 60_000);
});

/** Call 6 (request-transaction): 0.0001 ETH from the sender's wallet, with the idempotency key. */
function send(port: number, sender: Sender, key: string): Promise<RawAnswer> {
  return rawCall(port, "/request-transaction", sendBody(sender, key));
}
