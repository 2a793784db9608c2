CREATE TABLE "fx_rate_days" (
	"day" text NOT NULL,
	"currency" text NOT NULL,
	"multiplier" text NOT NULL,
	"source" text NOT NULL,
	"fetched_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "fx_rate_days_pk" PRIMARY KEY("currency","day"),
	CONSTRAINT "fx_rate_days_day_format" CHECK (day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
	CONSTRAINT "fx_rate_days_multiplier_format" CHECK (multiplier ~ '^[0-9]+(\.[0-9]+)?$')
);
