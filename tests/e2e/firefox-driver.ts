// A small driver for Firefox-ESR through puppeteer-core over WebDriver BiDi (record 042), for
// tests/e2e/firefox.spec.ts. It works the same with scripts on and off.
//
// With `javascript.enabled` false, Firefox 153 still runs a synchronous function sent over BiDi
// (script.callFunction), but nothing in the page's event loop runs: a function that waits on a
// promise, a timer or an observer never answers. So puppeteer's own waiting does not work
// without scripts: `waitForSelector`, the P-selectors (`::-p-text`, `::-p-aria`, `::-p-xpath`)
// and `ElementHandle.click()` (it waits on an IntersectionObserver) hang until the protocol
// timeout. This driver therefore polls from Node with synchronous calls only, finds elements by
// CSS and their text, and clicks with the mouse at the element's centre after checking that the
// element is what is there.
import puppeteer, { type Browser, type BrowserContext, type ElementHandle, type Page } from "puppeteer-core";

/** Debian's Firefox-ESR, unless FIREFOX_PATH says otherwise. */
export const FIREFOX_PATH = process.env.FIREFOX_PATH ?? "/usr/bin/firefox-esr";

/** The viewport of the walk: a desktop, so the sidebar is the navigation on screen. */
export const VIEWPORT = { width: 1280, height: 860 };

/** How long one step waits for what it expects (a page load without scripts included). */
const STEP_TIMEOUT = 15_000;

export async function launchFirefox(scripts: boolean): Promise<Browser> {
  return puppeteer.launch({
    browser: "firefox",
    executablePath: FIREFOX_PATH,
    headless: true,
    // A call that hangs (see above) fails in 30 s, not in puppeteer's default 180 s.
    protocolTimeout: 30_000,
    defaultViewport: VIEWPORT,
    // page.setJavaScriptEnabled (BiDi emulation.setScriptingEnabled) is unknown to Firefox 153.
    extraPrefsFirefox: scripts ? {} : { "javascript.enabled": false },
  });
}

/**
 * What to look for: a CSS selector, optionally the element's text (whitespace collapsed; a
 * string must equal it, a RegExp must match it), and whether a hidden element counts (by default
 * only elements the page shows: the first of several copies of a link is the one on screen).
 */
export interface Target {
  css: string;
  text?: string | RegExp;
  hidden?: boolean;
  /** Only inside the first element (shown or not) this selector finds. */
  within?: string;
}

export type Query = string | Target;

function targetOf(query: Query): Target {
  return typeof query === "string" ? { css: query } : query;
}

export function describe(query: Query): string {
  const { css, text, within } = targetOf(query);
  return [within ? `${within} ` : "", css, text === undefined ? "" : ` with text ${String(text)}`].join("");
}

/** A test's browser tab, and the scripts setting it runs under. */
export class Tab {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Scripts on (project `js`) or off (`no-js`). */
  readonly scripts: boolean;
  readonly baseURL: string;

  private constructor(context: BrowserContext, page: Page, scripts: boolean, baseURL: string) {
    this.context = context;
    this.page = page;
    this.scripts = scripts;
    this.baseURL = baseURL;
  }

  /** A fresh tab in a browser context of its own (its own cookies). */
  static async open(browser: Browser, scripts: boolean, baseURL: string): Promise<Tab> {
    const context = await browser.createBrowserContext();
    try {
      return new Tab(context, await context.newPage(), scripts, baseURL);
    } catch (error) {
      await context.close();
      throw error;
    }
  }

  async close() {
    await this.context.close();
  }

  /** The path and query of the current address. */
  path(): string {
    const url = new URL(this.page.url());
    return `${url.pathname}${url.search}`;
  }

