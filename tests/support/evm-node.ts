// A real local EVM node for the chain watcher's tests, e2e and bench (issue 30): Hardhat's node
// (EDR) as a child process on its own port, the dev accounts of its default mnemonic funded,
// and what the tests do on it: send ETH, deploy and move a minimal ERC-20 (compiled here from
// tests/fixtures/evm/TestToken.sol by the solc package), mine, snapshot and revert.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  http,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { mnemonicToAccount } from "viem/accounts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CONFIG = path.join(ROOT, "tests/support/evm/hardhat.config.ts");
const SOURCE = path.join(ROOT, "tests/fixtures/evm/TestToken.sol");
/** Hardhat's default dev mnemonic: public, every node's accounts #0… are funded from it. */
const DEV_MNEMONIC = "test test test test test test test test test test test junk";
const DEV_ACCOUNTS = 20;

export interface Compiled {
  abi: Abi;
  bytecode: Hex;
}

let compiled: Promise<Record<"TestToken" | "Forwarder", Compiled>> | undefined;

/** The fixture's contracts, compiled once per process (and kept in the temp folder by the source's hash). */
export function compileContracts(): Promise<Record<"TestToken" | "Forwarder", Compiled>> {
  compiled ??= (async () => {
    const source = await readFile(SOURCE, "utf8");
    const cache = path.join(
      tmpdir(),
      "coinkeep-solc",
      `${createHash("sha256").update(source).digest("hex").slice(0, 16)}.json`,
    );
    try {
      return JSON.parse(await readFile(cache, "utf8")) as Record<"TestToken" | "Forwarder", Compiled>;
    } catch {
      // Not compiled yet on this machine.
    }
    const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string };
    const output = JSON.parse(
      solc.compile(
        JSON.stringify({
          language: "Solidity",
          sources: { "TestToken.sol": { content: source } },
          settings: {
            optimizer: { enabled: true, runs: 200 },
            evmVersion: "paris",
            outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
          },
        }),
      ),
    ) as {
      errors?: { severity: string; formattedMessage: string }[];
      contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
    };
    const errors = (output.errors ?? []).filter((e) => e.severity === "error");
    if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"));
    const of = (name: string): Compiled => {
      const c = output.contracts["TestToken.sol"]?.[name];
      if (!c) throw new Error(`solc produced no ${name}`);
      return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
    };
    const result = { TestToken: of("TestToken"), Forwarder: of("Forwarder") };
    await mkdir(path.dirname(cache), { recursive: true });
    await writeFile(cache, JSON.stringify(result));
    return result;
  })();
  return compiled;
}

export interface EvmNode {
  /** The node's process (the bench counts its CPU). */
  pid: number;
  rpcUrl: string;
  wsUrl: string;
  chainId: number;
  client: PublicClient;
  /** The funded dev accounts (#0 deploys and pays by default). */
  accounts: readonly Address[];
  sendEth(to: Address, wei: bigint, opts?: { from?: number }): Promise<Hex>;
  deployToken(): Promise<Address>;
  sendToken(token: Address, to: Address, units: bigint): Promise<Hex>;
  /** ETH paid to `to` through a contract's internal call (no transaction names `to`). */
  sendInternal(to: Address, wei: bigint): Promise<Hex>;
  /** Native transfers from the dev accounts, mined into one block (automine off meanwhile). */
  sendBatch(transfers: readonly { to: Address; value: bigint }[]): Promise<number>;
  mine(blocks?: number): Promise<void>;
  setAutomine(on: boolean): Promise<void>;
  snapshot(): Promise<string>;
  revert(id: string): Promise<void>;
  blockNumber(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts Hardhat's node on 127.0.0.1:`port` and waits until it answers. */
export async function startEvmNode({ port }: { port: number }): Promise<EvmNode> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      path.join(ROOT, "node_modules/hardhat/dist/src/cli.js"),
      "--config",
      CONFIG,
      "node",
      "--hostname",
      "127.0.0.1",
      "--port",
      String(port),
    ],
    {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true" },
    },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const rpcUrl = `http://127.0.0.1:${port}`;
  const rpc = rpcAt(rpcUrl);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  };
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`the EVM node exited: ${stderr}`);
      try {
        await rpc("eth_blockNumber");
        break;
      } catch {
        if (i > 300) throw new Error(`the EVM node did not answer on ${rpcUrl} within 60 s: ${stderr}`);
        await sleep(200);
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return connectEvmNode(rpcUrl, stop, child.pid);
}

