// Staff members of the back office (issue 26): enrolment links, TOTP with
// replay refusal, recovery codes, the sign-in lock, sessions and their end by
// role change, removal and an admin — against both databases.
import { eq } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import { beforeAll, describe, expect, test } from "vitest";
import { auditLog, staffMembers, staffSessions } from "../../server/backend/db/schema.ts";
import * as staff from "../../server/backend/domain/staff.ts";
import type { AppDb } from "../../server/backend/db/index.ts";
import { describeEachDatabase } from "./api-suite.ts";
import { BACKEND_SECRET } from "./helpers.ts";

const ROOT = { actor: "root" };
const PASSWORD = "a long staff password";

function codeAt(secret: string, at: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: at });
}

let n = 0;
const email = (label: string) => `${label}-${Date.now()}-${++n}@staff.example`;

/** Adds and enrols a member; returns their e-mail, secret and recovery codes, and the time used. */
async function enrolled(db: AppDb, roles: string[], label = "member") {
  const link = await staff.addStaff(db, { email: email(label), roles }, ROOT);
  const view = await staff.openEnrolment(db, BACKEND_SECRET, link.token);
  if (!view.ok) throw new Error("enrolment not open");
  // Enrol two steps in the past, so "now" is a fresh step for sign-in.
  const at = Date.now() - 60_000;
  const done = await staff.completeEnrolment(
    db,
    BACKEND_SECRET,
    { token: link.token, password: PASSWORD, code: codeAt(view.secret, at) },
    at,
  );
  if (!done.ok) throw new Error(`enrolment failed: ${done.reason}`);
  return { email: link.member.email, secret: view.secret, codes: done.recoveryCodes, token: link.token };
}

async function signIn(db: AppDb, who: { email: string; secret: string }, at = Date.now()) {
  const first = await staff.signInWithPassword(db, { email: who.email, password: PASSWORD });
  if (!first.ok) throw new Error(`password step: ${first.reason}`);
  return staff.signInWithCode(db, BACKEND_SECRET, { token: first.token, code: codeAt(who.secret, at) }, at);
}

