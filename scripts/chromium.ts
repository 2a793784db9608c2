// Debian's Chromium as every browser-driving script and test starts it (TOOLCHAIN.md): no
// sandbox (we run as root), no GPU, and none of the background calls out of this closed
// network, which it refuses many at a time. One list, for Playwright's config, the
// Lighthouse bench and the client recorder.
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS: readonly string[] = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];
