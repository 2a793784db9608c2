CREATE TABLE "four_eyes_thresholds" (
	"coin" text PRIMARY KEY NOT NULL,
	"usd" text NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "send_approvals" (
	"withdrawal_id" uuid NOT NULL,
	"approver" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "send_approvals_withdrawal_id_approver_pk" PRIMARY KEY("withdrawal_id","approver")
);
--> statement-breakpoint
CREATE TABLE "staff_enrolments" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"staff_id" uuid NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "staff_members" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"email" text NOT NULL,
	"roles" text[] NOT NULL,
	"password_hash" text,
	"totp_secret" text,
	"totp_last_step" bigint,
	"failed_sign_ins" integer DEFAULT 0 NOT NULL,
	"enrolled_at" timestamp (3) with time zone,
	"removed_at" timestamp (3) with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "staff_members_email_unique" UNIQUE("email"),
	CONSTRAINT "staff_members_roles_valid" CHECK (cardinality(roles) >= 1 AND roles <@ ARRAY['support','compliance','approver','treasury','admin']::text[]),
	CONSTRAINT "staff_members_enrolled_consistent" CHECK ((enrolled_at IS NULL) = (password_hash IS NULL))
);
--> statement-breakpoint
CREATE TABLE "staff_recovery_codes" (
	"staff_id" uuid NOT NULL,
	"code_hash" text NOT NULL,
	"used_at" timestamp (3) with time zone,
	CONSTRAINT "staff_recovery_codes_staff_id_code_hash_pk" PRIMARY KEY("staff_id","code_hash")
);
--> statement-breakpoint
CREATE TABLE "staff_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"staff_id" uuid NOT NULL,
	"stage" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"absolute_expires_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "staff_sessions_stage_valid" CHECK (stage IN ('password', 'signed-in'))
);
--> statement-breakpoint
CREATE TABLE "support_replies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"support_message_id" uuid NOT NULL,
	"message_id" uuid NOT NULL,
	"author" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "actor_roles" text[];--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "user_id" uuid;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "reason" text;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "decided_by" text;--> statement-breakpoint
ALTER TABLE "send_approvals" ADD CONSTRAINT "send_approvals_withdrawal_id_withdrawals_id_fk" FOREIGN KEY ("withdrawal_id") REFERENCES "public"."withdrawals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "staff_enrolments" ADD CONSTRAINT "staff_enrolments_staff_id_staff_members_id_fk" FOREIGN KEY ("staff_id") REFERENCES "public"."staff_members"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "staff_recovery_codes" ADD CONSTRAINT "staff_recovery_codes_staff_id_staff_members_id_fk" FOREIGN KEY ("staff_id") REFERENCES "public"."staff_members"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "staff_sessions" ADD CONSTRAINT "staff_sessions_staff_id_staff_members_id_fk" FOREIGN KEY ("staff_id") REFERENCES "public"."staff_members"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_replies" ADD CONSTRAINT "support_replies_support_message_id_support_messages_id_fk" FOREIGN KEY ("support_message_id") REFERENCES "public"."support_messages"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_replies" ADD CONSTRAINT "support_replies_message_id_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."messages"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "staff_enrolments_staff_idx" ON "staff_enrolments" USING btree ("staff_id");--> statement-breakpoint
CREATE INDEX "staff_sessions_staff_idx" ON "staff_sessions" USING btree ("staff_id");--> statement-breakpoint
CREATE INDEX "support_replies_support_message_idx" ON "support_replies" USING btree ("support_message_id");--> statement-breakpoint
CREATE INDEX "audit_log_actor_created_idx" ON "audit_log" USING btree ("actor","created_at");--> statement-breakpoint
CREATE INDEX "audit_log_user_created_idx" ON "audit_log" USING btree ("user_id","created_at") WHERE user_id IS NOT NULL;