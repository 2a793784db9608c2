ALTER TABLE "web_sessions" ADD COLUMN "owner" text;--> statement-breakpoint
CREATE INDEX "web_sessions_owner_idx" ON "web_sessions" USING btree ("owner") WHERE owner IS NOT NULL;