// The statement form's schema on /history (issue 28, record 050): the rules of
// common/statement.ts, built for `today` (UTC). The server checks every
// request with it; the browser loads it on first use (record 034).
import { z } from "./z.ts";
import { dayOf } from "../../common/statement.ts";
import { statementFields } from "../../common/statement-schema.ts";

void z; // zod is configured (./z.ts) before any schema is built.

export const statementSchema = (today = dayOf(new Date())) => statementFields(today);
