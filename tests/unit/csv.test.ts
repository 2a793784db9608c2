// The CSV writer of the exports (common/csv.ts): RFC 4180 quoting, and the
// formula-injection defence for each of the six dangerous starts.
import { describe, expect, test } from "vitest";
import { csvCell, toCsv } from "../../common/csv.ts";

describe("csvCell", () => {
  test("every cell is quoted, quotes doubled; commas and line breaks stay inside the quotes", () => {
    expect(csvCell("plain")).toBe('"plain"');
    expect(csvCell("")).toBe('""');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell("line 1\nline 2")).toBe('"line 1\nline 2"');
  });

  test.each([
    ["=", '=HYPERLINK("http://evil.example","x")', '"\'=HYPERLINK(""http://evil.example"",""x"")"'],
    ["+", "+1+cmd|' /C calc'!A0", "\"'+1+cmd|' /C calc'!A0\""],
    ["-", "-2+3", '"\'-2+3"'],
    ["@", "@SUM(A1:A9)", '"\'@SUM(A1:A9)"'],
    ["tab", "\t=1+1", '"\'\t=1+1"'],
    ["carriage return", "\r=1+1", '"\'\r=1+1"'],
  ])("a cell starting with %s is prefixed with a single quote", (_start, value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  test("the dangerous characters elsewhere in a cell change nothing", () => {
    expect(csvCell("a=b+c-d@e")).toBe('"a=b+c-d@e"');
    expect(csvCell(" =1")).toBe('" =1"');
    expect(csvCell("'=1")).toBe('"\'=1"');
  });
});

describe("toCsv", () => {
  test("rows become CRLF-ended lines of quoted cells", () => {
    expect(
      toCsv([
        ["id", "actor"],
        ["1", "=evil"],
      ]),
    ).toBe('"id","actor"\r\n"1","\'=evil"\r\n');
    expect(toCsv([])).toBe("");
  });
});
