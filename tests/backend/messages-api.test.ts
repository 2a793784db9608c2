// Messages: calls 7 (unread count), 8 (open a message, with the caller's
// credentials) and 12 (support and contact messages, with the sender's IP),
// through raw requests for every database × transport; who the sender is
// (connection address, forwarded header) with the handler and real sockets;
// and the operators' domain functions (send, list, forget addresses).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { createRequestListener } from "@remix-run/node-fetch-server";
import { and, count, eq } from "drizzle-orm";
import { beforeAll, describe, expect, test } from "vitest";
import type { ApiHandler } from "../../server/backend/api/handler.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { messageReads, messages, supportMessages } from "../../server/backend/db/schema.ts";
import { createAccount } from "../../server/backend/domain/accounts.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import {
  forgetSenderAddresses,
  listSupportMessages,
  MessageInputError,
  findUserByEmail,
  openMessage,
  sendMessage,
  storeSupportMessage,
} from "../../server/backend/domain/messages.ts";
import { clientBalances, unreadMessagesCount } from "../../server/backend/domain/wallets.ts";
import { connectApi, describeEachDatabase, type Answer } from "./api-suite.ts";
import {
  BACKEND_SECRET,
  BACKEND_TOKEN,
  BACKEND_TOKEN_HEADER,
  PLATFORM,
  createTestHandler,
  transports,
  uniqueEmail,
  type OpenedDatabase,
  type Transport,
} from "./helpers.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEADER = "X-Coinkeep-Client-Ip";

const NOT_FOUND: Answer = {
  status: 404,
  body: { success: false, code: "message_not_found", message: "Message not found." },
};
const OPENED: Answer = { status: 200, body: { success: true, message: "Message opened.", open_status: 1 } };
const SENT: Answer = { status: 200, body: { success: true, message: "Message sent!" } };
const BAD_CREDENTIALS: Answer = {
  status: 401,
  body: { success: false, code: "invalid_credentials", message: "Invalid credentials." },
};

/** A refusal of call 12 naming one field with the text the sender sees. */
const refused = (path: string, message: string): Answer => ({
  status: 400,
  body: { success: false, code: "invalid_message", message, issues: [{ path, message }] },
});

const TEXTS = {
  email: "Please enter a valid email address.",
  fullName: "Please enter your full name.",
  fullNameTooLong: "Full name must be at most 200 characters.",
  phone: "Phone number may contain only digits, with an optional leading +.",
  phoneTooLong: "Phone number must be at most 32 characters.",
  supportComment: "Enter at least 1 word and 6 letters.",
  contactComment: "Comment must be at least 6 characters.",
  commentTooLong: "Comment must be at most 5000 characters.",
  commentUnstorable: "Comment contains characters that cannot be stored.",
};

async function supportRows(db: AppDb, email: string) {
  return db.select().from(supportMessages).where(eq(supportMessages.email, email));
}

async function readsOf(db: AppDb, messageId: string) {
  return db.select().from(messageReads).where(eq(messageReads.messageId, messageId));
}

