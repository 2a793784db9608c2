// The forms of a page, read out of the HTML the server rendered, for the tests
// that post them back and the bench that signs in through the login form. A
// regular-expression reader: enough for the markup React renders (attributes
// in double quotes, entities for &, ", ', < and >), not a general HTML parser.

export function decodeEntities(text: string): string {
  return text
    .replaceAll("&quot;", '"')
    .replaceAll("&#x27;", "'")
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
}

/** An attribute of a tag, decoded (undefined when the tag has none). */
export function attribute(tag: string, name: string): string | undefined {
  const found = new RegExp(`\\s${name}="([^"]*)"`, "u").exec(tag)?.[1];
  return found === undefined ? undefined : decodeEntities(found);
}

export interface HtmlForm {
  /** Lower case; "get" when the form names none. */
  method: string;
  action: string | undefined;
  /** The named fields a browser would send untouched: unchecked boxes left out, a textarea's text. */
  fields: [string, string][];
  /** The values of its buttons named "intent" ([] when it has none). */
  intents: string[];
}

/** The page's forms, in order. */
export function formsIn(html: string): HtmlForm[] {
  const forms: HtmlForm[] = [];
  for (const match of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gu)) {
    const open = `<form${match[1] ?? ""}>`;
    const body = match[2] ?? "";
    const fields: [string, string][] = [];
    for (const input of body.matchAll(/<input\b[^>]*>/gu)) {
      const name = attribute(input[0], "name");
      if (!name) continue;
      const type = attribute(input[0], "type") ?? "text";
      if ((type === "checkbox" || type === "radio") && !/\schecked/u.test(input[0])) continue;
      fields.push([name, attribute(input[0], "value") ?? (type === "checkbox" ? "on" : "")]);
    }
    for (const area of body.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/gu)) {
      const name = attribute(`<t${area[1] ?? ""}>`, "name");
      if (name) fields.push([name, decodeEntities(area[2] ?? "")]);
    }
    const intents = [...body.matchAll(/<button\b[^>]*>/gu)]
      .filter((button) => attribute(button[0], "name") === "intent")
      .map((button) => attribute(button[0], "value") ?? "");
    const method = (attribute(open, "method") ?? "get").toLowerCase();
    forms.push({ method, action: attribute(open, "action"), fields, intents });
  }
  return forms;
}

/** The value of the page's first <input name=NAME>; throws when it has none. */
export function inputValue(html: string, name: string): string {
  const tag = [...html.matchAll(/<input\b[^>]*>/gu)].find(([input]) => attribute(input, "name") === name);
  const value = tag === undefined ? undefined : attribute(tag[0], "value");
  if (value === undefined) throw new Error(`no input ${name}`);
  return value;
}

/** What every public form carries besides its own fields: the CSRF token and the honeypot (its trap empty). */
export function formGuards(html: string): Record<string, string> {
  return {
    csrf: inputValue(html, "csrf"),
    ck_name__confirm: "",
    ck_from__confirm: inputValue(html, "ck_from__confirm"),
  };
}
