CREATE TABLE "rate_limits" (
	"key" text PRIMARY KEY NOT NULL,
	"scope" text NOT NULL,
	"hits" bigint NOT NULL,
	"window_started_at" timestamp (3) with time zone NOT NULL,
	"blocked_until" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "rate_limits_hits_nonnegative" CHECK (hits >= 0)
);
--> statement-breakpoint
CREATE INDEX "rate_limits_scope_updated_idx" ON "rate_limits" USING btree ("scope","updated_at");