function suite(transport: Transport, getDatabase: () => OpenedDatabase) {
  describe(`transport: ${transport.name}`, () => {
    const api = connectApi(transport, getDatabase);
    const { call } = api;
    /** What a message sent without the header records as its sender: the connection's address. */
    const ownAddress = transport.name === "http" ? "127.0.0.1" : null;

    async function newAccount() {
      const account = await api.newAccount("messages");
      // Broadcasts sent from now on reach this account (a distinct millisecond from its creation).
      await sleep(3);
      return account;
    }
    type Account = Awaited<ReturnType<typeof newAccount>>;

    const unread = async (a: Account) => {
      const answer = await call("/aml-new-messages-count", { email: a.email, twelvewords: a.twelveWords });
      expect(answer.status).toBe(200);
      return answer.body.newMessagesCount;
    };
    const open = (a: Account, messageId: unknown) =>
      call("/aml-message-open-status", { email: a.email, twelveWords: a.twelveWords, messageId });
    const messagesOf = async (a: Account) => {
      const answer = await call("/aml-client-balances", { email: a.email, twelveWords: a.twelveWords });
      expect(answer.status).toBe(200);
      return (answer.body.messages as { id: string; message: string; open_status: number }[]).map((m) => ({
        id: m.id,
        message: m.message,
        open_status: m.open_status,
      }));
    };
    async function send(to: { userId: string } | "all", text: string) {
      const sent = await sendMessage(api.db, { to, message: text });
      if (!sent.ok) throw new Error("message not sent");
      await sleep(3);
      return sent.message;
    }

    // ---------------------------------------------------------------------
    // Calls 7 and 8
    // ---------------------------------------------------------------------

    test("call 7 counts the caller's own and broadcast messages, not another user's", async () => {
      const me = await newAccount();
      const other = await newAccount();
      expect(await unread(me)).toBe(0);
      await send({ userId: me.userId }, "For you.");
      await send("all", "For everyone.");
      await send({ userId: other.userId }, "Not for you.");
      expect(await unread(me)).toBe(2);
      expect(await unread(other)).toBe(2);
    });

    test("call 8 opens the caller's own message: 0 → 1 once, the count drops, again is a no-op", async () => {
      const me = await newAccount();
      const mine = await send({ userId: me.userId }, "Please confirm your address.");
      const other = await send({ userId: me.userId }, "Still unread.");
      expect(await unread(me)).toBe(2);
      expect(await messagesOf(me)).toEqual([
        { id: other.id, message: "Still unread.", open_status: 0 },
        { id: mine.id, message: "Please confirm your address.", open_status: 0 },
      ]);

      expect(await open(me, mine.id)).toEqual(OPENED);
      expect(await unread(me)).toBe(1);
      expect(await messagesOf(me)).toEqual([
        { id: other.id, message: "Still unread.", open_status: 0 },
        { id: mine.id, message: "Please confirm your address.", open_status: 1 },
      ]);
      const [first] = await readsOf(api.db, mine.id);
      expect(first?.userId).toBe(me.userId);

      await sleep(5);
      expect(await open(me, mine.id)).toEqual(OPENED);
      expect(await open(me, mine.id.toUpperCase())).toEqual(OPENED);
      expect(await unread(me)).toBe(1);
      // One row, and the first opened_at is kept.
      expect(await readsOf(api.db, mine.id)).toEqual([first]);
    });

    test("call 8 opens a broadcast for the caller only", async () => {
      const me = await newAccount();
      const other = await newAccount();
      const everyone = await send("all", "Maintenance tonight.");
      expect(await open(me, everyone.id)).toEqual(OPENED);
      expect(await unread(me)).toBe(0);
      expect(await unread(other)).toBe(1);
      expect((await messagesOf(other)).find((m) => m.id === everyone.id)?.open_status).toBe(0);
      expect((await readsOf(api.db, everyone.id)).map((r) => r.userId)).toEqual([me.userId]);
      expect(await open(other, everyone.id)).toEqual(OPENED);
      expect(await unread(other)).toBe(0);
    });

    test("another user's message, an unknown id, a malformed id, an older broadcast → the same 404, nothing changes", async () => {
      const owner = await newAccount();
      const before = await send("all", "Sent before the caller existed.");
      const theirs = await send({ userId: owner.userId }, "Yours only.");
      const me = await newAccount();
      const ownerBefore = await messagesOf(owner);
      expect(await unread(owner)).toBe(2);

      const answers = [];
      for (const id of [
        theirs.id,
        before.id,
        "00000000-0000-4000-8000-000000000000",
        crypto.randomUUID(),
        "not-a-uuid",
        "",
        " ",
        `${theirs.id} `,
        theirs.id.slice(0, -1),
        "x".repeat(5000),
        "'; DROP TABLE messages; --",
      ]) {
        const response = await api.connection.fetch(
          new Request(`${api.connection.baseUrl}/aml-message-open-status`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              platform: PLATFORM,
              email: me.email,
              twelveWords: me.twelveWords,
              messageId: id,
            }),
          }),
        );
        answers.push({ status: response.status, text: await response.text() });
      }
      // Byte-for-byte the same answer every time.
      expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
      expect(answers[0]).toEqual({ status: 404, text: JSON.stringify(NOT_FOUND.body) });

      expect(await readsOf(api.db, theirs.id)).toEqual([]);
      expect(await readsOf(api.db, before.id)).toEqual([]);
      expect(await messagesOf(owner)).toEqual(ownerBefore);
      expect(await unread(owner)).toBe(2);
      expect(await unread(me)).toBe(0);
    });

    test("call 8 needs the caller's credentials: missing → 400, wrong or someone else's → 401, nothing opened", async () => {
      const me = await newAccount();
      const other = await newAccount();
      const mine = await send({ userId: me.userId }, "Credentials please.");
      const words = me.twelveWords.split(" ");
      const wrongWords = [words[0] === "abandon" ? "ability" : "abandon", ...words.slice(1)].join(" ");

      // The spec's body alone, and each credential missing.
      for (const body of [
        { messageId: mine.id },
        { email: me.email, messageId: mine.id },
        { twelveWords: me.twelveWords, messageId: mine.id },
        { email: me.email, twelveWords: me.twelveWords },
      ]) {
        const answer = await call("/aml-message-open-status", body);
        expect(answer.status).toBe(400);
        expect(answer.body.message).toBe("Invalid request.");
      }
      for (const body of [
        { email: me.email, twelveWords: wrongWords, messageId: mine.id },
        { email: me.email, twelveWords: other.twelveWords, messageId: mine.id },
        { email: uniqueEmail("nobody"), twelveWords: me.twelveWords, messageId: mine.id },
        // Someone else's valid credentials open nothing of mine (and learn nothing: 404 as for any id).
      ]) {
        expect(await call("/aml-message-open-status", body)).toEqual(BAD_CREDENTIALS);
      }
      expect(await open(other, mine.id)).toEqual(NOT_FOUND);
      expect(await readsOf(api.db, mine.id)).toEqual([]);
      expect(await unread(me)).toBe(1);
    });

    test("call 8 wrong types → 400 'Invalid request.' naming messageId", async () => {
      const me = await newAccount();
      const mine = await send({ userId: me.userId }, "Typed.");
      for (const messageId of [1, null, [mine.id], { id: mine.id }, true]) {
        const answer = await open(me, messageId);
        expect(answer.status).toBe(400);
        expect(answer.body.message).toBe("Invalid request.");
        expect((answer.body.issues as { path: string }[]).map((i) => i.path)).toEqual(["messageId"]);
      }
      expect(await readsOf(api.db, mine.id)).toEqual([]);
      // An unknown field is ignored (record 004): the message opens as with the spec's body.
      const extra = await call("/aml-message-open-status", {
        email: me.email,
        twelveWords: me.twelveWords,
        messageId: mine.id,
        open_status: 0,
      });
      expect(extra.status).toBe(200);
      expect(await readsOf(api.db, mine.id)).toHaveLength(1);
    });

    test("the typed client opens a message (never throws; a 404 is 'rejected')", async () => {
      const me = await newAccount();
      const mine = await send({ userId: me.userId }, "Via the client.");
      const input = { email: me.email, twelveWords: me.twelveWords.split(" ") };
      expect(await api.connection.client.openMessage({ ...input, messageId: mine.id })).toEqual({
        ok: true,
        data: { success: true, message: "Message opened.", open_status: 1 },
      });
      expect(await api.connection.client.openMessage({ ...input, messageId: "nope" })).toEqual({
        ok: false,
        kind: "rejected",
        code: "message_not_found",
        status: 404,
        message: "Message not found.",
      });
      expect(await unread(me)).toBe(0);
    });

    // ---------------------------------------------------------------------
    // Call 12
    // ---------------------------------------------------------------------

    test("a support message is stored exactly (kind, normalised email, trimmed name, phone, comment as written, IP)", async () => {
      const email = uniqueEmail("support");
      const comment = "  My withdrawal is stuck.\nCan you check?  ";
      const started = Date.now();
      expect(
        await call("/request-message", {
          email: `  ${email.toUpperCase()} `,
          full_name: "  Ada Lovelace ",
          phone: " +441234567890 ",
          comment,
        }),
      ).toEqual(SENT);
      const rows = await supportRows(api.db, email);
      expect(rows).toHaveLength(1);
      const row = rows[0];
      if (!row) throw new Error("row");
      expect(row).toEqual({
        id: expect.stringMatching(UUID),
        kind: "support",
        email,
        fullName: "Ada Lovelace",
        phone: "+441234567890",
        comment,
        ip: ownAddress,
        userId: null,
        createdAt: expect.any(Date),
      });
      expect(row.createdAt.getTime()).toBeGreaterThanOrEqual(started - 1000);
      expect(row.createdAt.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    });

    test("a contact message is stored with no name and no phone; a support one without phone has none", async () => {
      const email = uniqueEmail("contact");
      expect(await call("/request-message", { email, comment: "Do you support Litecoin?" })).toEqual(SENT);
      expect(await call("/request-message", { email, full_name: "Bo", comment: "Hello there" })).toEqual(
        SENT,
      );
      expect(
        await call("/request-message", { email, full_name: "Bo", phone: "", comment: "Hello again" }),
      ).toEqual(SENT);
      const rows = (await supportRows(api.db, email)).toSorted((a, b) => a.comment.localeCompare(b.comment));
      expect(rows.map((r) => [r.kind, r.fullName, r.phone, r.comment, r.ip, r.userId])).toEqual([
        ["contact", null, null, "Do you support Litecoin?", ownAddress, null],
        ["support", "Bo", null, "Hello again", ownAddress, null],
        ["support", "Bo", null, "Hello there", ownAddress, null],
      ]);
    });

    test("the forwarded visitor address is believed from our own web tier (in-process, or a configured host with its token)", async () => {
      const email = uniqueEmail("forwarded");
      const cases: [string, string | null][] = [
        ["203.0.113.7", "203.0.113.7"],
        [" 198.51.100.23 ", "198.51.100.23"],
        ["2001:DB8::1", "2001:db8::1"],
        ["::ffff:198.51.100.4", "198.51.100.4"],
        ["fe80::1%eth0", "fe80::1"],
        // Not one address: ignored, the connection's is kept.
        ["not-an-ip", ownAddress],
        ["203.0.113.7, 198.51.100.1", ownAddress],
        ["203.0.113.7:8080", ownAddress],
        ["", ownAddress],
      ];
      for (const [i, [header, expected]] of cases.entries()) {
        const comment = `Forwarded case ${i}`;
        expect(await call("/request-message", { email, comment }, { [HEADER]: header })).toEqual(SENT);
        const [row] = (await supportRows(api.db, email)).filter((r) => r.comment === comment);
        expect([header, row?.ip]).toEqual([header, expected]);
      }
    });

    test("the typed client sends both shapes, forwards clientIp, and keeps the refused fields", async () => {
      const email = uniqueEmail("client");
      expect(
        await api.connection.clientFor("192.0.2.55").requestMessage({
          kind: "support",
          email,
          fullName: "Grace Hopper",
          phone: "123",
          comment: "Support via client",
        }),
      ).toEqual({ ok: true, data: { success: true, message: "Message sent!" } });
      expect(
        await api.connection.client.requestMessage({ kind: "contact", email, comment: "Contact via client" }),
      ).toEqual({ ok: true, data: { success: true, message: "Message sent!" } });
      const rows = (await supportRows(api.db, email)).toSorted((a, b) => a.kind.localeCompare(b.kind));
      expect(rows.map((r) => [r.kind, r.fullName, r.phone, r.comment, r.ip])).toEqual([
        ["contact", null, null, "Contact via client", ownAddress],
        ["support", "Grace Hopper", "123", "Support via client", "192.0.2.55"],
      ]);

      expect(
        await api.connection.client.requestMessage({
          kind: "support",
          email,
          fullName: "G",
          phone: "12a",
          comment: "ok",
        }),
      ).toEqual({
        ok: false,
        kind: "rejected",
        code: "invalid_message",
        status: 400,
        message: TEXTS.fullName,
        // The client names a refused field as its input does (the form's name), over either transport.
        issues: [
          { path: "fullName", message: TEXTS.fullName },
          { path: "phone", message: TEXTS.phone },
          { path: "comment", message: TEXTS.supportComment },
        ],
      });
      expect(await supportRows(api.db, email)).toHaveLength(2);
    });

    test("every validation text, naming its field; nothing stored", async () => {
      const email = uniqueEmail("invalid");
      const support = { email, full_name: "Ada Lovelace", phone: "+123", comment: "Hello there" };
      const contact = { email, comment: "Hello there" };
      const cases: [Record<string, unknown>, Answer][] = [
        [{ ...contact, email: "nope" }, refused("email", TEXTS.email)],
        [{ ...contact, email: "" }, refused("email", TEXTS.email)],
        [{ ...contact, email: "a@b" }, refused("email", TEXTS.email)],
        [{ ...contact, email: `${"a".repeat(250)}@example.com` }, refused("email", TEXTS.email)],
        [{ ...support, email: "two words@example.com" }, refused("email", TEXTS.email)],
        [{ ...contact, comment: "" }, refused("comment", TEXTS.contactComment)],
        [{ ...contact, comment: "12345" }, refused("comment", TEXTS.contactComment)],
        [{ ...contact, comment: "   abc   " }, refused("comment", TEXTS.contactComment)],
        [{ ...contact, comment: "      " }, refused("comment", TEXTS.contactComment)],
        [{ ...support, full_name: "" }, refused("full_name", TEXTS.fullName)],
        [{ ...support, full_name: "A" }, refused("full_name", TEXTS.fullName)],
        [{ ...support, full_name: "  A  " }, refused("full_name", TEXTS.fullName)],
        [{ ...support, comment: "" }, refused("comment", TEXTS.supportComment)],
        [{ ...support, comment: "hello" }, refused("comment", TEXTS.supportComment)],
        [{ ...support, comment: " hello " }, refused("comment", TEXTS.supportComment)],
        // Six characters but no word.
        [{ ...support, comment: "!!!!!!!" }, refused("comment", TEXTS.supportComment)],
        [{ ...support, comment: "- - - -" }, refused("comment", TEXTS.supportComment)],
        [{ ...contact, comment: "a\u0000bcdefg" }, refused("comment", TEXTS.commentUnstorable)],
        [{ ...contact, comment: "abcdefg\ud800" }, refused("comment", TEXTS.commentUnstorable)],
        [
          { email: "x", full_name: "", phone: "+", comment: "" },
          {
            status: 400,
            body: {
              success: false,
              code: "invalid_message",
              message: TEXTS.email,
              issues: [
                { path: "email", message: TEXTS.email },
                { path: "full_name", message: TEXTS.fullName },
                { path: "phone", message: TEXTS.phone },
                { path: "comment", message: TEXTS.supportComment },
              ],
            },
          },
        ],
      ];
      for (const [body, expected] of cases) {
        expect([body, await call("/request-message", body)]).toEqual([body, expected]);
      }
      expect(await supportRows(api.db, email)).toEqual([]);
      // The word rule is the support modal's only; the contact form counts characters.
      expect(await call("/request-message", { ...contact, comment: "!!!!!!" })).toEqual(SENT);
      expect(await call("/request-message", { ...support, comment: "hello!" })).toEqual(SENT);
      expect(await call("/request-message", { ...support, comment: "Привет" })).toEqual(SENT);
      expect(await call("/request-message", { ...support, full_name: "Li" })).toEqual(SENT);
      expect(await supportRows(api.db, email)).toHaveLength(4);
    });

    test("phone: an optional leading + and digits only", async () => {
      const email = uniqueEmail("phone");
      const base = { email, full_name: "Ada Lovelace", comment: "Call me back" };
      for (const phone of ["+123", "123", "0", " +44 ", "+".concat("1".repeat(31)), "1".repeat(32)]) {
        expect([phone, await call("/request-message", { ...base, phone })]).toEqual([phone, SENT]);
      }
      for (const phone of ["+", "12a", "++1", "1+2", "+12 34", "(555) 123", "+1-555", "１２３"]) {
        expect([phone, await call("/request-message", { ...base, phone })]).toEqual([
          phone,
          refused("phone", TEXTS.phone),
        ]);
      }
      for (const phone of ["+".concat("1".repeat(32)), "1".repeat(33)]) {
        expect([phone, await call("/request-message", { ...base, phone })]).toEqual([
          phone,
          refused("phone", TEXTS.phoneTooLong),
        ]);
      }
      expect((await supportRows(api.db, email)).map((r) => r.phone).toSorted()).toEqual(
        ["+123", "123", "0", "+44", "+".concat("1".repeat(31)), "1".repeat(32)].toSorted(),
      );
    });

    test("length limits: email 254, full name 200, comment 5000 characters (code points)", async () => {
      const email = uniqueEmail("limits");
      const base = { email, full_name: "Ada Lovelace", comment: "Hello there" };
      expect(await call("/request-message", { ...base, full_name: "n".repeat(200) })).toEqual(SENT);
      expect(await call("/request-message", { ...base, full_name: "n".repeat(201) })).toEqual(
        refused("full_name", TEXTS.fullNameTooLong),
      );
      expect(await call("/request-message", { ...base, comment: "c".repeat(5000) })).toEqual(SENT);
      expect(await call("/request-message", { ...base, comment: "c".repeat(5001) })).toEqual(
        refused("comment", TEXTS.commentTooLong),
      );
      expect(await call("/request-message", { email, comment: "c".repeat(5001) })).toEqual(
        refused("comment", TEXTS.commentTooLong),
      );
      // 4000 letters outside the BMP: 8000 UTF-16 units, but 4000 characters.
      expect(await call("/request-message", { ...base, comment: "𝒜".repeat(4000) })).toEqual(SENT);

      // Unique per run: the database is shared by both transports.
      const local = (email.split("@")[0] ?? "").padEnd(64, "l");
      const domain = `${"d".repeat(63)}.${"d".repeat(63)}.${"d".repeat(57)}.com`;
      const longest = `${local}@${domain}`;
      expect(longest).toHaveLength(254);
      expect(await call("/request-message", { ...base, email: longest })).toEqual(SENT);
      expect(await call("/request-message", { ...base, email: `l${longest}` })).toEqual(
        refused("email", TEXTS.email),
      );

      const rows = await supportRows(api.db, email);
      expect(rows.map((r) => [r.fullName?.length, [...r.comment].length]).toSorted()).toEqual(
        [
          [200, 11],
          [12, 5000],
          [12, 4000],
        ].toSorted(),
      );
      expect(await supportRows(api.db, longest)).toHaveLength(1);
    });

    test("a 100 kB comment → 413, nothing stored", async () => {
      const email = uniqueEmail("huge");
      for (const body of [
        { email, comment: "x".repeat(100_000) },
        { email, full_name: "Ada Lovelace", phone: "1", comment: "word ".repeat(20_000) },
      ]) {
        expect(await call("/request-message", body)).toEqual({
          status: 413,
          body: { success: false, code: "body_too_large", message: "Request body too large." },
        });
      }
      expect(await supportRows(api.db, email)).toEqual([]);
    });

    test("wrong types → 400 'Invalid request.' naming the field, nothing stored", async () => {
      const email = uniqueEmail("types");
      const support = { email, full_name: "Ada Lovelace", phone: "+123", comment: "Hello there" };
      const cases: [Record<string, unknown>, string][] = [
        [{ ...support, comment: 123456 }, "comment"],
        [{ ...support, comment: ["Hello there"] }, "comment"],
        [{ ...support, comment: null }, "comment"],
        [{ email }, "comment"],
        [{ ...support, email: null }, "email"],
        [{ ...support, email: ["a@b.co"] }, "email"],
        [{ ...support, full_name: 5 }, "full_name"],
        [{ ...support, full_name: null }, "full_name"],
        [{ ...support, phone: 123 }, "phone"],
        [{ ...support, phone: null }, "phone"],
      ];
      for (const [body, path] of cases) {
        const answer = await call("/request-message", body);
        expect([body, answer.status, answer.body.message]).toEqual([body, 400, "Invalid request."]);
        expect((answer.body.issues as { path: string }[]).map((i) => i.path)).toEqual([path]);
      }
      expect(await supportRows(api.db, email)).toEqual([]);
    });

    test("unknown fields are ignored (record 004); without full_name a phone is one of them", async () => {
      const email = uniqueEmail("extra");
      const support = { email, full_name: "Ada Lovelace", phone: "+123", comment: "Support, extra" };
      const bodies: Record<string, unknown>[] = [
        { ...support, kind: "contact", twelveWords: "abandon" },
        { email, comment: "Contact with phone", phone: "+123" },
        { email, comment: "Contact with a bad phone", phone: 123 },
        { email, comment: "Contact, extra", user_id: "00000000-0000-4000-8000-000000000000", ip: "6.6.6.6" },
      ];
      for (const body of bodies) expect([body, await call("/request-message", body)]).toEqual([body, SENT]);
      const rows = (await supportRows(api.db, email)).toSorted((a, b) => a.comment.localeCompare(b.comment));
      expect(rows.map((r) => [r.kind, r.fullName, r.phone, r.comment, r.userId])).toEqual([
        ["contact", null, null, "Contact with a bad phone", null],
        ["contact", null, null, "Contact with phone", null],
        ["contact", null, null, "Contact, extra", null],
        ["support", "Ada Lovelace", "+123", "Support, extra", null],
      ]);
      expect(rows.map((r) => r.ip)).not.toContain("6.6.6.6");
    });

    test("plain text: markup is stored and listed byte-for-byte", async () => {
      const email = uniqueEmail("markup");
      const comment = `<script>alert(1)</script> & "quotes" 'single' &amp; \\ \u200b 🙂`;
      const fullName = `O'Brien <b>Bold</b> & "Co"`;
      expect(await call("/request-message", { email, full_name: fullName, comment })).toEqual(SENT);
      const [row] = await supportRows(api.db, email);
      expect(row?.comment).toBe(comment);
      expect(row?.fullName).toBe(fullName);
      const listed = (await listSupportMessages(api.db, { kind: "support", limit: 1000 })).find(
        (r) => r.email === email,
      );
      expect(listed?.comment).toBe(comment);
      expect(Buffer.from(listed?.comment ?? "").equals(Buffer.from(comment))).toBe(true);
      expect(listed?.fullName).toBe(fullName);
    });
  });
}

