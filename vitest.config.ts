import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "tests/unit/**/*.test.ts",
      "tests/backend/**/*.test.ts",
      "tests/web/**/*.test.ts",
      "tests/security/**/*.test.ts",
    ],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two files at a time on these 2-core machines: every file makes its own databases
    // (PGlite folders, throw-away PostgreSQL databases) and its own ports, so files are
    // independent; this cut the suite from 377 s to about 220 s in CI.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
