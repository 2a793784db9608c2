ALTER TABLE "ledger_accounts" ADD COLUMN "balance" numeric(78, 0);--> statement-breakpoint
-- Hand-written below (drizzle-kit does not model triggers or data changes); record 017.
-- A wallet account's running balance is applied by the database itself, in the
-- same statement as every transfer row, so no code path can forget it. System
-- accounts keep none (balance NULL): every send of a coin would queue on their row.
CREATE FUNCTION "ledger_transfers_apply_balance"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "ledger_accounts" SET "balance" = "balance" - NEW."amount"
    WHERE "id" = NEW."debit_account_id" AND "balance" IS NOT NULL;
  UPDATE "ledger_accounts" SET "balance" = "balance" + NEW."amount"
    WHERE "id" = NEW."credit_account_id" AND "balance" IS NOT NULL;
  RETURN NULL;
END;
$$;--> statement-breakpoint
-- Creating the trigger locks ledger_transfers against inserts until this migration commits (the
-- migrations run in one transaction), so no transfer lands between the backfill and the trigger.
CREATE TRIGGER "ledger_transfers_balance" AFTER INSERT ON "ledger_transfers" FOR EACH ROW EXECUTE FUNCTION "ledger_transfers_apply_balance"();--> statement-breakpoint
LOCK TABLE "ledger_transfers" IN SHARE ROW EXCLUSIVE MODE;--> statement-breakpoint
-- Backfill: every wallet account's balance from its transfers (credits − debits).
UPDATE "ledger_accounts" AS a SET "balance" =
  coalesce((SELECT sum(t."amount") FROM "ledger_transfers" t WHERE t."credit_account_id" = a."id"), 0)
  - coalesce((SELECT sum(t."amount") FROM "ledger_transfers" t WHERE t."debit_account_id" = a."id"), 0)
  WHERE a."kind" = 'wallet';--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_balance_wallet_only" CHECK ((kind = 'wallet') = (balance IS NOT NULL));--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_balance_nonnegative" CHECK (balance >= 0);--> statement-breakpoint
-- The running balance moves only with a transfer: an account starts at 0, and an UPDATE of the
-- balance is accepted only from the trigger above (nested: trigger depth 2), never directly.
CREATE FUNCTION "ledger_accounts_balance_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW."balance" <> 0 THEN
      RAISE EXCEPTION 'a ledger account starts with a balance of 0' USING ERRCODE = 'insufficient_privilege';
    END IF;
  ELSIF NEW."balance" IS DISTINCT FROM OLD."balance" AND pg_trigger_depth() < 2 THEN
    RAISE EXCEPTION 'ledger_accounts.balance changes only with a transfer' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "ledger_accounts_balance_guard" BEFORE INSERT OR UPDATE OF "balance" ON "ledger_accounts" FOR EACH ROW EXECUTE FUNCTION "ledger_accounts_balance_guard"();
