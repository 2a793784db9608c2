-- Hand-written (drizzle-kit does not model triggers); record 033.
-- Live events: every change a signed-in page shows raises a notification in the same
-- transaction as the change itself, so it is delivered once the change commits (never for a
-- change rolled back), to every process listening on this database, whoever made it (the API,
-- an operator's command, another server process). PostgreSQL folds identical notifications of
-- one transaction into one. Payload on channel coinkeep_events: '<kind>:<user id>' or
-- '<kind>:*' (every user). No amount, address or text travels in a notification.
CREATE FUNCTION "coinkeep_notify_user"("kind" text, "user_id" uuid) RETURNS void LANGUAGE sql AS $$
  SELECT pg_notify('coinkeep_events', "kind" || ':' || coalesce("user_id"::text, '*'));
$$;--> statement-breakpoint
CREATE FUNCTION "messages_live_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "coinkeep_notify_user"('messages', NEW."user_id");
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "messages_live_event" AFTER INSERT ON "messages" FOR EACH ROW EXECUTE FUNCTION "messages_live_event"();--> statement-breakpoint
CREATE TRIGGER "message_reads_live_event" AFTER INSERT ON "message_reads" FOR EACH ROW EXECUTE FUNCTION "messages_live_event"();--> statement-breakpoint
-- A wallet account's running balance moved (a deposit, a send's hold, a declined send's refund).
CREATE FUNCTION "ledger_accounts_live_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."wallet_id" IS NOT NULL AND NEW."balance" IS DISTINCT FROM OLD."balance" THEN
    PERFORM "coinkeep_notify_user"('balances', w."user_id") FROM "wallets" w WHERE w."id" = NEW."wallet_id";
  END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "ledger_accounts_live_event" AFTER UPDATE OF "balance" ON "ledger_accounts" FOR EACH ROW EXECUTE FUNCTION "ledger_accounts_live_event"();--> statement-breakpoint
-- A send was made or decided.
CREATE FUNCTION "withdrawals_live_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "coinkeep_notify_user"('sends', w."user_id") FROM "wallets" w WHERE w."id" = NEW."wallet_id";
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "withdrawals_live_event" AFTER INSERT OR UPDATE OF "status" ON "withdrawals" FOR EACH ROW EXECUTE FUNCTION "withdrawals_live_event"();--> statement-breakpoint
-- A wallet was requested or its address issued.
CREATE FUNCTION "wallets_live_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "coinkeep_notify_user"('wallets', NEW."user_id");
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "wallets_live_event" AFTER INSERT OR UPDATE OF "address" ON "wallets" FOR EACH ROW EXECUTE FUNCTION "wallets_live_event"();--> statement-breakpoint
-- A web session ended (Exit, a restore ending every session of the account, the purge of
-- expired rows) or moved to a new key (rotation): the event streams opened on it end.
-- The payload is the row's key (a hash of the token, never the token).
CREATE FUNCTION "web_sessions_live_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR OLD."id" <> NEW."id" THEN
    PERFORM pg_notify('coinkeep_sessions', OLD."id");
  END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "web_sessions_live_event" AFTER DELETE OR UPDATE OF "id" ON "web_sessions" FOR EACH ROW EXECUTE FUNCTION "web_sessions_live_event"();
