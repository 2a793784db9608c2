CREATE TABLE "secret_checks" (
	"name" text PRIMARY KEY NOT NULL,
	"check_value" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