// -------------------------------------------------------------------------
// Who the sender is: the connection's address, and when the header counts
// -------------------------------------------------------------------------

/** A contact message to the handler, with the forwarded-address header and the web tier's token when given. */
function contactRequest(comment: string, email: string, header?: string, token?: string) {
  return new Request("http://backend.test/api/request-message", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(header === undefined ? {} : { [HEADER]: header }),
      ...(token === undefined ? {} : { [BACKEND_TOKEN_HEADER]: token }),
    },
    body: JSON.stringify({ platform: PLATFORM, email, comment }),
  });
}

function senderSuite(getDatabase: () => OpenedDatabase) {
  describe("sender address", () => {
    let db: AppDb;
    let handler: ApiHandler;
    beforeAll(() => {
      db = getDatabase().database.db;
      handler = createTestHandler(db);
    });

    test("handed the connection's address (as the listener does): the header is believed only from a configured web tier with its token", async () => {
      // This handler's web tier: loopback, with BACKEND_TOKEN (helpers.ts createTestHandler).
      const email = uniqueEmail("sender");
      const T = BACKEND_TOKEN;
      const cases: [string | undefined, string, string | undefined, string | undefined, string | null][] = [
        // [connection address, family, header, token, stored]
        [undefined, "", undefined, undefined, null],
        // In-process (no connection): our web tier, no token needed.
        [undefined, "", "203.0.113.1", undefined, "203.0.113.1"],
        ["203.0.113.9", "IPv4", undefined, T, "203.0.113.9"],
        // Not a configured host: the token does not help.
        ["203.0.113.9", "IPv4", "198.51.100.1", T, "203.0.113.9"],
        ["::ffff:203.0.113.9", "IPv6", "198.51.100.1", T, "203.0.113.9"],
        ["2001:db8::9", "IPv6", "198.51.100.1", T, "2001:db8::9"],
        ["fe80::9%eth0", "IPv6", "198.51.100.1", T, "fe80::9"],
        ["10.0.0.5", "IPv4", "198.51.100.1", T, "10.0.0.5"],
        ["127.0.0.1", "IPv4", undefined, T, "127.0.0.1"],
        // A configured host with its token: believed.
        ["127.0.0.1", "IPv4", "198.51.100.2", T, "198.51.100.2"],
        ["127.8.9.10", "IPv4", "198.51.100.3", T, "198.51.100.3"],
        ["::1", "IPv6", "198.51.100.4", T, "198.51.100.4"],
        ["::ffff:127.0.0.1", "IPv6", "198.51.100.5", T, "198.51.100.5"],
        ["127.0.0.1", "IPv4", "garbage", T, "127.0.0.1"],
        // A configured host without the token, or with another one: any local process (issue 12).
        ["127.0.0.1", "IPv4", "198.51.100.7", undefined, "127.0.0.1"],
        ["127.0.0.1", "IPv4", "198.51.100.7", `${T}x`, "127.0.0.1"],
        ["127.0.0.1", "IPv4", "198.51.100.7", T.slice(0, -1), "127.0.0.1"],
        ["::1", "IPv6", "198.51.100.7", "", "::1"],
        // No usable connection address: nothing is believed.
        ["", "IPv4", "198.51.100.6", T, null],
      ];
      for (const [i, [address, family, header, token, expected]] of cases.entries()) {
        const comment = `Sender case ${i}`;
        const client =
          address === undefined
            ? undefined
            : { address, family: family as "IPv4" | "IPv6", port: 40_000 + i };
        const response = await handler(contactRequest(comment, email, header, token), client);
        expect(response.status).toBe(200);
        const [row] = (await supportRows(db, email)).filter((r) => r.comment === comment);
        expect([address, header, token, row?.ip]).toEqual([address, header, token, expected]);
      }
    });

    test("without a configured web tier, no connection's header is believed, loopback included", async () => {
      const bare = createTestHandler(db, { webTier: undefined });
      const email = uniqueEmail("bare");
      for (const [i, address] of ["127.0.0.1", "::1", "203.0.113.9"].entries()) {
        const comment = `Bare case ${i}`;
        const response = await bare(contactRequest(comment, email, "198.51.100.8", BACKEND_TOKEN), {
          address,
        });
        expect(response.status).toBe(200);
        const [row] = (await supportRows(db, email)).filter((r) => r.comment === comment);
        expect(row?.ip).toBe(address);
      }
      // In-process, it still is: that is our own web tier.
      expect((await bare(contactRequest("Bare in-process", email, "198.51.100.8"))).status).toBe(200);
      const [row] = (await supportRows(db, email)).filter((r) => r.comment === "Bare in-process");
      expect(row?.ip).toBe("198.51.100.8");
    });

    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === "IPv4")?.address;

    test.skipIf(external === undefined)(
      "over real sockets: the web tier on loopback forwards the header with its token, another interface's connection does not",
      async () => {
        const server = createServer(createRequestListener(handler));
        await new Promise<void>((resolve, reject) => {
          server.once("error", reject);
          server.listen(0, "0.0.0.0", () => resolve());
        });
        const { port } = server.address() as AddressInfo;
        const email = uniqueEmail("sockets");
        try {
          for (const [host, comment] of [
            ["127.0.0.1", "Over loopback"],
            [external, "Over the network"],
          ] as const) {
            const response = await fetch(`http://${host}:${port}/api/request-message`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                [HEADER]: "198.51.100.77",
                [BACKEND_TOKEN_HEADER]: BACKEND_TOKEN,
              },
              body: JSON.stringify({ platform: PLATFORM, email, comment }),
            });
            expect(response.status).toBe(200);
          }
        } finally {
          server.closeAllConnections();
          await new Promise<void>((resolve) => server.close(() => resolve()));
        }
        const rows = await supportRows(db, email);
        expect(Object.fromEntries(rows.map((r) => [r.comment, r.ip]))).toEqual({
          "Over loopback": "198.51.100.77",
          "Over the network": external,
        });
      },
    );
  });
}

