CREATE TABLE "support_messages" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"kind" text NOT NULL,
	"email" text NOT NULL,
	"full_name" text,
	"phone" text,
	"comment" text NOT NULL,
	"ip" "inet",
	"user_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "support_messages_kind_valid" CHECK (kind IN ('support', 'contact')),
	CONSTRAINT "support_messages_full_name_support" CHECK ((kind = 'support') = (full_name IS NOT NULL)),
	CONSTRAINT "support_messages_phone_support" CHECK (phone IS NULL OR kind = 'support'),
	CONSTRAINT "support_messages_email_length" CHECK (char_length(email) BETWEEN 3 AND 254),
	CONSTRAINT "support_messages_full_name_length" CHECK (char_length(full_name) BETWEEN 2 AND 200),
	CONSTRAINT "support_messages_phone_format" CHECK (phone ~ '^[+]?[0-9]+$' AND char_length(phone) <= 32),
	CONSTRAINT "support_messages_comment_length" CHECK (char_length(comment) BETWEEN 1 AND 5000)
);
--> statement-breakpoint
ALTER TABLE "support_messages" ADD CONSTRAINT "support_messages_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "support_messages_created_idx" ON "support_messages" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "support_messages_kind_created_idx" ON "support_messages" USING btree ("kind","created_at","id");