// The back office's commands (issue 26), on each database, as the ops socket and
// the staff console run them (runInServer: the same parsing, checks and output
// as the command line): four-eyes approval of sends (record 047) with its
// thresholds, replies to support messages, the audit log search and its CSV,
// and one holder in full. Each asserts what was written (or that nothing was).
import { and, eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, test } from "vitest";
import { sessionOwner } from "../../common/session-owner.ts";
import { loadConfig } from "../../server/config.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import {
  auditLog,
  holderRecoveryCodes,
  holderTwoFactor,
  ledgerTransfers,
  messages,
  sendApprovals,
  supportReplies,
  users,
  webSessions,
  withdrawals,
} from "../../server/backend/db/schema.ts";
import { holdWithdrawal, walletBalance } from "../../server/backend/domain/ledger.ts";
import { storeSupportMessage } from "../../server/backend/domain/messages.ts";
import { unreadMessagesCount } from "../../server/backend/domain/wallets.ts";
import { runInServer } from "../../server/ops/registry.ts";
import { describeEachDatabase } from "./api-suite.ts";
import { BACKEND_SECRET, fundedWallet, insertUser, randomAddress } from "./helpers.ts";

const SESSION_SECRET = "test-session-secret-0123456789abcdef";
const ETH = 10n ** 18n;

interface Holder {
  userId: string;
  email: string;
  walletId: string;
}