describeEachDatabase("staff members on $name", (getDatabase) => {
  let db: AppDb;
  beforeAll(() => {
    db = getDatabase().database.db;
  });

  describe("enrolment", () => {
    test("a link opens once: enrolled, then used; its token is stored as a hash only", async () => {
      const who = await enrolled(db, ["approver"]);
      expect(who.codes).toHaveLength(10);
      expect(new Set(who.codes).size).toBe(10);
      expect(await staff.openEnrolment(db, BACKEND_SECRET, who.token)).toEqual({ ok: false, reason: "used" });
      const [row] = await db.select().from(staffMembers).where(eq(staffMembers.email, who.email));
      expect(row?.enrolledAt).not.toBeNull();
      // The secret is stored encrypted: its base32 text appears nowhere in the row.
      expect(JSON.stringify(row)).not.toContain(who.secret);
      expect(JSON.stringify(row)).not.toContain(who.token);
      const audit = await db.select().from(auditLog).where(eq(auditLog.subject, who.email));
      expect(audit.map((a) => a.action)).toEqual(["staff.add", "staff.enrol"]);
      expect(JSON.stringify(audit)).not.toContain(who.secret);
      expect(JSON.stringify(audit)).not.toContain(who.token);
    });

    test("a forged, expired or reused link creates nothing", async () => {
      expect(await staff.openEnrolment(db, BACKEND_SECRET, "x".repeat(43))).toEqual({
        ok: false,
        reason: "unknown",
      });
      expect(await staff.openEnrolment(db, BACKEND_SECRET, "../../etc")).toEqual({
        ok: false,
        reason: "unknown",
      });
      const link = await staff.addStaff(db, { email: email("late"), roles: ["support"] }, ROOT);
      await db.execute(
        `UPDATE staff_enrolments SET expires_at = now() - interval '1 second' WHERE staff_id = '${link.member.id}'`,
      );
      expect(await staff.openEnrolment(db, BACKEND_SECRET, link.token)).toEqual({
        ok: false,
        reason: "expired",
      });
      const done = await staff.completeEnrolment(db, BACKEND_SECRET, {
        token: link.token,
        password: PASSWORD,
        code: "123456",
      });
      expect(done).toEqual({ ok: false, reason: "expired" });
      const [row] = await db.select().from(staffMembers).where(eq(staffMembers.id, link.member.id));
      expect(row?.passwordHash).toBeNull();
    });

    test("a short password or a wrong code sets nothing", async () => {
      const link = await staff.addStaff(db, { email: email("weak"), roles: ["support"] }, ROOT);
      const view = await staff.openEnrolment(db, BACKEND_SECRET, link.token);
      if (!view.ok) throw new Error("not open");
      expect(
        await staff.completeEnrolment(db, BACKEND_SECRET, {
          token: link.token,
          password: "short",
          code: codeAt(view.secret, Date.now()),
        }),
      ).toEqual({ ok: false, reason: "password", message: "Must be at least 12 characters." });
      expect(
        await staff.completeEnrolment(db, BACKEND_SECRET, {
          token: link.token,
          password: PASSWORD,
          code: "000000",
        }),
      ).toEqual({ ok: false, reason: "code" });
      // The link still works: nothing was used up.
      expect((await staff.openEnrolment(db, BACKEND_SECRET, link.token)).ok).toBe(true);
    });

    test("the same e-mail twice and unknown roles are refused", async () => {
      const address = email("twice");
      await staff.addStaff(db, { email: address, roles: ["support"] }, ROOT);
      await expect(
        staff.addStaff(db, { email: address.toUpperCase(), roles: ["support"] }, ROOT),
      ).rejects.toThrow(`${address} is already a staff member.`);
      await expect(staff.addStaff(db, { email: email("boss"), roles: ["boss"] }, ROOT)).rejects.toThrow(
        "Unknown role boss: the roles are support, compliance, approver, treasury, admin.",
      );
    });
  });

  describe("sign-in", () => {
    test("password then code opens a signed-in session under a new token", async () => {
      const who = await enrolled(db, ["approver", "support"]);
      const first = await staff.signInWithPassword(db, { email: who.email, password: PASSWORD });
      if (!first.ok) throw new Error("password refused");
      const pending = await staff.readStaffSession(db, first.token);
      expect(pending?.stage).toBe("password");
      const done = await staff.signInWithCode(db, BACKEND_SECRET, {
        token: first.token,
        code: codeAt(who.secret, Date.now()),
      });
      if (!done.ok) throw new Error(`code refused: ${done.reason}`);
      expect(done.token).not.toBe(first.token);
      expect(await staff.readStaffSession(db, first.token)).toBeNull();
      const session = await staff.readStaffSession(db, done.token);
      expect(session).toMatchObject({ email: who.email, stage: "signed-in", roles: ["support", "approver"] });
    });

    test("a code is accepted once: the same step replayed is refused", async () => {
      const who = await enrolled(db, ["approver"]);
      const at = Date.now();
      expect((await signIn(db, who, at)).ok).toBe(true);
      const first = await staff.signInWithPassword(db, { email: who.email, password: PASSWORD });
      if (!first.ok) throw new Error("password refused");
      expect(
        await staff.signInWithCode(
          db,
          BACKEND_SECRET,
          { token: first.token, code: codeAt(who.secret, at) },
          at,
        ),
      ).toEqual({ ok: false, reason: "replayed" });
    });

    test("a recovery code works once in place of a code", async () => {
      const who = await enrolled(db, ["support"]);
      const [code = ""] = who.codes;
      for (const expected of [true, false]) {
        const first = await staff.signInWithPassword(db, { email: who.email, password: PASSWORD });
        if (!first.ok) throw new Error("password refused");
        const done = await staff.signInWithCode(db, BACKEND_SECRET, {
          token: first.token,
          code: code.toUpperCase(),
        });
        expect(done.ok).toBe(expected);
      }
    });

    test("wrong passwords and wrong codes count toward one lock; an admin lifts it", async () => {
      const who = await enrolled(db, ["support"]);
      for (let i = 0; i < 5; i++) {
        expect(await staff.signInWithPassword(db, { email: who.email, password: "wrong password!" })).toEqual(
          {
            ok: false,
            reason: "invalid",
          },
        );
      }
      for (let i = 0; i < 4; i++) {
        const first = await staff.signInWithPassword(db, { email: who.email, password: PASSWORD });
        if (!first.ok) throw new Error("password refused");
        expect(
          await staff.signInWithCode(db, BACKEND_SECRET, { token: first.token, code: "000000" }),
        ).toEqual({
          ok: false,
          reason: "invalid",
        });
      }
      // The tenth failure locks: even the right password is refused now.
      const tenth = await staff.signInWithPassword(db, { email: who.email, password: "wrong password!" });
      expect(tenth).toEqual({ ok: false, reason: "locked" });
      expect(await staff.signInWithPassword(db, { email: who.email, password: PASSWORD })).toEqual({
        ok: false,
        reason: "locked",
      });
      expect(await staff.unlockStaff(db, { email: who.email, reason: "checked by phone" }, ROOT)).toBe(10);
      expect((await signIn(db, who)).ok).toBe(true);
    });

    test("an unknown e-mail is answered like a wrong password", async () => {
      expect(await staff.signInWithPassword(db, { email: email("nobody"), password: PASSWORD })).toEqual({
        ok: false,
        reason: "invalid",
      });
    });
  });

  describe("sessions end", () => {
    test("by a role change, by removal and by an admin's end-sessions", async () => {
      const admin = await enrolled(db, ["admin"], "admin");
      const who = await enrolled(db, ["approver"]);
      const byRoles = await signIn(db, who);
      if (!byRoles.ok) throw new Error("sign-in");
      await staff.setStaffRoles(
        db,
        { email: who.email, roles: ["support"], reason: "moved team" },
        {
          actor: admin.email,
          actorRoles: ["admin"],
        },
      );
      expect(await staff.readStaffSession(db, byRoles.token)).toBeNull();
      const [roles] = await db.select().from(auditLog).where(eq(auditLog.action, "staff.roles"));
      expect(roles).toMatchObject({ actor: admin.email, actorRoles: ["admin"], reason: "moved team" });

      const byAdmin = await signIn(db, who, Date.now() + 30_000);
      if (!byAdmin.ok) throw new Error(`sign-in: ${byAdmin.reason}`);
      expect(await staff.endStaffSessions(db, { email: who.email, reason: "laptop lost" }, ROOT)).toBe(1);
      expect(await staff.readStaffSession(db, byAdmin.token)).toBeNull();

      const byRemoval = await signIn(db, who, Date.now() + 60_000);
      if (!byRemoval.ok) throw new Error(`sign-in: ${byRemoval.reason}`);
      await staff.removeStaff(db, { email: who.email, reason: "left" }, ROOT);
      expect(await staff.readStaffSession(db, byRemoval.token)).toBeNull();
      expect(await staff.signInWithPassword(db, { email: who.email, password: PASSWORD })).toEqual({
        ok: false,
        reason: "invalid",
      });
    });

    test("an idle session ends after 15 minutes and any after 8 hours", async () => {
      const who = await enrolled(db, ["support"]);
      const idle = await signIn(db, who);
      if (!idle.ok) throw new Error("sign-in");
      await db
        .update(staffSessions)
        .set({ lastSeenAt: new Date(Date.now() - 15 * 60_000 - 1000) })
        .where(eq(staffSessions.stage, "signed-in"));
      expect(await staff.readStaffSession(db, idle.token)).toBeNull();
      const old = await signIn(db, who, Date.now() + 30_000);
      if (!old.ok) throw new Error("sign-in");
      await db.update(staffSessions).set({ absoluteExpiresAt: new Date(Date.now() - 1) });
      expect(await staff.readStaffSession(db, old.token)).toBeNull();
    });

    test("the purge drops sessions past their deadlines and keeps live ones", async () => {
      const who = await enrolled(db, ["support"]);
      const live = await signIn(db, who);
      if (!live.ok) throw new Error("sign-in");
      const idle = await signIn(db, who, Date.now() + 30_000);
      if (!idle.ok) throw new Error("sign-in");
      const [member] = await db.select().from(staffMembers).where(eq(staffMembers.email, who.email));
      const ids = (
        await db
          .select()
          .from(staffSessions)
          .where(eq(staffSessions.staffId, member?.id ?? ""))
      )
        .map((row) => row.id)
        .toSorted();
      expect(ids).toHaveLength(2);
      // One idle past 15 minutes; an abandoned password step past its 5 minutes.
      await db
        .update(staffSessions)
        .set({ lastSeenAt: new Date(Date.now() - 16 * 60_000) })
        .where(eq(staffSessions.id, ids[0] ?? ""));
      const abandoned = await staff.signInWithPassword(db, { email: who.email, password: PASSWORD });
      if (!abandoned.ok) throw new Error("password step");
      await db
        .update(staffSessions)
        .set({ absoluteExpiresAt: new Date(Date.now() - 1) })
        .where(eq(staffSessions.stage, "password"));
      expect(await staff.purgeStaffSessions(db)).toBeGreaterThanOrEqual(2);
      const left = await db
        .select()
        .from(staffSessions)
        .where(eq(staffSessions.staffId, member?.id ?? ""));
      expect(left.map((row) => row.id)).toEqual([ids[1]]);
    });

    test("the last admin cannot be removed", async () => {
      const rows = await staff.listStaff(db);
      for (const m of rows.filter((r) => r.roles.includes("admin"))) {
        await db.update(staffMembers).set({ removedAt: new Date() }).where(eq(staffMembers.id, m.id));
      }
      const only = await enrolled(db, ["admin"], "only-admin");
      await expect(staff.removeStaff(db, { email: only.email, reason: "test" }, ROOT)).rejects.toThrow(
        "That is the last admin; add another admin first (or use the command line).",
      );
    });
  });
});
