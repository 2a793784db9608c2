// The support and contact forms' schemas as the browser loads them on first
// use (record 034). "./z" comes first: it configures zod before the schemas
// in support-message.ts are built.
// Listed first: modules are evaluated in the order they are requested.
export { z } from "./z.ts";

export { contactFormSchema, supportFormSchema } from "../../common/support-message.ts";