describeEachDatabase("back office commands ($name)", { openTimeout: 120_000 }, (getDatabase) => {
  let db: AppDb;
  const config = loadConfig({ NODE_ENV: "test", BACKEND_SECRET, SESSION_SECRET });
  /** A command as `actor` (the console's staff member), its stdout, or the test fails with its stderr. */
  const ops = (actor: string, ...argv: string[]) =>
    runInServer(argv, { db, config, actor, actorRoles: ["approver"] });
  const ok = async (actor: string, ...argv: string[]) => {
    const run = await ops(actor, ...argv);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    return run.stdout;
  };
  const json = async (actor: string, ...argv: string[]) => JSON.parse(await ok(actor, ...argv, "--json"));
  const refused = async (actor: string, argv: string[], line: string) =>
    expect(await ops(actor, ...argv)).toEqual({ code: 1, stdout: "", stderr: `error: ${line}\n` });

  /** A holder with 10 ETH. */
  async function holder(label: string): Promise<Holder> {
    const userId = await insertUser(db, label);
    const [row] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId));
    const { walletId } = await fundedWallet(db, userId, "ETH", { deposit: "10" });
    return { userId, email: row?.email ?? "", walletId };
  }
  /** A pending send of `eth` ETH worth `usd` (null: unknown) to a fresh address. */
  async function send(h: Holder, eth: bigint, usd: string | null) {
    const destination = randomAddress("ETH");
    const held = await holdWithdrawal(db, {
      walletId: h.walletId,
      units: eth * ETH,
      destination,
      amountUsd: usd,
    });
    if (!held.ok) throw new Error(held.reason);
    return { id: held.withdrawalId, destination };
  }
  const row = async (id: string) => (await db.select().from(withdrawals).where(eq(withdrawals.id, id)))[0];
  const approvers = async (id: string) =>
    (await db.select().from(sendApprovals).where(eq(sendApprovals.withdrawalId, id)))
      .map((a) => a.approver)
      .toSorted();
  const auditRows = (subject: string) =>
    db.select().from(auditLog).where(eq(auditLog.subject, subject)).orderBy(auditLog.id);
  const resolutions = async (id: string) => {
    const [r] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(ledgerTransfers)
      .where(sql`${ledgerTransfers.pendingId} = (select hold_transfer_id from withdrawals where id = ${id})`);
    return r?.n ?? 0;
  };

  beforeAll(() => {
    db = getDatabase().database.db;
  });

  describe("four-eyes approval of sends (record 047)", () => {
    test("below the threshold one approval posts the send, recorded with who decided", async () => {
      const h = await holder("below");
      const s = await send(h, 1n, "9999.99");
      const out = await json("alice@staff.example", "approve", s.id);
      expect(out).toEqual({
        sendId: s.id,
        status: "Confirmed",
        email: h.email,
        coin: "ETH",
        amount: "1",
        amountUsd: "9999.99",
        address: s.destination,
        destinationTag: null,
        threshold: { usd: "10000", source: "default" },
        approvals: [{ approver: "alice@staff.example", at: expect.any(String) }],
        needed: 1,
        decidedAt: (await row(s.id))?.decidedAt?.toISOString(),
        decidedBy: "alice@staff.example",
      });
      expect(await row(s.id)).toMatchObject({ status: "Confirmed", decidedBy: "alice@staff.example" });
      expect(await approvers(s.id)).toEqual(["alice@staff.example"]);
      expect(await walletBalance(db, h.walletId)).toBe(9n * ETH);
      const [a, ...more] = await auditRows(s.id);
      expect(more).toEqual([]);
      // The audit helper's columns: the console's roles, the holder, no reason for an approval.
      expect(a).toMatchObject({
        actor: "alice@staff.example",
        actorRoles: ["approver"],
        action: "send.approve",
        userId: h.userId,
        reason: null,
        details: { approvals: 1, needed: 1, amountUsd: "9999.99", after: { status: "Confirmed" } },
      });
    });

    test("at the threshold: the first approval waits, the same approver is refused, a second posts", async () => {
      const h = await holder("at");
      const s = await send(h, 2n, "10000");
      expect(await ok("alice@staff.example", "approve", s.id)).toBe(
        `Approved the send ${s.id}: 2 ETH to ${s.destination} for ${h.email} (10000 USD, threshold 10000 USD). ` +
          "1 of 2 approvals; waiting for a second approver. Status: pending.\n",
      );
      expect(await row(s.id)).toMatchObject({ status: "pending", decidedAt: null, decidedBy: null });
      expect(await walletBalance(db, h.walletId)).toBe(8n * ETH); // still held, not gone
      expect(await resolutions(s.id)).toBe(0);
      const [first] = await auditRows(s.id);
      expect(first).toMatchObject({
        action: "send.approve",
        details: { approvals: 1, needed: 2, before: { status: "pending" }, after: { status: "pending" } },
      });

      // The same approver again, in any case: refused, nothing written.
      const at = (await db.select().from(sendApprovals).where(eq(sendApprovals.withdrawalId, s.id)))[0]
        ?.createdAt;
      for (const again of ["alice@staff.example", " ALICE@staff.example "]) {
        await refused(
          again,
          ["approve", s.id],
          `You approved the send ${s.id} already (at ${at?.toISOString()}); ` +
            "it needs a second approval by someone else. Nothing changed.",
        );
      }
      expect(await auditRows(s.id)).toHaveLength(1);
      expect(await approvers(s.id)).toEqual(["alice@staff.example"]);

      expect(await ok("bob@staff.example", "approve", s.id)).toBe(
        `Approved the send ${s.id}: 2 ETH to ${s.destination} for ${h.email}. ` +
          "2 of 2 approvals (alice@staff.example, bob@staff.example). Status: Confirmed.\n",
      );
      const decided = await row(s.id);
      expect(decided).toMatchObject({ status: "Confirmed", decidedBy: "bob@staff.example" });
      expect(await walletBalance(db, h.walletId)).toBe(8n * ETH);
      expect(await resolutions(s.id)).toBe(1);
      expect(
        (await auditRows(s.id)).map((r) => [
          r.actor,
          r.action,
          (r.details as { approvals: number }).approvals,
        ]),
      ).toEqual([
        ["alice@staff.example", "send.approve", 1],
        ["bob@staff.example", "send.approve", 2],
      ]);
      // Decided: anyone deciding again is told who decided it and when.
      await refused(
        "carol@staff.example",
        ["decline", s.id, "--reason", "late"],
        `The send ${s.id} was already Confirmed by bob@staff.example at ${decided?.decidedAt?.toISOString()}; nothing changed.`,
      );
      expect(await auditRows(s.id)).toHaveLength(2);
    });

    test("a send of unknown USD value needs two approvals", async () => {
      const h = await holder("unknown");
      const s = await send(h, 1n, null);
      const out = await json("alice@staff.example", "approve", s.id);
      expect(out).toMatchObject({
        status: "pending",
        needed: 2,
        amountUsd: null,
        decidedAt: null,
        decidedBy: null,
      });
      expect((await json("bob@staff.example", "approve", s.id)).status).toBe("Confirmed");
    });

    test("a decline by either approver ends the send: its amount back, the reason kept", async () => {
      const h = await holder("decline");
      const s = await send(h, 3n, "25000");
      await ok("alice@staff.example", "approve", s.id);
      const out = await json("alice@staff.example", "decline", s.id, "--reason", " Sanctions hit. ");
      const decided = await row(s.id);
      expect(out).toEqual({
        sendId: s.id,
        status: "Declined",
        email: h.email,
        coin: "ETH",
        amount: "3",
        amountUsd: "25000",
        address: s.destination,
        destinationTag: null,
        threshold: { usd: "10000", source: "default" },
        approvals: [{ approver: "alice@staff.example", at: expect.any(String) }],
        needed: 2,
        decidedAt: decided?.decidedAt?.toISOString(),
        decidedBy: "alice@staff.example",
        reason: "Sanctions hit.",
        balance: "10",
      });
      expect(decided).toMatchObject({ status: "Declined", declineReason: "Sanctions hit." });
      expect(await walletBalance(db, h.walletId)).toBe(10n * ETH);
      const rows = await auditRows(s.id);
      expect(rows.at(-1)).toMatchObject({
        action: "send.decline",
        reason: "Sanctions hit.",
        userId: h.userId,
      });
      await refused(
        "bob@staff.example",
        ["approve", s.id],
        `The send ${s.id} was already Declined by alice@staff.example at ${decided?.decidedAt?.toISOString()}; nothing changed.`,
      );

      // The other approver may decline too, with no approval at all.
      const t = await send(h, 1n, "50000");
      expect((await json("bob@staff.example", "decline", t.id, "--reason", "No.")).decidedBy).toBe(
        "bob@staff.example",
      );
      expect(await walletBalance(db, h.walletId)).toBe(10n * ETH);
    });

    test("approvals at once: two approvers post once, one approver is never counted twice", async () => {
      const h = await holder("race");
      const s = await send(h, 1n, "12000");
      const both = await Promise.all([
        json("alice@staff.example", "approve", s.id),
        json("bob@staff.example", "approve", s.id),
      ]);
      // One waited for the other's row lock, then found the first approval and posted.
      expect(both.map((o: { status: string }) => o.status).toSorted()).toEqual(["Confirmed", "pending"]);
      expect(await resolutions(s.id)).toBe(1);
      expect(await approvers(s.id)).toEqual(["alice@staff.example", "bob@staff.example"]);

      const t = await send(h, 1n, "12000");
      const twice = await Promise.all([
        ops("alice@staff.example", "approve", t.id),
        ops("alice@staff.example", "approve", t.id),
      ]);
      expect(twice.map((r) => r.code).toSorted()).toEqual([0, 1]);
      expect(await row(t.id)).toMatchObject({ status: "pending" });
      expect(await approvers(t.id)).toEqual(["alice@staff.example"]);

      await ok("alice@staff.example", "approve", (await send(h, 1n, "12000")).id);
      const u = await send(h, 1n, "12000");
      await ok("alice@staff.example", "approve", u.id);
      const seconds = await Promise.all([
        ops("bob@staff.example", "approve", u.id),
        ops("carol@staff.example", "approve", u.id),
      ]);
      expect(seconds.map((r) => r.code).toSorted()).toEqual([0, 1]);
      expect(seconds.find((r) => r.code === 1)?.stderr).toMatch(
        /^error: The send .* was already Confirmed by (bob|carol)@staff\.example at /,
      );
      expect(await resolutions(u.id)).toBe(1);
      expect(await approvers(u.id)).toHaveLength(2);
    });

    test("thresholds: listed per coin; set one with a reason, and it applies to the next decision", async () => {
      const listed = await json("", "thresholds");
      expect(listed).toHaveLength(9);
      expect(listed.find((t: { coin: string }) => t.coin === "DOGE")).toEqual({
        coin: "DOGE",
        usd: "10000",
        source: "default",
        updatedBy: null,
        updatedAt: null,
      });
      const set = await json(
        "treasurer@staff.example",
        "threshold",
        "set",
        "doge",
        "0500.50",
        "--reason",
        "Volatile.",
      );
      expect(set).toEqual({
        coin: "DOGE",
        usd: "500.5",
        source: "set",
        updatedBy: "treasurer@staff.example",
        updatedAt: expect.any(String),
        before: { usd: "10000", source: "default" },
        reason: "Volatile.",
      });
      expect((await json("", "thresholds")).find((t: { coin: string }) => t.coin === "DOGE")).toEqual({
        coin: "DOGE",
        usd: "500.5",
        source: "set",
        updatedBy: "treasurer@staff.example",
        updatedAt: set.updatedAt,
      });
      expect(
        await ok("treasurer@staff.example", "threshold", "set", "DOGE", "750", "--reason", "Less."),
      ).toBe("The four-eyes threshold of DOGE is now 750 USD (was 500.5 USD, set).\n");
      const rows = await auditRows("DOGE");
      expect(rows.map((r) => [r.action, r.reason, r.details])).toEqual([
        [
          "threshold.set",
          "Volatile.",
          {
            coin: "DOGE",
            before: { usd: "10000", source: "default" },
            after: { usd: "500.5" },
            reason: "Volatile.",
          },
        ],
        [
          "threshold.set",
          "Less.",
          { coin: "DOGE", before: { usd: "500.5", source: "set" }, after: { usd: "750" }, reason: "Less." },
        ],
      ]);
      // A DOGE send worth 800 USD now needs two approvers.
      const userId = await insertUser(db, "doge");
      const { walletId } = await fundedWallet(db, userId, "DOGE", { deposit: "1000" });
      const held = await holdWithdrawal(db, {
        walletId,
        units: 10_000_000_000n,
        destination: randomAddress("DOGE"),
        amountUsd: "800",
      });
      if (!held.ok) throw new Error(held.reason);
      expect(await json("alice@staff.example", "approve", held.withdrawalId)).toMatchObject({
        status: "pending",
        needed: 2,
        threshold: { usd: "750", source: "set" },
      });

      const before = await db.select().from(auditLog);
      await refused(
        "t",
        ["threshold", "set", "DOGECOIN", "5", "--reason", "x"],
        'Unknown coin "DOGECOIN": one of BTC, ETH, ADA, BNB, DOGE, SOL, TRX, USDT, XRP.',
      );
      await refused(
        "t",
        ["threshold", "set", "DOGE", "1e3", "--reason", "x"],
        'Invalid USD "1e3": a plain decimal like 25000 or 2500.50.',
      );
      await refused(
        "t",
        ["threshold", "set", "DOGE", "5"],
        "threshold set needs --reason <text>: why the threshold changes (1 to 1000 characters).",
      );
      expect(await db.select().from(auditLog)).toEqual(before);
    });
  });

  describe("replies to support and contact messages", () => {
    test("a reply reaches the holder's messages unread and is listed with the message", async () => {
      const h = await holder("asks");
      const stored = await storeSupportMessage(
        db,
        { kind: "contact", email: ` ${h.email.toUpperCase()} `, comment: "Where are my coins?" },
        { ip: null },
      );
      if (!stored.ok) throw new Error("support message");
      const id = stored.message.id;
      const unread = await unreadMessagesCount(db, h.userId);
      const out = await json(
        "support@staff.example",
        "reply",
        id,
        "  They arrived at 10:02; see Transactions.  ",
      );
      expect(out).toEqual({
        replyId: expect.any(String),
        supportMessageId: id,
        messageId: expect.any(String),
        to: h.email,
        userId: h.userId,
        createdAt: expect.any(String),
      });
      expect(await unreadMessagesCount(db, h.userId)).toBe(unread + 1);
      const [message] = await db.select().from(messages).where(eq(messages.id, out.messageId));
      expect(message).toMatchObject({
        userId: h.userId,
        message: "They arrived at 10:02; see Transactions.",
      });
      expect(await db.select().from(supportReplies).where(eq(supportReplies.supportMessageId, id))).toEqual([
        {
          id: out.replyId,
          supportMessageId: id,
          messageId: out.messageId,
          author: "support@staff.example",
          createdAt: expect.any(Date),
        },
      ]);
      expect(await auditRows(id)).toEqual([
        expect.objectContaining({
          actor: "support@staff.example",
          action: "support.reply",
          userId: h.userId,
          details: {
            userId: h.userId,
            to: h.email,
            replyId: out.replyId,
            messageId: out.messageId,
            length: 40,
            message: "They arrived at 10:02; see Transactions.",
          },
        }),
      ]);
      const listed = (await json("", "support", "--limit", "1000")).find((m: { id: string }) => m.id === id);
      expect(listed.replies).toEqual([
        {
          id: out.replyId,
          author: "support@staff.example",
          at: out.createdAt,
          text: "They arrived at 10:02; see Transactions.",
          messageId: out.messageId,
        },
      ]);
    });

    test("no account with the message's e-mail, an unknown message, bad text: refused, nothing written", async () => {
      const stored = await storeSupportMessage(
        db,
        { kind: "contact", email: "nobody-here@example.com", comment: "Hello?" },
        { ip: null },
      );
      if (!stored.ok) throw new Error("support message");
      const before = { audit: await db.select().from(auditLog), messages: await db.select().from(messages) };
      await refused(
        "s",
        ["reply", stored.message.id, "Hi"],
        "No account uses nobody-here@example.com; a reply can only reach an account holder.",
      );
      const unknown = "00000000-0000-4000-8000-000000000000";
      await refused("s", ["reply", unknown, "Hi"], `No support message with id ${unknown}.`);
      await refused("s", ["reply", stored.message.id, "   "], "The message is empty.");
      await refused(
        "s",
        ["reply", stored.message.id, "x".repeat(5001)],
        "The message is too long: 5001 characters, at most 5000.",
      );
      expect({ audit: await db.select().from(auditLog), messages: await db.select().from(messages) }).toEqual(
        before,
      );
    });
  });

  describe("the audit log", () => {
    test("filters by actor, holder, action and time; pages by id; CSV escapes formulas", async () => {
      const h = await holder("audited");
      const marker = `=HYPERLINK("http://evil.example")-${Date.now()}`;
      // Three changes by a hostile-looking actor about one holder, one by someone else.
      const a = await send(h, 1n, "1");
      const b = await send(h, 1n, "1");
      const c = await send(h, 1n, "1");
      await ok(marker, "approve", a.id);
      await ok(marker, "decline", b.id, "--reason", "+cmd|' /C calc'!A0");
      await ok(marker, "approve", c.id);
      await ok("other@staff.example", "pause", "sends", "--user", h.email, "--reason", "@SUM(1)");

      const all = await json("", "audit", "--actor", marker);
      expect(all.nextBefore).toBeNull();
      expect(all.entries.map((e: { subject: string }) => e.subject)).toEqual([c.id, b.id, a.id]);
      expect(all.entries[1]).toEqual({
        id: expect.any(Number),
        at: expect.any(String),
        actor: marker,
        actorRoles: ["approver"],
        action: "send.decline",
        subject: b.id,
        userId: h.userId,
        reason: "+cmd|' /C calc'!A0",
        details: expect.objectContaining({ reason: "+cmd|' /C calc'!A0", units: "1000000000000000000" }),
      });
      // By holder (e-mail or id): all four, newest first.
      const byUser = await json("", "audit", "--user", h.email);
      expect(byUser.entries.map((e: { action: string }) => e.action)).toEqual([
        "pause",
        "send.approve",
        "send.decline",
        "send.approve",
      ]);
      expect((await json("", "audit", "--user", h.userId.toUpperCase())).entries).toEqual(byUser.entries);
      // The pause's row (written by the controls domain) has the same columns: roles, holder, reason.
      expect(byUser.entries[0]).toMatchObject({
        actor: "other@staff.example",
        actorRoles: ["approver"],
        userId: h.userId,
        reason: "@SUM(1)",
      });
      expect(
        (await json("", "audit", "--user", h.email, "--action", "send.approve")).entries.map(
          (e: { subject: string }) => e.subject,
        ),
      ).toEqual([c.id, a.id]);

      // Pages of 2 by id: the first says where the next starts; together they are the whole list.
      const first = await json("", "audit", "--user", h.email, "--limit", "2");
      expect(first.entries).toEqual(byUser.entries.slice(0, 2));
      expect(first.nextBefore).toBe(byUser.entries[1].id);
      const second = await json(
        "",
        "audit",
        "--user",
        h.email,
        "--limit",
        "2",
        "--before",
        String(first.nextBefore),
      );
      expect(second.entries).toEqual(byUser.entries.slice(2, 4));
      const third = await json(
        "",
        "audit",
        "--user",
        h.email,
        "--limit",
        "2",
        "--before",
        String(second.nextBefore),
      );
      expect(third).toEqual({ entries: [], nextBefore: null });

      // Time: --from at or after, --to before (a date alone: the whole day).
      const newest = byUser.entries[0].at as string;
      expect((await json("", "audit", "--user", h.email, "--from", newest)).entries).toEqual([
        byUser.entries[0],
      ]);
      expect((await json("", "audit", "--user", h.email, "--to", newest)).entries).toEqual(
        byUser.entries.slice(1),
      );
      const today = newest.slice(0, 10);
      expect((await json("", "audit", "--user", h.email, "--to", today)).entries).toEqual(byUser.entries);
      expect(
        (await json("", "audit", "--user", h.email, "--from", "2000-01-01", "--to", "2000-01-02")).entries,
      ).toEqual([]);

      // CSV: every row (no --limit), every cell quoted, formulas defused.
      const csv = await ok("", "audit", "--user", h.email, "--csv");
      const lines = csv.split("\r\n");
      expect(lines[0]).toBe('"id","at","actor","roles","action","subject","user_id","reason","details"');
      expect(lines).toHaveLength(6); // header, 4 rows, "" after the last CRLF
      expect(lines.at(-1)).toBe("");
      const decline = byUser.entries[2];
      expect(lines[3]).toBe(
        [
          String(decline.id),
          decline.at,
          `'${marker}`,
          "approver",
          "send.decline",
          b.id,
          h.userId,
          "'+cmd|' /C calc'!A0",
          JSON.stringify(decline.details),
        ]
          .map((cell) => `"${cell.replaceAll('"', '""')}"`)
          .join(","),
      );
      expect(lines[1]).toContain(`"'@SUM(1)"`);

      await refused(
        "",
        ["audit", "--from", "2026-02-30"],
        'Invalid --from "2026-02-30": an ISO date like 2026-11-27, or a date and time like 2026-11-27T09:30:00Z.',
      );
      await refused(
        "",
        ["audit", "--from", "2026-11-28", "--to", "2026-11-27"],
        "--from must be before --to.",
      );
      await refused("", ["audit", "--limit", "0"], "--limit must be a whole number from 1 to 1000.");
      await refused(
        "",
        ["audit", "--user", "nobody@example.com"],
        "No user with the e-mail nobody@example.com.",
      );
    });
  });

  describe("one holder in full", () => {
    test("user <email|id>: account, wallets, transactions, messages, login, pauses, sessions; users --find", async () => {
      const h = await holder("detail");
      const s = await send(h, 2n, "4000");
      await ok("alice@staff.example", "approve", s.id);
      const pending = await send(h, 1n, null);
      await ok("ops", "message", "--to", h.email, "Please confirm your address.");
      await db.insert(webSessions).values([
        {
          id: `live-${h.userId}`,
          data: "x",
          owner: sessionOwner(SESSION_SECRET, h.email),
          expiresAt: new Date(Date.now() + 600_000),
        },
        {
          id: `gone-${h.userId}`,
          data: "x",
          owner: sessionOwner(SESSION_SECRET, h.email),
          expiresAt: new Date(Date.now() - 1000),
        },
      ]);
      const out = await json("", "user", h.email.toUpperCase());
      const [created] = await db.select({ at: users.createdAt }).from(users).where(eq(users.id, h.userId));
      expect(out).toEqual({
        userId: h.userId,
        email: h.email,
        createdAt: created?.at.toISOString(),
        wallets: [
          {
            id: h.walletId,
            coin: "ETH",
            state: "issued",
            address: expect.any(String),
            balance: "7",
            sendsPaused: null,
          },
        ],
        transactions: [
          expect.objectContaining({
            kind: "send",
            id: pending.id,
            coin: "ETH",
            amount: "1",
            amountUsd: null,
            status: "pending",
            address: pending.destination,
            txid: null,
          }),
          expect.objectContaining({
            kind: "send",
            id: s.id,
            amount: "2",
            amountUsd: "4000",
            status: "Confirmed",
            address: s.destination,
          }),
          expect.objectContaining({
            kind: "deposit",
            coin: "ETH",
            amount: "10",
            status: "Confirmed",
            address: null,
            txid: expect.stringMatching(/^tx-/),
          }),
        ],
        messages: [
          {
            id: expect.any(String),
            createdAt: expect.any(String),
            message: "Please confirm your address.",
            opened: false,
            openedAt: null,
            toAll: false,
          },
        ],
        login: { failures: 0, locked: false },
        twoFactor: { on: false, removalDueAt: null, recoveryCodesLeft: 0 },
        pauses: [],
        sessions: 1,
      });
      expect((await json("", "user", h.userId)).email).toBe(h.email);

      await ok("ops", "pause", "sends", "--user", h.userId, "--reason", "Checking.");
      const paused = await json("", "user", h.email);
      expect(paused.pauses).toEqual([
        {
          id: expect.any(String),
          what: "sends",
          reason: "Checking.",
          actor: "ops",
          automatic: false,
          createdAt: expect.any(String),
        },
      ]);
      expect(paused.wallets[0].sendsPaused).toBe("user");
      const text = await ok("", "user", h.email);
      expect(text.split("\n").slice(0, 4)).toEqual([
        `${h.email}  (user ${h.userId}, created ${created?.at.toISOString()})`,
        "Login: open, 0 failed logins. Live sessions: 1.",
        "Two-factor: off.",
        "Pauses: sends (Checking., by ops).",
      ]);
      // Two-factor on, a restore's removal waiting (record 048): said, with the codes left.
      const due = new Date("2030-01-02T03:04:05.000Z");
      await db
        .insert(holderTwoFactor)
        .values({ userId: h.userId, secretSealed: "sealed", removalDueAt: due });
      await db.insert(holderRecoveryCodes).values([
        { userId: h.userId, codeHash: "a" },
        { userId: h.userId, codeHash: "b", usedAt: new Date() },
      ]);
      expect((await json("", "user", h.email)).twoFactor).toEqual({
        on: true,
        removalDueAt: due.toISOString(),
        recoveryCodesLeft: 1,
      });
      expect((await ok("", "user", h.email)).split("\n")[2]).toBe(
        "Two-factor: on, 1 recovery code left; removal after a restore without a code due 2030-01-02T03:04:05.000Z (sends refused until then).",
      );

      // A backend whose web tiers run elsewhere cannot count sessions: unknown, not 0.
      const remote = loadConfig({
        NODE_ENV: "test",
        BACKEND_SECRET,
        SESSION_SECRET,
        WEB_TIER_HOSTS: "loopback",
        BACKEND_TOKEN: "test-backend-token-0123456789abcdef",
      });
      const far = await runInServer(["user", h.email, "--json"], { db, config: remote });
      expect(JSON.parse(far.stdout).sessions).toBeNull();

      await refused("", ["user", "nobody@example.com"], "No user with the e-mail nobody@example.com.");

      const local = h.email.split("@")[0] ?? "";
      const found = await json("", "users", "--find", local.toUpperCase());
      expect(found).toEqual([
        {
          userId: h.userId,
          email: h.email,
          createdAt: created?.at.toISOString(),
          wallets: [
            { id: h.walletId, coin: "ETH", state: "issued", address: expect.any(String), balance: "7" },
          ],
        },
      ]);
      expect(await json("", "users", "--find", h.userId)).toEqual(found);
      expect(await json("", "users", "--find", "%")).toEqual([]);
      expect(await ok("", "users", "--find", "no-such-holder-anywhere")).toBe(
        'No user matches "no-such-holder-anywhere".\n',
      );
      expect(
        (
          await db
            .select()
            .from(auditLog)
            .where(and(eq(auditLog.userId, h.userId), eq(auditLog.action, "pause")))
        ).length,
      ).toBe(1);
    });
  });
});
