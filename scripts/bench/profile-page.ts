// Profiles the server while it answers one page over and over (a CPU profile
// from node --cpu-prof, written to BENCH_PROFILE_DIR), to see where a page's
// time goes:  node scripts/bench/profile-page.ts /home 400
// (BENCH_PROFILE_ANONYMOUS=1 for a signed-out page such as /).
// Seeds the page user (as the bench does) in a temporary embedded database.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openDatabase } from "../../server/backend/db/index.ts";
import { deriveServerKeys } from "../../server/backend/domain/crypto.ts";
import { printProfile } from "./cpu-profile.ts";
import { cleanupAll, log, startServer } from "./lib.ts";
import { PASSWORD, seedPageUser } from "./seed.ts";
import { signInThroughForm } from "./sessions.ts";

const page = process.argv[2] ?? "/home";
const count = Number(process.argv[3] ?? 300);
const outDir = process.env.BENCH_PROFILE_DIR ?? mkdtempSync(path.join(os.tmpdir(), "coinkeep-profile-"));
const dataDir = mkdtempSync(path.join(os.tmpdir(), "coinkeep-profile-data-"));
const port = 3380;
try {
  const database = await openDatabase({ dataDir });
  const backendSecret = randomBytes(32).toString("hex");
  const user = await seedPageUser(
    { db: database.db, keys: deriveServerKeys(backendSecret) },
    "p@bench.example",
    1000,
  );
  await database.close();
  const server = await startServer({
    port,
    dataDir,
    sessionSecret: randomBytes(32).toString("hex"),
    backendSecret,
    profileDir: outDir,
  });
  const { base } = server;
  // Signed-out pages are asked for without the cookie (a signed-in visitor is sent to /home).
  const cookie =
    process.env.BENCH_PROFILE_ANONYMOUS === "1" ? "" : await signInThroughForm(base, user.email, PASSWORD);
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const answer = await fetch(`${base}${page}`, { headers: cookie ? { cookie } : {} });
    await answer.arrayBuffer();
    if (answer.status !== 200) throw new Error(`status ${answer.status}`);
  }
  log(`${count} × ${page}: ${((performance.now() - started) / count).toFixed(2)} ms each (sequential)`);
  await server.stop();
  const file = readdirSync(outDir).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error("no profile");
  printProfile(path.join(outDir, file));
} finally {
  await cleanupAll();
  rmSync(dataDir, { recursive: true, force: true });
}
