import { defineConfig } from "@playwright/test";
import base from "./playwright.config.ts";

// `npm run screenshots`: the holder's screens at a desktop and a phone width,
// with scripts on and off, into ./screenshots (not committed). The same e2e
// server as the tests (npm run screenshots gives it its own port and database).

const viewports = {
  desktop: { width: 1280, height: 860 },
  mobile: { width: 390, height: 844 },
} as const;

export default defineConfig({
  ...base,
  testDir: "tests/screenshots",
  testMatch: "*.screens.ts",
  globalTeardown: undefined,
  projects: (["js", "no-js"] as const).flatMap((mode) =>
    (["desktop", "mobile"] as const).map((size) => ({
      name: `${mode}-${size}`,
      use: { javaScriptEnabled: mode === "js", viewport: viewports[size] },
    })),
  ),
});
