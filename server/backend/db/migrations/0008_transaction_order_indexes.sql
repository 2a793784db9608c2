DROP INDEX "ledger_transfers_credit_idx";--> statement-breakpoint
DROP INDEX "withdrawals_wallet_created_idx";--> statement-breakpoint
CREATE INDEX "ledger_transfers_credit_idx" ON "ledger_transfers" USING btree ("credit_account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "withdrawals_wallet_created_idx" ON "withdrawals" USING btree ("wallet_id","created_at","id");