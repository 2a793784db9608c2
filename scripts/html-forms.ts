// The forms of a page, read out of the HTML the server rendered, for the tests
// that post them back. A regular-expression reader: enough for the markup
// React renders (attributes in double quotes, entities for &, ", ', < and >),
// not a general HTML parser.

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

/** The value of the page's first <input name=NAME>; throws when it has none. */
export function inputValue(html: string, name: string): string {
  const tag = [...html.matchAll(/<input\b[^>]*>/gu)].find(([input]) => attribute(input, "name") === name);
  const value = tag === undefined ? undefined : attribute(tag[0], "value");
  if (value === undefined) throw new Error(`no input ${name}`);
  return value;
}
