// The tier line and the no-cycle rule (issue 13), checked over the import
// graph: every import of every source file under app/, common/ and server/
// (scripts/ joins for cycles only) is read with a real parser (oxc, through
// vite's parseSync: TypeScript 7 has no JavaScript compiler API), its relative
// specifier resolved to a file, and judged by TIER_RULES below. Type-only
// imports count: a type import across the line still ties one tier to the
// other's shape, and a type-only cycle is still two files that cannot be read
// apart. `tests/unit/tiers.test.ts` runs it in `npm test`;
// `node scripts/check-tiers.ts` prints the same verdict by hand.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parseSync } from "vite";

/**
 * Who may import whom. A file belongs to the first rule whose `files` prefix
 * its path (relative to the root, with "/") starts with; it may import files
 * whose path starts with one of `mayImport` (a folder ends with "/", anything
 * else is one file). Packages (bare specifiers) are not judged here.
 */
export const TIER_RULES: readonly TierRule[] = [
  {
    files: "common/",
    mayImport: ["common/"],
    why: "the contract both tiers share imports nothing of either",
  },
  {
    files: "server/backend/custody/",
    mayImport: ["server/backend/custody/", "server/backend/db/", "common/"],
    why: "custody holds the account keys and their derivation, beneath the domain: the domain's rules (issuing) use it, never the other way",
  },
  {
    files: "server/backend/",
    mayImport: ["server/backend/", "common/"],
    why: "the backend never imports the web tier, the process or the operator commands",
  },
  {
    files: "server/config.ts",
    mayImport: ["server/backend/", "common/"],
    why: "the configuration stands below the host and the operator commands that read it, and reads settings with the backend's own parsers (account keys, address entries)",
  },
  {
    files: "server/ops/",
    mayImport: ["server/ops/", "server/backend/", "common/", "server/config.ts"],
    why: "operator commands drive the backend with the process's configuration and talk to a running server through their own socket client, never importing the process (server/host/)",
  },
  {
    files: "server/host/",
    mayImport: ["server/", "common/", "app/"],
    why: "the process hosts everything: the configuration, the backend, the operator socket and the web tier (app/context.ts)",
  },
  {
    files: "app/",
    mayImport: ["app/", "common/"],
    why: "the web tier reaches the backend only through its client, never by importing server/",
  },
];

/** Folders whose files are judged by TIER_RULES (each file must fall under a rule) and checked for cycles. */
export const TIER_ROOTS = ["app", "common", "server"] as const;
/** Folders checked for cycles only: scripts may import anything. */
export const CYCLE_ONLY_ROOTS = ["scripts"] as const;

export interface TierRule {
  files: string;
  mayImport: readonly string[];
  why: string;
}

export interface ImportEdge {
  /** The importing file, relative to the root with "/". */
  from: string;
  /** The specifier as written. */
  specifier: string;
  /** The file it resolves to (relative to the root), or null when no file was found. */
  to: string | null;
  kind: "static" | "type" | "dynamic" | "export-from";
  line: number;
}

export type Violation =
  | { rule: "forbidden-import"; edge: ImportEdge; tier: TierRule; message: string }
  | { rule: "no-tier"; file: string; message: string }
  | { rule: "unresolved-import"; edge: ImportEdge; message: string }
  | { rule: "cycle"; cycle: string[]; message: string };

const SOURCE = /\.(?:ts|tsx|mts|cts|mjs|cjs|js|jsx)$/u;
// What a relative specifier without its extension may name, in TypeScript's order of preference.
const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".d.ts", ".js", ".jsx", ".mjs", ".cjs"];
// React Router's generated route types (`./+types/home`) live in .react-router/types, joined by
// tsconfig's rootDirs; they are written by `react-router typegen` from each route, not imported code.
const GENERATED_ROUTE_TYPES = /(?:^|\/)\+types\//u;

