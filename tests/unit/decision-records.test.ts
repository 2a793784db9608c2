// Decision records (issue 25, item 5): every record in docs/decisions/ says when it was written and
// where it stands, and every repository path it cites is true (docs/decisions/README.md).
//
// The header, right under the "# NNN — Title" heading and one blank line:
//   Date: YYYY-MM-DD                   the day of the commit that added the record
//   Status: accepted (issue N, …)      or "Status: superseded by NNN (…)"; either may go on with
//                                      "; amended by NNN (…)" and the like
// Every record number named after "amended by" or "superseded by" must be a record.
//
// The rule for cited paths. A record's text outside fenced code blocks (prose and `inline code`
// alike) is cut into words at white space and backticks; brackets, quotes, * and _ and trailing
// punctuation are trimmed off each word. A word is a cited repository path when
//   1. it starts with one of the repository's source folders (app/ common/ server/ scripts/ tests/
//      docs/ public/ .ci/): it must be a file or folder that exists; or
//   2. it has no slash and is a file name (name.md, .ts, .tsx, .mjs, .json, .sh or .css): a file
//      of that name must exist somewhere in the repository (README.md at the root, host.ts
//      anywhere: a folder is never guessed).
// Everything else is not a repository path and is never flagged: words that start with "/" (page
// routes like /wallet/btc, API paths like /api/aml-authorization, /usr/bin/node), "./", "../" or
// "@" (packages), URLs, words holding a glob or placeholder character (* ? { } < > … $), and the
// two documents the records cite that were never in the repository (OUTSIDE below).
// A path that is gone stays as it was cited, marked by the parenthesis right after it, which names
// its last commit (7 to 40 hex digits): "`scripts/bench-sends.ts` (removed; last at 950b96b)". The
// commit must hold that path (checked with git when the history is there). An example or made-up
// path is marked by a parenthesis right after it that starts with "example".
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const recordsDir = path.join(root, "docs/decisions");

