// The outbox with real server processes (issue 28, record 049): two server processes
// (WORKERS=2) on one PostgreSQL database, both with a sender, and 60 mails queued at once.
// The SMTP server must receive each exactly once: the FOR UPDATE SKIP LOCKED claim and its
// lease keep the two senders off each other's rows.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { built, spawnHost, type HostProcess } from "../../scripts/host.ts";
import { queueAlert } from "../../server/backend/mail/outbox.ts";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink.ts";
import { processEnv } from "./host-suite.ts";
import { insertUser, openTempPostgres, type OpenedDatabase } from "./helpers.ts";

const adminUrl = process.env.TEST_DATABASE_URL;
const describeWorkers = adminUrl && built ? describe : describe.skip;
const MAILS = 60;

describeWorkers("the outbox with two server processes on PostgreSQL", () => {
  let opened: OpenedDatabase;
  let host: HostProcess;
  let sink: SmtpSink;

  beforeAll(async () => {
    opened = await openTempPostgres(adminUrl ?? "");
    sink = await startSmtpSink();
    host = await spawnHost({
      env: { ...processEnv(opened.databaseUrl, 2), SMTP_URL: sink.url, PUBLIC_URL: "https://w.test" },
      stdio: ["ignore", "ignore", "inherit"],
    });
    await host.ready();
  }, 60_000);
  afterAll(async () => {
    await host?.stop();
    await sink?.close();
    await opened?.dispose();
  });

  test(`${MAILS} mails queued at once arrive once each`, async () => {
    const db = opened.database.db;
    const userId = await insertUser(db, "mail-workers");
    await db.execute(sql`UPDATE users SET email_verified_at = now() WHERE id = ${userId}`);
    await db.transaction(async (tx) => {
      for (let i = 0; i < MAILS; i += 1)
        await queueAlert(tx, userId, "deposit_credited", {
          coin: "BTC",
          amount: `0.${String(i + 1).padStart(3, "0")}`,
        });
    });
    await sink.waitFor((m) => m.length >= MAILS, 30_000);
    // Time for a second delivery, were there one.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(sink.mails).toHaveLength(MAILS);
    expect(new Set(sink.mails.map((m) => m.messageId)).size).toBe(MAILS);
    expect(new Set(sink.mails.map((m) => m.subject)).size).toBe(MAILS);
    const left = await db.execute(sql`SELECT count(*)::int AS n FROM mail_outbox WHERE status <> 'sent'`);
    expect((left as unknown as { rows: { n: number }[] }).rows[0]?.n).toBe(0);
  }, 60_000);
});
