// CSV for exports people open in spreadsheets (the audit log): RFC 4180, every
// cell quoted, lines ended by CRLF. A cell a spreadsheet would take for a
// formula (it starts with =, +, -, @, a tab or a carriage return) is prefixed
// with a single quote, so an exported value can never run as one (CSV or
// formula injection): the text stays readable, and nothing in it is executed.

/** The starts a spreadsheet reads as a formula (or strips before reading one). */
const FORMULA_START = /^[=+\-@\t\r]/u;

/** One cell: defused when it could be read as a formula, then quoted with its quotes doubled. */
export function csvCell(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return `"${safe.replaceAll('"', '""')}"`;
}

/** Rows of cells as CSV text: each row one line (CRLF-ended), cells separated by commas. */
export function toCsv(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => `${row.map(csvCell).join(",")}\r\n`).join("");
}