  /**
   * Loads a page and, with scripts on, waits until React has hydrated it. A load that the
   * page's own navigation cut short (Firefox's NS_BINDING_ABORTED: a revalidation or a
   * replaced URL of the app's, under a loaded machine) is asked for once more, as a person
   * would load it again; any other failure stands.
   */
  async goto(path: string) {
    const url = new URL(path, this.baseURL).href;
    try {
      await this.page.goto(url);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.includes("NS_BINDING_ABORTED")) throw error;
      await this.page.goto(url);
    }
    await this.ready();
  }

  /** With scripts on, the page's controls work once it has hydrated (`data-hydrated`). */
  async ready() {
    if (this.scripts) await this.shows({ css: 'html[data-hydrated="true"]', hidden: true });
  }

  /**
   * Calls `probe` until it answers something truthy, and answers that. A probe that throws
   * (the page was replaced under it) is asked again.
   */
  async until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeout = STEP_TIMEOUT) {
    const end = Date.now() + timeout;
    let last: unknown;
    for (;;) {
      try {
        const answer = await probe();
        if (answer) return answer;
      } catch (error) {
        last = error;
      }
      if (Date.now() > end) {
        const why = last instanceof Error ? ` (last error: ${last.message})` : "";
        throw new Error(`Timed out after ${timeout} ms waiting for ${what}; at ${this.page.url()}${why}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The first element the query matches now, or null. */
  async find(query: Query): Promise<ElementHandle<Element> | null> {
    const handles = await this.findAll(query);
    const [first, ...rest] = handles;
    await Promise.all(rest.map((handle) => handle.dispose()));
    return first ?? null;
  }

  /** Every element the query matches now, in document order. */
  async findAll(query: Query): Promise<ElementHandle<Element>[]> {
    const { css, text, hidden = false, within } = targetOf(query);
    const spec = {
      css,
      exact: typeof text === "string" ? text : null,
      pattern: text instanceof RegExp ? { source: text.source, flags: text.flags } : null,
      hidden,
      within: within ?? null,
    };
    const list = await this.page.evaluateHandle((wanted) => {
      const root = wanted.within ? document.querySelector(wanted.within) : document;
      if (!root) return [];
      const regex = wanted.pattern ? new RegExp(wanted.pattern.source, wanted.pattern.flags) : null;
      return Array.from(root.querySelectorAll(wanted.css)).filter((element) => {
        if (!wanted.hidden && !element.checkVisibility({ checkVisibilityCSS: true })) return false;
        const content = (element.textContent ?? "").replace(/\s+/g, " ").trim();
        if (regex) return regex.test(content);
        return wanted.exact === null || content === wanted.exact;
      });
    }, spec);
    try {
      const properties = await list.getProperties();
      const elements: ElementHandle<Element>[] = [];
      for (const property of properties.values()) {
        const element = property.asElement();
        if (element) elements.push(element as ElementHandle<Element>);
        else await property.dispose();
      }
      return elements;
    } finally {
      await list.dispose();
    }
  }

  /** Waits for an element the query matches. */
  async get(query: Query, timeout = STEP_TIMEOUT): Promise<ElementHandle<Element>> {
    return this.until(describe(query), () => this.find(query), timeout);
  }

  /** Waits until the page shows an element the query matches. */
  async shows(query: Query, timeout = STEP_TIMEOUT) {
    await (await this.get(query, timeout)).dispose();
  }

  /** Waits until nothing matches the query. */
  async gone(query: Query) {
    await this.until(`${describe(query)} to be gone`, async () => (await this.find(query)) === null);
  }

  /** How many elements the query matches now. */
  async count(query: Query): Promise<number> {
    const handles = await this.findAll(query);
    await Promise.all(handles.map((handle) => handle.dispose()));
    return handles.length;
  }

  /**
   * Clicks the element with the mouse, at its centre, once it is enabled and nothing lies over
   * it. Without scripts a click that `navigates` waits for the new page to load; with scripts
   * the page changes in place, and the next step waits for what it expects to see.
   */
  async click(query: Query, { navigates = false }: { navigates?: boolean } = {}) {
    const point = await this.until(`${describe(query)} to be clickable`, async () => {
      const element = await this.find(query);
      if (!element) return null;
      try {
        return await element.evaluate((node) => {
          if (node.matches(":disabled")) return null;
          node.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
          const box = node.getBoundingClientRect();
          if (box.width === 0 || box.height === 0) return null;
          const x = box.left + box.width / 2;
          const y = box.top + box.height / 2;
          const hit = document.elementFromPoint(x, y);
          return hit && (hit === node || node.contains(hit)) ? { x, y } : null;
        });
      } finally {
        await element.dispose();
      }
    });
    if (navigates && !this.scripts) {
      await Promise.all([
        this.page.waitForNavigation({ timeout: STEP_TIMEOUT }),
        this.page.mouse.click(point.x, point.y),
      ]);
    } else {
      await this.page.mouse.click(point.x, point.y);
    }
  }

  /** Replaces a field's value by typing, as a person would (select all, delete, type). */
  async fill(query: Query, value: string) {
    const element = await this.get(query);
    try {
      await element.focus();
      const current = await element.evaluate((node) => (node as HTMLInputElement).value);
      if (current !== "") {
        await this.page.keyboard.down("Control");
        await this.page.keyboard.press("KeyA");
        await this.page.keyboard.up("Control");
        await this.page.keyboard.press("Backspace");
      }
      if (value !== "") await this.page.keyboard.type(value);
    } finally {
      await element.dispose();
    }
  }

  /** A form field's current value. */
  async value(query: Query): Promise<string> {
    const element = await this.get({ hidden: true, ...targetOf(query) });
    try {
      return await element.evaluate((node) => (node as HTMLInputElement).value);
    } finally {
      await element.dispose();
    }
  }

  /** What the element shows (its rendered text, whitespace collapsed); the whole page by default. */
  async text(query: Query = "body"): Promise<string> {
    const element = await this.get(query);
    try {
      return await element.evaluate((node) => (node as HTMLElement).innerText.replace(/\s+/g, " ").trim());
    } finally {
      await element.dispose();
    }
  }

  /** Waits until the element (the page by default) shows the text. */
  async sees(text: string | RegExp, query: Query = "body") {
    return this.until(`${String(text)} in ${describe(query)}`, async () => {
      const shown = await this.text(query);
      return typeof text === "string" ? shown.includes(text) : text.test(shown);
    });
  }

  /** Waits until the address's path and query match. */
  async at(path: RegExp) {
    await this.until(`the address to match ${String(path)}`, async () => path.test(this.path()));
  }

  /** An attribute of the element (shown or not), or null. */
  async attribute(query: Query, name: string): Promise<string | null> {
    const element = await this.get({ hidden: true, ...targetOf(query) });
    try {
      return await element.evaluate((node, attribute) => node.getAttribute(attribute), name);
    } finally {
      await element.dispose();
    }
  }

  /** The cookies this tab's context holds. */
  async cookies() {
    return this.context.cookies();
  }
}
