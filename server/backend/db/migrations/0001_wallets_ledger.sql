CREATE TABLE "audit_log" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_log_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"subject" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_accounts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"coin" text NOT NULL,
	"kind" text NOT NULL,
	"wallet_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ledger_accounts_wallet_unique" UNIQUE("wallet_id"),
	CONSTRAINT "ledger_accounts_id_coin_unique" UNIQUE("id","coin"),
	CONSTRAINT "ledger_accounts_kind_valid" CHECK (kind IN ('wallet', 'deposits', 'withdrawals_pending', 'withdrawals_settled')),
	CONSTRAINT "ledger_accounts_wallet_kind" CHECK ((kind = 'wallet') = (wallet_id IS NOT NULL))
);
--> statement-breakpoint
CREATE TABLE "ledger_transfers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"coin" text NOT NULL,
	"debit_account_id" uuid NOT NULL,
	"credit_account_id" uuid NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"kind" text NOT NULL,
	"external_tx_id" text,
	"pending_id" uuid,
	"amount_usd" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ledger_transfers_amount_positive" CHECK (amount > 0),
	CONSTRAINT "ledger_transfers_distinct_accounts" CHECK (debit_account_id <> credit_account_id),
	CONSTRAINT "ledger_transfers_kind_valid" CHECK (kind IN ('deposit', 'withdrawal_hold', 'withdrawal_post', 'withdrawal_void')),
	CONSTRAINT "ledger_transfers_deposit_txid" CHECK ((kind = 'deposit') = (external_tx_id IS NOT NULL)),
	CONSTRAINT "ledger_transfers_resolution_pending" CHECK ((kind IN ('withdrawal_post', 'withdrawal_void')) = (pending_id IS NOT NULL))
);
--> statement-breakpoint
CREATE TABLE "message_reads" (
	"message_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"opened_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "message_reads_message_id_user_id_pk" PRIMARY KEY("message_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid,
	"message" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "wallets" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"coin" text NOT NULL,
	"address" text,
	"requested_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"issued_at" timestamp (3) with time zone,
	CONSTRAINT "wallets_user_coin_unique" UNIQUE("user_id","coin"),
	CONSTRAINT "wallets_id_coin_unique" UNIQUE("id","coin"),
	CONSTRAINT "wallets_issued_consistent" CHECK ((address IS NULL) = (issued_at IS NULL))
);
--> statement-breakpoint
CREATE TABLE "withdrawals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"wallet_id" uuid NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"amount_usd" text,
	"destination" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"hold_transfer_id" uuid NOT NULL,
	"decided_at" timestamp (3) with time zone,
	"decline_reason" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "withdrawals_hold_transfer_unique" UNIQUE("hold_transfer_id"),
	CONSTRAINT "withdrawals_amount_positive" CHECK (amount > 0),
	CONSTRAINT "withdrawals_status_valid" CHECK (status IN ('pending', 'Confirmed', 'Declined')),
	CONSTRAINT "withdrawals_decided_consistent" CHECK ((status = 'pending') = (decided_at IS NULL))
);
--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_wallet_coin_fk" FOREIGN KEY ("wallet_id","coin") REFERENCES "public"."wallets"("id","coin") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_transfers" ADD CONSTRAINT "ledger_transfers_debit_fk" FOREIGN KEY ("debit_account_id","coin") REFERENCES "public"."ledger_accounts"("id","coin") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_transfers" ADD CONSTRAINT "ledger_transfers_credit_fk" FOREIGN KEY ("credit_account_id","coin") REFERENCES "public"."ledger_accounts"("id","coin") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_transfers" ADD CONSTRAINT "ledger_transfers_pending_fk" FOREIGN KEY ("pending_id") REFERENCES "public"."ledger_transfers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "message_reads" ADD CONSTRAINT "message_reads_message_id_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."messages"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "message_reads" ADD CONSTRAINT "message_reads_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD CONSTRAINT "withdrawals_wallet_id_wallets_id_fk" FOREIGN KEY ("wallet_id") REFERENCES "public"."wallets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD CONSTRAINT "withdrawals_hold_transfer_id_ledger_transfers_id_fk" FOREIGN KEY ("hold_transfer_id") REFERENCES "public"."ledger_transfers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_created_idx" ON "audit_log" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "audit_log_subject_idx" ON "audit_log" USING btree ("subject");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_accounts_system_unique" ON "ledger_accounts" USING btree ("coin","kind") WHERE wallet_id IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_transfers_coin_external_tx_unique" ON "ledger_transfers" USING btree ("coin","external_tx_id") WHERE external_tx_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_transfers_pending_unique" ON "ledger_transfers" USING btree ("pending_id") WHERE pending_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ledger_transfers_debit_idx" ON "ledger_transfers" USING btree ("debit_account_id");--> statement-breakpoint
CREATE INDEX "ledger_transfers_credit_idx" ON "ledger_transfers" USING btree ("credit_account_id","created_at");--> statement-breakpoint
CREATE INDEX "messages_user_created_idx" ON "messages" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "wallets_coin_address_unique" ON "wallets" USING btree ("coin","address") WHERE address IS NOT NULL;--> statement-breakpoint
CREATE INDEX "wallets_pending_requests_idx" ON "wallets" USING btree ("requested_at") WHERE address IS NULL;--> statement-breakpoint
CREATE INDEX "withdrawals_wallet_created_idx" ON "withdrawals" USING btree ("wallet_id","created_at");--> statement-breakpoint
-- Hand-written below (drizzle-kit does not model triggers): the ledger and the
-- audit log are append-only, also against a mistaken UPDATE/DELETE/TRUNCATE.
CREATE FUNCTION "refuse_append_only_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;--> statement-breakpoint
CREATE TRIGGER "ledger_transfers_append_only" BEFORE UPDATE OR DELETE ON "ledger_transfers" FOR EACH ROW EXECUTE FUNCTION "refuse_append_only_change"();--> statement-breakpoint
CREATE TRIGGER "ledger_transfers_no_truncate" BEFORE TRUNCATE ON "ledger_transfers" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_append_only_change"();--> statement-breakpoint
CREATE TRIGGER "audit_log_append_only" BEFORE UPDATE OR DELETE ON "audit_log" FOR EACH ROW EXECUTE FUNCTION "refuse_append_only_change"();--> statement-breakpoint
CREATE TRIGGER "audit_log_no_truncate" BEFORE TRUNCATE ON "audit_log" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_append_only_change"();
