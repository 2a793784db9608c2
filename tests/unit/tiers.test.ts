// The tier line and the no-cycle rule (issue 13), in `npm test`: the real tree
// has no forbidden import and no import cycle (the rule table is TIER_RULES in
// scripts/check-tiers.ts), and the check itself is shown to catch both on a
// planted tree, so a check that silently finds nothing cannot pass.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { checkTiers } from "../../scripts/check-tiers.ts";

const root = path.resolve(import.meta.dirname, "../..");

describe("the tier rule and the no-cycle rule", () => {
  const violations = checkTiers(root);

  test("no file imports across the tier line, and no import cycle", () => {
    // Each message names the file and line, the import, and the rule it breaks (or the whole cycle).
    expect(violations.map((v) => v.message)).toEqual([]);
  });
});

describe("the check catches what it should (a planted tree)", () => {
  const planted = mkdtempSync(path.join(tmpdir(), "coinkeep-tiers-"));
  afterAll(() => rmSync(planted, { recursive: true, force: true }));
  const plant = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(planted, file)), { recursive: true });
    writeFileSync(path.join(planted, file), text);
  };

  // Allowed: each tier importing what its rule lets it, in every form of import.
  plant("common/coins.ts", `export const COINS = ["BTC"] as const;\n`);
  plant("common/index.ts", `export * from "./coins.ts";\n`);
  plant("app/view.tsx", `import { COINS } from "../common";\nexport const view = () => COINS;\n`);
  plant(
    "server/host/host.ts",
    `import { view } from "../../app/view.tsx";\nimport type { Rules } from "../backend/domain/rules";\n` +
      `export const start = async (r: Rules) => [view, r, await import("../ops/tool.ts")];\n`,
  );
  plant("server/ops/tool.ts", `export { loadConfig } from "../config.ts";\n`);
  plant("server/config.ts", `export const loadConfig = () => ({});\n`);
  plant("scripts/seed.ts", `import "../app/view.tsx";\nimport "../server/backend/domain/rules.ts";\n`);
  // A comment or a string that looks like an import is no import.
  plant(
    "common/literals.ts",
    `// import { view } from "../app/view.tsx";\nexport const HINT = 'import x from "../server/host/host.ts"';\n`,
  );

  // Forbidden: the backend importing the web tier (extensionless, as the app writes it) ...
  plant(
    "server/backend/domain/rules.ts",
    `import { view } from "../../../app/view";\nexport type Rules = typeof view;\n`,
  );
  // ... the contract naming a backend type through import("…") ...
  plant("common/shape.ts", `export type Shape = typeof import("../server/backend/domain/rules.ts").view;\n`);
  // ... operator commands loading the process's edge lazily ...
  plant("server/ops/edge-user.ts", `export const edge = () => import("../host/edge.ts");\n`);
  plant("server/host/edge.ts", `export const inspect = () => null;\n`);
  // ... operator commands or the backend importing the process ...
  plant(
    "server/ops/socket-user.ts",
    `import { serveOpsSocket } from "../host/ops-socket.ts";\nserveOpsSocket();\n`,
  );
  plant("server/host/ops-socket.ts", `export const serveOpsSocket = () => null;\n`);
  plant("server/backend/jobs.ts", `import { start } from "../host/host.ts";\nexport const jobs = start;\n`);
  // ... custody's key code reaching up into the domain's rules ...
  plant(
    "server/backend/custody/keys.ts",
    `import type { Rules } from "../domain/rules.ts";\nexport type Keys = Rules;\n`,
  );
  // ... a web-tier file re-exporting from the server ...
  plant("app/leak.ts", `export { loadConfig } from "../server/config.ts";\n`);
  // ... a file in no tier, and an import naming no file.
  plant("server/stray.ts", `import "./missing.ts";\n`);
  // A cycle through a type-only import, and one of three files among scripts.
  plant("app/form.tsx", `import type { action } from "./route.tsx";\nexport type Action = typeof action;\n`);
  plant(
    "app/route.tsx",
    `import type { Action } from "./form.tsx";\nexport const action = (a?: Action) => a;\n`,
  );
  plant("scripts/a.ts", `import "./b.ts";\n`);
  plant("scripts/b.ts", `import "./c.mjs";\n`);
  plant("scripts/c.mjs", `await import("./a.ts");\n`);

  const found = checkTiers(planted);

  test("finds exactly the planted violations", () => {
    const summary = found.map((v) =>
      v.rule === "cycle"
        ? `cycle ${v.cycle.join(" -> ")}`
        : v.rule === "no-tier"
          ? `no-tier ${v.file}`
          : `${v.rule} ${v.edge.from}:${v.edge.line} -> ${v.edge.to ?? v.edge.specifier} (${v.edge.kind})`,
    );
    expect(summary.toSorted()).toEqual(
      [
        "forbidden-import server/backend/domain/rules.ts:1 -> app/view.tsx (static)",
        "forbidden-import common/shape.ts:1 -> server/backend/domain/rules.ts (type)",
        "forbidden-import server/ops/edge-user.ts:1 -> server/host/edge.ts (dynamic)",
        "forbidden-import app/leak.ts:1 -> server/config.ts (export-from)",
        "forbidden-import server/backend/custody/keys.ts:1 -> server/backend/domain/rules.ts (type)",
        "forbidden-import server/ops/socket-user.ts:1 -> server/host/ops-socket.ts (static)",
        "forbidden-import server/backend/jobs.ts:1 -> server/host/host.ts (static)",
        "no-tier server/stray.ts",
        "unresolved-import server/stray.ts:1 -> ./missing.ts (static)",
        "cycle app/form.tsx -> app/route.tsx",
        "cycle scripts/a.ts -> scripts/b.ts -> scripts/c.mjs",
      ].toSorted(),
    );
  });

  test("a message names the file, the import and the rule, or the whole cycle", () => {
    const messages = found.map((v) => v.message);
    expect(messages).toContain(
      `server/backend/domain/rules.ts:1 imports "../../../app/view" (app/view.tsx, import): ` +
        `server/backend/ may import only server/backend/, common/, because the backend never imports ` +
        `the web tier, the process or the operator commands`,
    );
    expect(messages).toContain(
      `import cycle: app/form.tsx -> app/route.tsx -> app/form.tsx\n` +
        `  app/form.tsx:1 imports "./route.tsx" (type-only import)\n` +
        `  app/route.tsx:1 imports "./form.tsx" (type-only import)`,
    );
  });
});
