// The server the end-to-end tests run against: the production build on a
// fresh data folder (so every run starts from an empty embedded database),
// or on a fresh PostgreSQL database when E2E_DATABASE_URL is set.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const dataDir = mkdtempSync(path.join(tmpdir(), "coinkeep-e2e-"));
process.env.DATA_DIR = dataDir;
const cleanup = () => rmSync(dataDir, { recursive: true, force: true });
process.on("exit", cleanup);

const { main } = await import("../server/host.ts");
await main();
