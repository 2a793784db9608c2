CREATE TABLE "send_requests" (
	"user_id" uuid NOT NULL,
	"idempotency_key" text NOT NULL,
	"request_hash" text NOT NULL,
	"withdrawal_id" uuid NOT NULL,
	"response" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "send_requests_user_id_idempotency_key_pk" PRIMARY KEY("user_id","idempotency_key"),
	CONSTRAINT "send_requests_withdrawal_unique" UNIQUE("withdrawal_id")
);
--> statement-breakpoint
ALTER TABLE "send_requests" ADD CONSTRAINT "send_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "send_requests" ADD CONSTRAINT "send_requests_withdrawal_id_withdrawals_id_fk" FOREIGN KEY ("withdrawal_id") REFERENCES "public"."withdrawals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "withdrawals_pending_idx" ON "withdrawals" USING btree ("created_at") WHERE status = 'pending';