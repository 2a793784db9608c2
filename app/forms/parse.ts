// conform's zod parser, loaded with a form's schema when the form is first
// used (record 034). Importing "./z" first configures zod before conform's
// own zod module runs.
// Listed first: modules are evaluated in the order they are requested.
export { z } from "./z.ts";

export { parseWithZod } from "@conform-to/zod/v4";