/** One JSON-RPC call to the node at `rpcUrl` (the test methods viem has no action for). */
function rpcAt(rpcUrl: string) {
  return async (method: string, params: unknown[] = []): Promise<unknown> => {
    const response = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const body = (await response.json()) as { result?: unknown; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
}

/**
 * The same actions on a node that is already running at `rpcUrl` (the e2e server's, started by
 * scripts/e2e-server.mjs); `stop` is what stopping it means (nothing, for a node this process
 * did not start).
 */
export async function connectEvmNode(
  rpcUrl: string,
  stop: () => Promise<void> = async () => {},
  pid = -1,
): Promise<EvmNode> {
  const rpc = rpcAt(rpcUrl);
  const chainId = Number(await rpc("eth_chainId"));
  const chain = {
    id: chainId,
    name: "local",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  } as const;
  const client = createPublicClient({ chain, transport: http(rpcUrl) }) as PublicClient;
  const signers = Array.from({ length: DEV_ACCOUNTS }, (_, i) =>
    mnemonicToAccount(DEV_MNEMONIC, { addressIndex: i }),
  );
  const wallets = signers.map((account) => createWalletClient({ account, chain, transport: http(rpcUrl) }));
  const wallet = (i: number) => {
    const w = wallets[i];
    if (!w) throw new Error(`no dev account #${i}`);
    return w;
  };
  let automine = true;
  /** With automine on a transaction is mined as it is sent; wait for its receipt then. */
  const settled = async (hash: Hex) => {
    if (automine) await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    return hash;
  };

  return {
    pid,
    rpcUrl,
    wsUrl: rpcUrl.replace(/^http/u, "ws"),
    chainId,
    client,
    accounts: signers.map((s) => s.address),
    sendEth: async (to, wei, opts = {}) =>
      settled(await wallet(opts.from ?? 0).sendTransaction({ to, value: wei })),
    async deployToken() {
      const { TestToken } = await compileContracts();
      const hash = await wallet(0).deployContract({
        abi: TestToken.abi,
        bytecode: TestToken.bytecode,
        args: [10n ** 15n],
      });
      if (!automine) await rpc("evm_mine");
      const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      if (!receipt.contractAddress) throw new Error("the token was not deployed");
      return receipt.contractAddress;
    },
    async sendToken(token, to, units) {
      const { TestToken } = await compileContracts();
      const data = encodeFunctionData({ abi: TestToken.abi, functionName: "transfer", args: [to, units] });
      return settled(await wallet(0).sendTransaction({ to: token, data }));
    },
    async sendInternal(to, wei) {
      const { Forwarder } = await compileContracts();
      const deployed = await wallet(0).deployContract({ abi: Forwarder.abi, bytecode: Forwarder.bytecode });
      if (!automine) await rpc("evm_mine");
      const receipt = await client.waitForTransactionReceipt({ hash: deployed, pollingInterval: 20 });
      if (!receipt.contractAddress) throw new Error("the forwarder was not deployed");
      const data = encodeFunctionData({ abi: Forwarder.abi, functionName: "forward", args: [to] });
      return settled(await wallet(0).sendTransaction({ to: receipt.contractAddress, data, value: wei }));
    },
    async sendBatch(transfers) {
      const was = automine;
      await rpc("evm_setAutomine", [false]);
      // Each dev account sends its share with nonces counted here: one round trip per transaction.
      const nonces = await Promise.all(
        signers.map((s) => client.getTransactionCount({ address: s.address, blockTag: "pending" })),
      );
      const gasPrice = await client.getGasPrice();
      await Promise.all(
        signers.map(async (signer, i) => {
          for (let k = i; k < transfers.length; k += signers.length) {
            const t = transfers[k];
            if (!t) continue;
            const nonce = nonces[i] ?? 0;
            nonces[i] = nonce + 1;
            const raw = await signer.signTransaction({
              to: t.to,
              value: t.value,
              nonce,
              gas: 21_000n,
              gasPrice: gasPrice * 2n,
              chainId,
              type: "legacy",
            });
            await rpc("eth_sendRawTransaction", [raw]);
          }
        }),
      );
      await rpc("evm_mine");
      if (was) await rpc("evm_setAutomine", [true]);
      return Number(await rpc("eth_blockNumber"));
    },
    async mine(blocks = 1) {
      // One evm_mine per block: hardhat_mine of about ten blocks or more "reserves" the middle
      // ones, which the node then serves with a zero parentHash (a chain no real node serves,
      // and one the watcher cannot read past).
      for (let i = 0; i < blocks; i++) await rpc("evm_mine");
    },
    async setAutomine(on) {
      await rpc("evm_setAutomine", [on]);
      automine = on;
    },
    snapshot: async () => String(await rpc("evm_snapshot")),
    async revert(id) {
      if ((await rpc("evm_revert", [id])) !== true) throw new Error(`evm_revert ${id} refused`);
    },
    blockNumber: async () => Number(await rpc("eth_blockNumber")),
    stop,
  };
}