/** Checks the tree at `root`; returns every violation, sorted, with its message. */
export function checkTiers(root: string): Violation[] {
  const files = [...TIER_ROOTS, ...CYCLE_ONLY_ROOTS].flatMap((dir) => sourceFiles(root, dir));
  const edges = files.flatMap((file) => importsOf(root, file));
  const violations: Violation[] = [];

  const tierFiles = files.filter((file) => TIER_ROOTS.some((dir) => file.startsWith(`${dir}/`)));
  for (const file of tierFiles) {
    if (!ruleFor(file)) {
      violations.push({
        rule: "no-tier",
        file,
        message: `${file} lies in no tier of TIER_RULES (scripts/check-tiers.ts): place it in one, or add a rule for its folder`,
      });
    }
  }
  for (const edge of edges) {
    if (edge.to === null) {
      violations.push({
        rule: "unresolved-import",
        edge,
        message: `${edge.from}:${edge.line} imports "${edge.specifier}", which names no file: the check cannot judge it`,
      });
      continue;
    }
    const tier = ruleFor(edge.from);
    if (!tier) continue; // scripts/: cycles only
    if (tier.mayImport.some((allowed) => matches(edge.to!, allowed))) continue;
    violations.push({
      rule: "forbidden-import",
      edge,
      tier,
      message:
        `${edge.from}:${edge.line} imports "${edge.specifier}" (${edge.to}, ${kindText(edge.kind)}): ` +
        `${tier.files} may import only ${tier.mayImport.join(", ")}, because ${tier.why}`,
    });
  }

  for (const cycle of findCycles(files, edges)) {
    const lines = cycle.map((file, i) => {
      const next = cycle[(i + 1) % cycle.length]!;
      const edge = edges.find((e) => e.from === file && e.to === next)!;
      return `  ${file}:${edge.line} imports "${edge.specifier}" (${kindText(edge.kind)})`;
    });
    violations.push({
      rule: "cycle",
      cycle,
      message: `import cycle: ${[...cycle, cycle[0]].join(" -> ")}\n${lines.join("\n")}`,
    });
  }
  return violations.toSorted((a, b) => a.message.localeCompare(b.message));
}

function kindText(kind: ImportEdge["kind"]): string {
  return {
    static: "import",
    type: "type-only import",
    dynamic: "dynamic import",
    "export-from": "re-export",
  }[kind];
}

function matches(file: string, allowed: string): boolean {
  return allowed.endsWith("/") ? file.startsWith(allowed) : file === allowed;
}

function ruleFor(file: string): TierRule | undefined {
  return TIER_RULES.find((rule) => file.startsWith(rule.files));
}

/** Source files under `dir` (relative to `root`, with "/"), sorted; nothing under node_modules. */
function sourceFiles(root: string, dir: string): string[] {
  const full = path.join(root, dir);
  if (!existsSync(full)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(full, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !SOURCE.test(entry.name) || entry.name.endsWith(".d.ts")) continue;
    const rel = path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/");
    if (rel.split("/").includes("node_modules")) continue;
    found.push(rel);
  }
  return found.toSorted();
}

/** Every import of one file: static, `import type`, `export … from`, `import("…")`, `import("…").T` types. */
export function importsOf(root: string, file: string): ImportEdge[] {
  const text = readFileSync(path.join(root, file), "utf8");
  const result = parseSync(file, text);
  if (result.errors.length > 0) {
    throw new Error(`${file}: cannot parse: ${result.errors.map((e) => e.message).join("; ")}`);
  }
  const edges: ImportEdge[] = [];
  const add = (specifier: string, kind: ImportEdge["kind"], start: number) => {
    if (!specifier.startsWith(".") && !specifier.startsWith("/")) return; // a package
    if (GENERATED_ROUTE_TYPES.test(specifier)) return;
    edges.push({
      from: file,
      specifier,
      to: resolve(root, file, specifier),
      kind,
      line: lineAt(text, start),
    });
  };
  walk(result.program, (node) => {
    switch (node.type) {
      case "ImportDeclaration":
        add(node.source.value, node.importKind === "type" ? "type" : "static", node.source.start);
        break;
      case "ExportNamedDeclaration":
      case "ExportAllDeclaration":
        if (node.source) {
          add(node.source.value, node.exportKind === "type" ? "type" : "export-from", node.source.start);
        }
        break;
      case "ImportExpression": {
        // Only a literal can be followed; `import(url)` of a computed path (the host's
        // build/server/index.js) names no source file.
        const source = node.source;
        if (source.type === "Literal" && typeof source.value === "string")
          add(source.value, "dynamic", source.start);
        else if (source.type === "TemplateLiteral" && source.expressions.length === 0) {
          add(source.quasis[0]?.value.cooked ?? "", "dynamic", source.start);
        }
        break;
      }
      case "TSImportType":
        add(node.source.value, "type", node.source.start);
        break;
      case "TSExternalModuleReference":
        add(node.expression.value, "static", node.expression.start);
        break;
    }
  });
  return edges;
}

