CREATE TABLE "address_pool" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"coin" text NOT NULL,
	"address" text NOT NULL,
	"added_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"wallet_id" uuid,
	"taken_at" timestamp (3) with time zone,
	CONSTRAINT "address_pool_wallet_unique" UNIQUE("wallet_id"),
	CONSTRAINT "address_pool_coin_address_unique" UNIQUE("coin","address"),
	CONSTRAINT "address_pool_taken_consistent" CHECK ((wallet_id IS NULL) = (taken_at IS NULL))
);
--> statement-breakpoint
CREATE TABLE "chain_deposits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"coin" text NOT NULL,
	"txid" text NOT NULL,
	"output_index" bigint NOT NULL,
	"address" text NOT NULL,
	"wallet_id" uuid NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"confirmations" bigint,
	"status" text NOT NULL,
	"transfer_id" uuid,
	"amount_usd" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"credited_at" timestamp (3) with time zone,
	CONSTRAINT "chain_deposits_transfer_unique" UNIQUE("transfer_id"),
	CONSTRAINT "chain_deposits_output_unique" UNIQUE("coin","txid","output_index"),
	CONSTRAINT "chain_deposits_status_valid" CHECK (status IN ('pending', 'credited')),
	CONSTRAINT "chain_deposits_credited_consistent" CHECK ((status = 'credited') = (transfer_id IS NOT NULL) AND (status = 'credited') = (credited_at IS NOT NULL)),
	CONSTRAINT "chain_deposits_amount_positive" CHECK (amount > 0),
	CONSTRAINT "chain_deposits_output_nonnegative" CHECK (output_index >= 0),
	CONSTRAINT "chain_deposits_confirmations_nonnegative" CHECK (confirmations IS NULL OR confirmations >= 0)
);
--> statement-breakpoint
CREATE TABLE "custody_holdings" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "custody_holdings_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"coin" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"source" text NOT NULL,
	"actor" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "custody_holdings_amount_nonnegative" CHECK (amount >= 0),
	CONSTRAINT "custody_holdings_source_length" CHECK (char_length(source) BETWEEN 1 AND 500)
);
--> statement-breakpoint
CREATE TABLE "custody_index_counters" (
	"coin" text NOT NULL,
	"key_id" text NOT NULL,
	"next_index" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "custody_index_counters_coin_key_id_pk" PRIMARY KEY("coin","key_id"),
	CONSTRAINT "custody_index_counters_range" CHECK (next_index BETWEEN 0 AND 2147483648)
);
--> statement-breakpoint
CREATE TABLE "custody_settings" (
	"coin" text PRIMARY KEY NOT NULL,
	"issuing" text DEFAULT 'auto' NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "custody_settings_issuing_valid" CHECK (issuing IN ('auto', 'manual'))
);
--> statement-breakpoint
CREATE TABLE "pauses" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"what" text NOT NULL,
	"coin" text,
	"user_id" uuid,
	"reason" text NOT NULL,
	"actor" text NOT NULL,
	"automatic" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pauses_what_valid" CHECK (what IN ('sends', 'deposits', 'issuing')),
	CONSTRAINT "pauses_one_scope" CHECK ((coin IS NULL) <> (user_id IS NULL)),
	CONSTRAINT "pauses_reason_length" CHECK (char_length(reason) BETWEEN 1 AND 1000)
);
--> statement-breakpoint
DROP INDEX "ledger_transfers_coin_external_tx_unique";--> statement-breakpoint
ALTER TABLE "wallets" ADD COLUMN "address_source" text;--> statement-breakpoint
ALTER TABLE "wallets" ADD COLUMN "derivation_key" text;--> statement-breakpoint
ALTER TABLE "wallets" ADD COLUMN "derivation_index" bigint;--> statement-breakpoint
ALTER TABLE "address_pool" ADD CONSTRAINT "address_pool_wallet_id_wallets_id_fk" FOREIGN KEY ("wallet_id") REFERENCES "public"."wallets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD CONSTRAINT "chain_deposits_wallet_id_wallets_id_fk" FOREIGN KEY ("wallet_id") REFERENCES "public"."wallets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD CONSTRAINT "chain_deposits_transfer_id_ledger_transfers_id_fk" FOREIGN KEY ("transfer_id") REFERENCES "public"."ledger_transfers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pauses" ADD CONSTRAINT "pauses_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "address_pool_free_idx" ON "address_pool" USING btree ("coin","created_at","id") WHERE wallet_id IS NULL;--> statement-breakpoint
CREATE INDEX "chain_deposits_pending_idx" ON "chain_deposits" USING btree ("wallet_id","created_at","id") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "custody_holdings_coin_idx" ON "custody_holdings" USING btree ("coin","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "pauses_coin_unique" ON "pauses" USING btree ("what","coin") WHERE coin IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "pauses_user_unique" ON "pauses" USING btree ("what","user_id") WHERE user_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ledger_transfers_coin_external_tx_idx" ON "ledger_transfers" USING btree ("coin","external_tx_id") WHERE external_tx_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "wallets_coin_derivation_unique" ON "wallets" USING btree ("coin","derivation_key","derivation_index") WHERE derivation_index IS NOT NULL;--> statement-breakpoint
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_address_source_valid" CHECK (address_source IS NULL OR (address IS NOT NULL AND address_source IN ('manual', 'derived', 'pool')));--> statement-breakpoint
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_derivation_consistent" CHECK ((derivation_key IS NULL) = (derivation_index IS NULL) AND (address_source IS NOT DISTINCT FROM 'derived') = (derivation_index IS NOT NULL));--> statement-breakpoint
-- Hand-written (issue 16, record 039). Every deposit credited before chain keys existed becomes its
-- chain_deposits row (output 0, confirmations unknown: an operator vouched for it), so the chain
-- output it credited stays credited once now that (coin, txid, output_index) is the key.
INSERT INTO "chain_deposits" ("id", "coin", "txid", "output_index", "address", "wallet_id", "amount", "confirmations", "status", "transfer_id", "amount_usd", "created_at", "credited_at")
SELECT t."id", t."coin", t."external_tx_id", 0, w."address", w."id", t."amount", NULL, 'credited', t."id", t."amount_usd", t."created_at", t."created_at"
FROM "ledger_transfers" t
JOIN "ledger_accounts" a ON a."id" = t."credit_account_id"
JOIN "wallets" w ON w."id" = a."wallet_id"
WHERE t."kind" = 'deposit';--> statement-breakpoint
-- A deposit seen (pending) or its confirmations moved: the owner's pages refresh (record 033).
CREATE FUNCTION "chain_deposits_live_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "coinkeep_notify_user"('balances', w."user_id") FROM "wallets" w WHERE w."id" = NEW."wallet_id";
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "chain_deposits_live_event" AFTER INSERT OR UPDATE OF "status", "confirmations" ON "chain_deposits" FOR EACH ROW EXECUTE FUNCTION "chain_deposits_live_event"();