const SOURCE_FOLDERS = ["app/", "common/", "server/", "scripts/", "tests/", "docs/", "public/", ".ci/"];
const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*\.(?:md|ts|tsx|mjs|json|sh|css)$/u;
const NOT_A_PATH = /^(?:\/|\.\.?\/|@)|:\/\/|[*?{}<>…$]/u;
/** Cited by name, never part of this repository (no commit ever held them): the design brief and the toolchain card. */
const OUTSIDE = new Set(["DESIGN.md", "TOOLCHAIN.md"]);
const COMMIT = /\b(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b/u;

type Citation = { path: string; line: number; mark: { commit: string } | { example: true } | null };

/** The words of a record that are cited repository paths (rules 1 and 2 above), with their marks. */
function citedPaths(text: string): Citation[] {
  // Fenced code blocks (nginx configurations and the like) are blanked, keeping the line count.
  const prose = text.replace(/^[ \t]*```[^\n]*\n[\s\S]*?^[ \t]*```[^\n]*$/gmu, (block) =>
    block.replace(/[^\n]/gu, " "),
  );
  const found: Citation[] = [];
  for (const raw of prose.matchAll(/[^\s`]+/gu)) {
    const word = raw[0].replace(/^[("'[*_]+/u, "").replace(/[)\]"'*_.,;:!?…]+$/u, "");
    if (word === "" || NOT_A_PATH.test(word) || OUTSIDE.has(word)) continue;
    const isPath = SOURCE_FOLDERS.some((folder) => word.startsWith(folder));
    if (!isPath && !(!word.includes("/") && FILE_NAME.test(word))) continue;
    // The mark: a parenthesis right after the word (after its closing backtick, if any).
    const after = prose.slice(raw.index + raw[0].length).match(/^`?[ \t]*\n?[ \t]*\(/u);
    let mark: Citation["mark"] = null;
    if (raw[0].endsWith(word) && after) {
      const open = raw.index + raw[0].length + after[0].length - 1;
      const inside = balanced(prose, open);
      const commit = inside?.match(COMMIT)?.[0];
      if (commit) mark = { commit };
      else if (inside && /^\s*example/iu.test(inside)) mark = { example: true };
    }
    found.push({ path: word, line: prose.slice(0, raw.index).split("\n").length, mark });
  }
  return found;
}

/** The text inside the parenthesis that opens at `open`, up to its matching ")" within the paragraph. */
function balanced(text: string, open: number): string | undefined {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return text.slice(open + 1, i);
    else if (c === "\n" && text[i + 1] === "\n") return undefined;
  }
  return undefined;
}

type Repository = { exists(p: string): boolean; hasFileNamed(name: string): boolean };

/** What is wrong with one record: its header, and each cited path that is neither there nor marked. */
function checkRecord(file: string, text: string, repo: Repository, records: Set<string>): string[] {
  const problems: string[] = [];
  const lines = text.split("\n");
  const number = file.slice(0, 3);
  if (!new RegExp(`^# ${number} — \\S`, "u").test(lines[0] ?? "")) {
    problems.push(`line 1 is not the heading "# ${number} — Title"`);
  }
  const date = lines[2]?.match(/^Date: (\d{4})-(\d{2})-(\d{2})$/u);
  if (lines[1] !== "" || !date) {
    problems.push('line 3 is not "Date: YYYY-MM-DD" (after the heading and one blank line)');
  } else {
    const [, y, m, d] = date.map(Number) as [number, number, number, number];
    const day = new Date(Date.UTC(y, m - 1, d));
    if (day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) problems.push(`${lines[2]} is no date`);
  }
  const status = lines[3] ?? "";
  if (!/^Status: (?:accepted\b|superseded by \d{3}\b)/u.test(status)) {
    problems.push('line 4 is not "Status: accepted (…)" or "Status: superseded by NNN (…)"');
  } else {
    for (const ref of status.matchAll(
      /\b(?:amended|superseded) by ((?:\d{3}(?: \([^)]*\))?(?:,| and)? ?)+)/gu,
    )) {
      for (const n of ref[1]!.replace(/\([^)]*\)/gu, "").match(/\b\d{3}\b/gu) ?? []) {
        if (!records.has(n)) problems.push(`the status names record ${n}, which does not exist`);
      }
    }
  }
  if (lines[4] !== "") problems.push("line 5 (after the Status line) is not blank");
  for (const { path: p, line, mark } of citedPaths(text)) {
    if (mark) continue;
    const there = p.includes("/") ? repo.exists(p) : repo.hasFileNamed(p);
    if (!there)
      problems.push(`line ${line}: ${p} does not exist and is not marked "(removed; last at <commit>)"`);
  }
  return problems;
}

// The repository as it is on disk, without the folders .gitignore names (builds, data, test output).
const IGNORED = new Set([
  ".git",
  "node_modules",
  "build",
  "data",
  "data-dev",
  ".react-router",
  "test-results",
  "playwright-report",
  ".e2e-data",
  "bench-results",
  ".tmp",
  "screenshots",
]);
function fileNames(dir: string, names = new Set<string>()): Set<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (IGNORED.has(entry.name)) continue;
    if (entry.isDirectory()) fileNames(path.join(dir, entry.name), names);
    else names.add(entry.name);
  }
  return names;
}
const names = fileNames(root);
const repository: Repository = {
  exists: (p) => existsSync(path.join(root, p)),
  hasFileNamed: (name) => names.has(name),
};

const recordFiles = readdirSync(recordsDir)
  .filter((f) => /^\d{3}-.+\.md$/u.test(f))
  .toSorted();
const recordNumbers = new Set(recordFiles.map((f) => f.slice(0, 3)));
const texts = new Map(recordFiles.map((f) => [f, readFileSync(path.join(recordsDir, f), "utf8")]));

function git(...args: string[]): string | undefined {
  try {
    return execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return undefined;
  }
}
// A shallow clone or a copy without .git cannot say what an old commit held; the marks' form is still checked.
const history = git("rev-parse", "--is-shallow-repository")?.trim() === "false";