// -------------------------------------------------------------------------
// The operators' domain functions
// -------------------------------------------------------------------------

function domainSuite(getDatabase: () => OpenedDatabase) {
  describe("domain", () => {
    let db: AppDb;
    beforeAll(() => {
      db = getDatabase().database.db;
    });

    async function newUser() {
      const email = uniqueEmail("domain");
      const created = await createAccount({ db, keys: deriveServerKeys(BACKEND_SECRET) }, email, "pw");
      if (!created.ok) throw new Error("account");
      await sleep(3);
      return { email, userId: created.userId };
    }
    const seenBy = async (userId: string) =>
      (await clientBalances(db, userId)).messages.map((m) => m.message);

    test("sendMessage to one user: returned row, seen and counted by that user only, stored trimmed", async () => {
      const to = await newUser();
      const other = await newUser();
      const sent = await sendMessage(db, { to: { userId: to.userId }, message: "  Your KYC is approved.\n" });
      if (!sent.ok) throw new Error("not sent");
      expect(sent.message).toEqual({
        id: expect.stringMatching(UUID),
        userId: to.userId,
        message: "Your KYC is approved.",
        createdAt: expect.any(Date),
      });
      expect(await seenBy(to.userId)).toEqual(["Your KYC is approved."]);
      expect(await unreadMessagesCount(db, to.userId)).toBe(1);
      expect(await seenBy(other.userId)).not.toContain("Your KYC is approved.");
      expect(await openMessage(db, other.userId, sent.message.id)).toEqual({
        ok: false,
        reason: "not-found",
      });
    });

    test("sendMessage to all: users who exist see it, a user created afterwards does not", async () => {
      const early = await newUser();
      const text = `Broadcast ${crypto.randomUUID()}`;
      const sent = await sendMessage(db, { to: "all", message: text });
      if (!sent.ok) throw new Error("not sent");
      expect(sent.message.userId).toBeNull();
      await sleep(3);
      const late = await newUser();
      expect(await seenBy(early.userId)).toContain(text);
      expect(await seenBy(late.userId)).not.toContain(text);
      expect(await unreadMessagesCount(db, late.userId)).toBe(0);
      expect(await openMessage(db, late.userId, sent.message.id)).toEqual({ ok: false, reason: "not-found" });
      const opened = await openMessage(db, early.userId, sent.message.id);
      expect(opened).toEqual({ ok: true, openedAt: expect.any(Date), alreadyOpen: false });
    });

    test("sendMessage refuses unknown users and bad text, writing nothing", async () => {
      const before = (await db.select({ n: count() }).from(messages))[0]?.n;
      for (const userId of [crypto.randomUUID(), "not-a-uuid", ""]) {
        expect(await sendMessage(db, { to: { userId }, message: "Hello" })).toEqual({
          ok: false,
          reason: "user-not-found",
        });
      }
      const user = await newUser();
      for (const message of ["", "   \n ", "m".repeat(5001), "a\u0000b", "\ud800"]) {
        await expect(sendMessage(db, { to: { userId: user.userId }, message })).rejects.toBeInstanceOf(
          MessageInputError,
        );
        await expect(sendMessage(db, { to: "all", message })).rejects.toBeInstanceOf(MessageInputError);
      }
      expect((await db.select({ n: count() }).from(messages))[0]?.n).toBe(before);
      const longest = await sendMessage(db, {
        to: { userId: user.userId },
        message: ` ${"m".repeat(5000)} `,
      });
      expect(longest.ok && longest.message.message.length).toBe(5000);
      const markup = await sendMessage(db, { to: { userId: user.userId }, message: "<b>not bold</b> &amp;" });
      expect(markup.ok && markup.message.message).toBe("<b>not bold</b> &amp;");
    });

    test("openMessage: once, the first opened_at kept, concurrent opens make one row", async () => {
      const user = await newUser();
      const sent = await sendMessage(db, { to: { userId: user.userId }, message: "Open me" });
      if (!sent.ok) throw new Error("not sent");
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => openMessage(db, user.userId, sent.message.id)),
      );
      const first = answers.find((a) => a.ok && !a.alreadyOpen);
      expect(answers.filter((a) => a.ok && !a.alreadyOpen)).toHaveLength(1);
      expect(answers.filter((a) => a.ok && a.alreadyOpen)).toHaveLength(5);
      const openedAt = first?.ok ? first.openedAt.getTime() : 0;
      for (const a of answers) expect(a.ok && a.openedAt.getTime()).toBe(openedAt);
      expect(
        await db
          .select()
          .from(messageReads)
          .where(and(eq(messageReads.messageId, sent.message.id), eq(messageReads.userId, user.userId))),
      ).toHaveLength(1);
      expect(await unreadMessagesCount(db, user.userId)).toBe(0);
      for (const id of ["", "x", crypto.randomUUID()]) {
        expect(await openMessage(db, user.userId, id)).toEqual({ ok: false, reason: "not-found" });
      }
      expect(await openMessage(db, "not-a-user", sent.message.id)).toEqual({
        ok: false,
        reason: "not-found",
      });
    });

    test("findUserByEmail normalises the address", async () => {
      const user = await newUser();
      expect(await findUserByEmail(db, ` ${user.email.toUpperCase()} `)).toEqual({
        userId: user.userId,
        email: user.email,
        createdAt: expect.any(Date),
      });
      expect(await findUserByEmail(db, uniqueEmail("nobody"))).toBeUndefined();
    });

    test("listSupportMessages: newest first, by kind, limited, paged; forgetSenderAddresses", async () => {
      const email = uniqueEmail("list");
      const stored: string[] = [];
      for (const [i, kind] of (["contact", "support", "contact", "support", "contact"] as const).entries()) {
        const input =
          kind === "support"
            ? ({ kind, email, fullName: "Ada Lovelace", comment: `List message ${i}` } as const)
            : ({ kind, email, comment: `List message ${i}` } as const);
        const result = await storeSupportMessage(db, input, { ip: "203.0.113.10" });
        if (!result.ok) throw new Error("not stored");
        stored.push(result.message.id);
        await sleep(3);
      }
      const mine = (rows: { email: string; comment: string }[]) =>
        rows.filter((r) => r.email === email).map((r) => r.comment);
      expect(mine(await listSupportMessages(db, { limit: 1000 }))).toEqual(
        [4, 3, 2, 1, 0].map((i) => `List message ${i}`),
      );
      expect(mine(await listSupportMessages(db, { kind: "contact", limit: 1000 }))).toEqual(
        [4, 2, 0].map((i) => `List message ${i}`),
      );
      expect(mine(await listSupportMessages(db, { kind: "support", limit: 1000 }))).toEqual(
        [3, 1].map((i) => `List message ${i}`),
      );
      const [newest] = await listSupportMessages(db, { limit: 1 });
      expect(newest?.id).toBe(stored[4]);
      const page = await listSupportMessages(db, { limit: 2, before: newest?.createdAt ?? new Date() });
      expect(page.map((r) => r.id)).toEqual([stored[3], stored[2]]);
      for (const limit of [0, 1001, 1.5]) {
        await expect(listSupportMessages(db, { limit })).rejects.toBeInstanceOf(MessageInputError);
      }

      // Refused input is not stored; the checker's issues come back.
      expect(
        await storeSupportMessage(db, { kind: "contact", email, comment: "short" }, { ip: null }),
      ).toEqual({
        ok: false,
        issues: [{ path: "comment", message: TEXTS.contactComment }],
      });

      const cutoff = new Date(Date.now() + 60_000);
      expect(await forgetSenderAddresses(db, cutoff)).toBeGreaterThanOrEqual(5);
      expect((await supportRows(db, email)).map((r) => r.ip)).toEqual([null, null, null, null, null]);
      expect(await forgetSenderAddresses(db, cutoff)).toBe(0);
    });
  });
}

describeEachDatabase("database: $name", (getDatabase) => {
  for (const transport of transports) suite(transport, getDatabase);
  senderSuite(getDatabase);
  domainSuite(getDatabase);
});
