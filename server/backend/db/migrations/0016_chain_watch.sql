CREATE TABLE "chain_blocks" (
	"network" text NOT NULL,
	"number" bigint NOT NULL,
	"hash" text NOT NULL,
	"parent_hash" text NOT NULL,
	CONSTRAINT "chain_blocks_network_number_pk" PRIMARY KEY("network","number")
);
--> statement-breakpoint
CREATE TABLE "chain_cursors" (
	"network" text PRIMARY KEY NOT NULL,
	"block_number" bigint NOT NULL,
	"block_hash" text,
	"head" bigint,
	"last_error" text,
	"last_error_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD COLUMN "network" text;--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD COLUMN "block_number" bigint;--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD COLUMN "block_hash" text;--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD COLUMN "orphaned_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "chain_deposits_block_idx" ON "chain_deposits" USING btree ("network","block_number") WHERE network IS NOT NULL;--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD CONSTRAINT "chain_deposits_block_complete" CHECK ((network IS NULL) = (block_number IS NULL) AND (network IS NULL) = (block_hash IS NULL));--> statement-breakpoint
-- Hand-written (drizzle-kit does not model triggers), record 053: a pending deposit withdrawn
-- because its block was reorganised away is deleted; its owner's pages refresh as for any
-- other change of a deposit (record 033).
CREATE FUNCTION "chain_deposits_withdrawn_live_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "coinkeep_notify_user"('balances', w."user_id") FROM "wallets" w WHERE w."id" = OLD."wallet_id";
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "chain_deposits_withdrawn_live_event" AFTER DELETE ON "chain_deposits" FOR EACH ROW EXECUTE FUNCTION "chain_deposits_withdrawn_live_event"();