type Program = ReturnType<typeof parseSync>["program"];

/** Calls `visit` on every node of the tree (every object with a string `type`). */
function walk(program: Program, visit: (node: WalkedNode) => void): void {
  const stack: unknown[] = [program];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      stack.push(...value);
    } else if (value !== null && typeof value === "object") {
      if (typeof (value as { type?: unknown }).type === "string") visit(value as WalkedNode);
      for (const [key, child] of Object.entries(value)) {
        if (key !== "parent" && child !== null && typeof child === "object") stack.push(child);
      }
    }
  }
}

/**
 * The nodes `importsOf` looks at, as oxc's ESTree shapes them (only the fields read);
 * "Other" stands for every other node type, whose fields are never read.
 */
type WalkedNode =
  | { type: "ImportDeclaration"; source: StringNode; importKind?: string }
  | {
      type: "ExportNamedDeclaration" | "ExportAllDeclaration";
      source: StringNode | null;
      exportKind?: string;
    }
  | {
      type: "ImportExpression";
      source:
        | { type: "Literal"; value: unknown; start: number }
        | {
            type: "TemplateLiteral";
            expressions: unknown[];
            quasis: { value: { cooked: string | null } }[];
            start: number;
          }
        | { type: "Other" };
    }
  | { type: "TSImportType"; source: StringNode }
  | { type: "TSExternalModuleReference"; expression: StringNode }
  | { type: "Other" };

/** A string literal: its value and where it starts in the file. */
interface StringNode {
  value: string;
  start: number;
}

function lineAt(text: string, offset: number): number {
  return text.slice(0, offset).split("\n").length;
}

/** The file a relative specifier names, relative to the root with "/"; null when none. */
function resolve(root: string, from: string, specifier: string): string | null {
  const bare = specifier.replace(/[?#].*$/u, ""); // Vite's "./x.css?url"
  const base = path.resolve(root, path.dirname(from), bare);
  const candidates = [
    base,
    ...EXTENSIONS.map((ext) => base + ext),
    // TypeScript's convention: "./x.js" names ./x.ts.
    ...(/\.[mc]?js$/u.test(base) ? EXTENSIONS.map((ext) => base.replace(/\.[mc]?js$/u, ext)) : []),
    ...EXTENSIONS.map((ext) => path.join(base, `index${ext}`)),
  ];
  const found = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
  return found ? path.relative(root, found).split(path.sep).join("/") : null;
}

/**
 * One cycle per knot of mutually reachable files (a strongly connected
 * component, Tarjan's algorithm): the shortest way from the knot's first file
 * back to itself. Fixing that cycle shows the next one, if the knot has more.
 */
function findCycles(files: readonly string[], edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const edge of edges) {
    if (edge.to !== null && next.has(edge.to)) next.get(edge.from)!.push(edge.to);
  }
  for (const [file, targets] of next) next.set(file, targets.toSorted()); // the same cycle reported every run

  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const knots: string[][] = [];
  let counter = 0;
  const connect = (file: string) => {
    index.set(file, counter);
    low.set(file, counter);
    counter++;
    stack.push(file);
    onStack.add(file);
    for (const target of next.get(file)!) {
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const knot: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        knot.push(member);
      } while (member !== file);
      if (knot.length > 1 || next.get(file)!.includes(file)) knots.push(knot.toSorted());
    }
  };
  for (const file of files) if (!index.has(file)) connect(file);

  return knots.map((knot) => {
    const inKnot = new Set(knot);
    const start = knot[0]!;
    // Breadth-first from start, inside the knot, until an edge leads back to start.
    const cameFrom = new Map<string, string>();
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      const file = queue[i]!;
      for (const target of next.get(file)!) {
        if (target === start) {
          const cycle = [file];
          while (cycle[0] !== start) cycle.unshift(cameFrom.get(cycle[0]!)!);
          return cycle;
        }
        if (inKnot.has(target) && !cameFrom.has(target)) {
          cameFrom.set(target, file);
          queue.push(target);
        }
      }
    }
    return knot; // unreachable: every file of a knot reaches its first file
  });
}

if (import.meta.main) {
  const root = path.resolve(import.meta.dirname, "..");
  const violations = checkTiers(root);
  for (const violation of violations) console.log(`${violation.rule}: ${violation.message}`);
  console.log(violations.length === 0 ? "tiers: no violations" : `tiers: ${violations.length} violation(s)`);
  process.exitCode = violations.length === 0 ? 0 : 1;
}
