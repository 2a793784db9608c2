// Runs once after the whole end-to-end suite (playwright.config.ts
// globalTeardown): the servers' log of the run must hold no password, no
// phrase, no session cookie and no fast-login query (record 015). The tests
// recorded every secret they used (tests/e2e/helpers.ts recordSecret); the
// log is what scripts/e2e-server.mjs copied from the servers' stdout/stderr.
import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** Passwords some specs type literally instead of making them up with createUser. */
const LITERAL_PASSWORDS = [
  "secret-1",
  "secret-2",
  "correct horse",
  "brand new",
  "brand nee",
  "pending new",
  "wrong password",
  "whatever",
];

interface Secret {
  kind: string;
  value: string;
}

/** The forms a value could take in a log line: as is, JSON-escaped, URL-encoded. */
function spellings(value: string): string[] {
  const forms = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]);
  forms.add(encodeURIComponent(value).replaceAll("%20", "+"));
  return [...forms].filter((form) => form.length >= 4);
}

/** A signed cookie's value is base64(JSON token) + "." + signature; the token inside counts too. */
function cookieSpellings(value: string): string[] {
  const decoded = decodeURIComponent(value);
  const forms = [value, decoded];
  const dot = decoded.lastIndexOf(".");
  if (dot > 0) {
    forms.push(decoded.slice(0, dot), decoded.slice(dot + 1));
    try {
      const token: unknown = JSON.parse(Buffer.from(decoded.slice(0, dot), "base64").toString("utf8"));
      if (typeof token === "string") forms.push(token);
    } catch {
      // Not ours; the forms above still count.
    }
  }
  return forms.filter((form) => form.length >= 8);
}

function phraseSpellings(phrase: string): string[] {
  const words = phrase.split(" ");
  return [
    phrase,
    words.join(","),
    words.join('","'),
    words.join("%20"),
    words.join("+"),
    // Any three words in a row are already too much.
    ...words.slice(0, -2).map((_, i) => words.slice(i, i + 3).join(" ")),
  ];
}

export default async function logsTeardown() {
  const logFile = process.env.E2E_LOG_FILE;
  const secretsFile = process.env.E2E_SECRETS_FILE;
  if (!logFile || !secretsFile || !existsSync(logFile)) {
    throw new Error(`logs-teardown: no server log to check (E2E_LOG_FILE=${logFile ?? "unset"})`);
  }
  // The last request lines are written as responses finish.
  await sleep(500);
  const log = readFileSync(logFile, "utf8");
  const secrets: Secret[] = existsSync(secretsFile)
    ? readFileSync(secretsFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Secret)
    : [];
  for (const value of LITERAL_PASSWORDS) secrets.push({ kind: "password", value });

  const lines = log.split("\n");
  const hits: string[] = [];
  const report = (what: string, needle: string) => {
    const at = lines.findIndex((line) => line.includes(needle));
    // The finding names the kind and the line, never the secret itself.
    if (at >= 0) hits.push(`${what} found on log line ${at + 1}`);
  };
  for (const secret of secrets) {
    const forms =
      secret.kind === "phrase"
        ? phraseSpellings(secret.value)
        : secret.kind === "cookie"
          ? cookieSpellings(secret.value)
          : spellings(secret.value);
    for (const form of forms) report(`a ${secret.kind}`, form);
  }
  for (const needle of [
    "fast-login?",
    "fast-login%3F",
    "password=",
    "twelveWords",
    "Cookie:",
    "ck_session=",
    "ck_staff=",
    "enrol?token=",
  ]) {
    report(`"${needle}"`, needle);
  }
  const requestLines = lines.filter((line) => line.includes('"message":"request"'));
  const unnumbered = requestLines.filter((line) => !line.includes('"requestId":"'));
  if (unnumbered.length > 0) hits.push(`${unnumbered.length} request log lines without a requestId`);
  const notJson = lines.filter((line) => {
    if (!line.trim()) return false;
    try {
      JSON.parse(line);
      return false;
    } catch {
      return true;
    }
  });
  if (notJson.length > 0) hits.push(`${notJson.length} log lines that are not JSON`);

  const unique = [...new Set(hits)];
  if (unique.length > 0) {
    throw new Error(
      `The servers' log (${logFile}) must hold no secret:\n  ${unique.join("\n  ")}\n` +
        `(${secrets.length} secrets checked against ${lines.length} lines)`,
    );
  }
  console.log(
    `logs-teardown: ${secrets.length} secrets checked against ${lines.length} log lines, none found`,
  );
}
