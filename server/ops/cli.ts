// The operator command line: node server/ops/cli.ts <command> [options]
//
// It opens the configured database itself (DATABASE_URL, or the embedded one
// in DATA_DIR), goes through the same domain rules as the API, and writes one
// audit_log row in the same transaction as every change it makes. Read-only
// commands are not logged. Exit code 0 on success; 1 with one line on stderr
// ("error: …") otherwise, and then nothing has been written.
//
// The commands themselves are declared in server/ops/commands/ and listed in
// server/ops/registry.ts; this file only finds the database to run them on.
import type { AppDb, Database } from "../backend/db/index.ts";
import type { Config } from "../config.ts";
import { errorLine, execute, parseCommandLine } from "./registry.ts";

/**
 * Runs a command on the configured database, or hands it to a server that
 * holds the embedded one.
 */
export async function main(argv: string[]): Promise<number> {
  let database: Database | undefined;
  try {
    const invocation = parseCommandLine(argv);
    if (invocation.kind === "help") {
      process.stdout.write(`${invocation.text}\n`);
      return 0;
    }
    if (invocation.command.alone) {
      // Restore makes a database of its own and reads no configuration (which would generate
      // secrets into DATA_DIR): its run() uses neither of these.
      const none = { db: undefined, config: undefined } as unknown as { db: AppDb; config: Config };
      process.stdout.write(await execute(invocation, none));
      return 0;
    }
    // The configuration and the database load only once the arguments have passed the
    // checks that need neither, so --help and typos answer at once.
    const { loadConfig, sharedSecrets } = await import("../config.ts");
    const config = loadConfig();
    if (!config.databaseUrl) {
      // The embedded database is held by a running server: let it run the command.
      const { callOpsSocket, opsSocketPath } = await import("./socket.ts");
      // Who acts is settled here (the server's $OPERATOR and OS user are not the operator's). In
      // front, so that it stays an option even after a "--" that ends the options.
      const viaServer = await callOpsSocket(
        opsSocketPath(config.dataDir),
        invocation.command.changes ? [`--as=${invocation.actor}`, ...invocation.forward] : invocation.forward,
      ).catch((error: unknown) => {
        // The server went away while it ran the command (killed, or stopped).
        const { code } = error as NodeJS.ErrnoException;
        if (code !== "ECONNRESET" && code !== "EPIPE") throw error;
        throw new Error(
          `The server stopped before it answered: ${invocation.command.name} may not have been carried out; check before running it again.`,
        );
      });
      if (viaServer) {
        process.stdout.write(viaServer.stdout);
        process.stderr.write(viaServer.stderr);
        return viaServer.code;
      }
    }
    const { openDatabase } = await import("../backend/db/index.ts");
    database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    // A command derives keys from the secrets as the server does: with others, it would seal
    // an enrolment or count sessions under keys no server of this database uses (record 051).
    const { checkSecrets } = await import("../backend/db/secret-checks.ts");
    await checkSecrets(database.db, sharedSecrets(config));
    process.stdout.write(await execute(invocation, { db: database.db, config, database }));
    return 0;
  } catch (error) {
    process.stderr.write(errorLine(error));
    return 1;
  } finally {
    await database?.close().catch(() => {});
  }
}

if (import.meta.main) {
  // A closed pipe (… | head) is not an error of the command.
  process.stdout.on("error", () => {});
  process.exitCode = await main(process.argv.slice(2));
}