describe("docs/decisions: the header and the cited paths", () => {
  test("there are records", () => {
    expect(recordFiles.length).toBeGreaterThan(30);
  });

  test.each(recordFiles)("%s", (file) => {
    expect(checkRecord(file, texts.get(file)!, repository, recordNumbers)).toEqual([]);
  });

  test.skipIf(!history)("a path marked as removed is in the commit named beside it", () => {
    const trees = new Map<string, string[] | undefined>();
    const wrong: string[] = [];
    for (const [file, text] of texts) {
      for (const { path: p, mark } of citedPaths(text)) {
        if (!mark || !("commit" in mark)) continue;
        if (!trees.has(mark.commit)) {
          trees.set(mark.commit, git("ls-tree", "-r", "--name-only", mark.commit)?.split("\n"));
        }
        const tree = trees.get(mark.commit);
        const held = p.includes("/")
          ? tree?.some((f) => f === p || f.startsWith(p.endsWith("/") ? p : `${p}/`))
          : tree?.some((f) => path.posix.basename(f) === p);
        if (!held) wrong.push(`${file}: ${p} is not in commit ${mark.commit}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe("the rule on a planted record", () => {
  const planted = [
    "# 007 — A planted record",
    "",
    "Date: 2026-11-24",
    "Status: accepted (issue 1); amended by 008 (more) and 009",
    "",
    "Routes /wallet/btc and `/notifications?open=<id>`, the call `POST /api/aml-authorization`,",
    "https://example.com/app/x.ts, `@react-router/serve`, `./data/backend-secret`, `node_modules/.bin`,",
    "`server/feeds/snapshot-*.json` (a glob), `app/routes/{name}.tsx`, `DESIGN.md`, e.g. and i.e.",
    "A real one: `server/host/host.ts`, (common/coins.ts), **README.md**, `host.ts`, and a folder `tests/unit/`.",
    "Gone: `scripts/bench-sends.ts` (removed with issue 25, last at 950b96b; `npm run bench` replaces",
    "it) and `node scripts/request-path.ts` (a one-off; last at 6385e00).",
    "Made up: `app/routes/my-page.tsx` (example), `server/made-up.ts` (not real).",
    "",
    "```nginx",
    "include server/nginx/inside-a-fence.conf;",
    "```",
    "",
    "Stale: `server/api/handler.ts`, server/host.ts, `nowhere.ts`, `scripts/old.ts` (removed, no commit).",
  ].join("\n");

  test("names exactly the paths it should, with their marks", () => {
    expect(citedPaths(planted).map((c) => `${c.line} ${c.path} ${JSON.stringify(c.mark)}`)).toEqual([
      "9 server/host/host.ts null",
      "9 common/coins.ts null",
      "9 README.md null",
      "9 host.ts null",
      "9 tests/unit/ null",
      '10 scripts/bench-sends.ts {"commit":"950b96b"}',
      '11 scripts/request-path.ts {"commit":"6385e00"}',
      '12 app/routes/my-page.tsx {"example":true}',
      "12 server/made-up.ts null",
      "18 server/api/handler.ts null",
      "18 server/host.ts null",
      "18 nowhere.ts null",
      "18 scripts/old.ts null",
    ]);
  });

  test("flags the header's faults and the unmarked paths that are not there", () => {
    const records = new Set(["007", "008"]);
    expect(checkRecord("007-planted.md", planted, repository, records)).toEqual([
      "the status names record 009, which does not exist",
      'line 12: server/made-up.ts does not exist and is not marked "(removed; last at <commit>)"',
      'line 18: server/api/handler.ts does not exist and is not marked "(removed; last at <commit>)"',
      'line 18: server/host.ts does not exist and is not marked "(removed; last at <commit>)"',
      'line 18: nowhere.ts does not exist and is not marked "(removed; last at <commit>)"',
      'line 18: scripts/old.ts does not exist and is not marked "(removed; last at <commit>)"',
    ]);
    const headless = planted.replace("Date: 2026-11-24\n", "").replace("Status:", "Note:");
    expect(checkRecord("007-planted.md", headless, repository, records)).toEqual(
      expect.arrayContaining([
        'line 3 is not "Date: YYYY-MM-DD" (after the heading and one blank line)',
        'line 4 is not "Status: accepted (…)" or "Status: superseded by NNN (…)"',
      ]),
    );
    expect(
      checkRecord("007-planted.md", planted.replace("2026-11-24", "2026-02-30"), repository, records),
    ).toContain("Date: 2026-02-30 is no date");
    expect(checkRecord("008-planted.md", planted, repository, records)).toContain(
      'line 1 is not the heading "# 008 — Title"',
    );
  });
});
