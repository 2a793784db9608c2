// One EVM network's JSON-RPC endpoint, as the watcher reads it (issue 30, record 053).
// viem keeps the connection (http with JSON-RPC batching, or a WebSocket that reconnects);
// every answer is checked here against a schema of the fields we use, so a node that answers
// garbage is refused (RpcShapeError) and the watcher retries, never records from it.
import { createPublicClient, getAddress, http, webSocket, type PublicClient } from "viem";
import { z } from "zod";

export class RpcShapeError extends Error {
  constructor(method: string, issue: string) {
    super(`${method}: the node's answer has the wrong shape (${issue})`);
    this.name = "RpcShapeError";
  }
}

const quantity = z.string().regex(/^0x[0-9a-fA-F]{1,64}$/u, "not a hex quantity");
const hash32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/u, "not a 32-byte hash");
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/u, "not an address");
const data = z.string().regex(/^0x(?:[0-9a-fA-F]{2})*$/u, "not hex data");

const transactionSchema = z.object({
  hash: hash32,
  // null for a contract creation.
  to: address.nullable().optional(),
  value: quantity,
});

const blockSchema = z.object({
  number: quantity,
  hash: hash32,
  parentHash: hash32,
  transactions: z.array(transactionSchema),
});

const headerSchema = z.object({ number: quantity, hash: hash32, parentHash: hash32 });

const logSchema = z.object({
  address,
  topics: z.array(hash32),
  data,
  blockNumber: quantity,
  blockHash: hash32,
  transactionHash: hash32,
  logIndex: quantity,
  removed: z.boolean().optional(),
});

const receiptSchema = z.object({ status: z.enum(["0x0", "0x1"]), blockHash: hash32 });

export interface ChainTransaction {
  hash: `0x${string}`;
  /** EIP-55 form; null for a contract creation. */
  to: string | null;
  value: bigint;
}

export interface ChainBlock {
  number: number;
  hash: string;
  parentHash: string;
  transactions: ChainTransaction[];
}

export interface ChainHeader {
  number: number;
  hash: string;
  parentHash: string;
}

export interface ChainLog {
  address: string;
  topics: string[];
  data: `0x${string}`;
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  logIndex: number;
}

/** keccak-256("Transfer(address,address,uint256)"): the ERC-20 event's first topic. */
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

/** What the watcher asks a network; a fake or a real node behind it. */
export interface EvmSource {
  head(): Promise<number>;
  /** The block with its transactions, or null when the node has none at that height (yet). */
  block(number: number): Promise<ChainBlock | null>;
  /** The block's header only (walking back to a common ancestor). */
  header(number: number): Promise<ChainHeader | null>;
  /** A token's Transfer logs in [from, to], both included. */
  transferLogs(token: string, from: number, to: number): Promise<ChainLog[]>;
  /** Whether a transaction succeeded, and the block its receipt names; null when unknown. */
  receipt(hash: string): Promise<{ ok: boolean; blockHash: string } | null>;
  close(): Promise<void>;
}

function parse<T>(schema: z.ZodType<T>, method: string, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    const first = result.error.issues[0];
    throw new RpcShapeError(
      method,
      first ? `${first.path.join(".") || "answer"}: ${first.message}` : "invalid",
    );
  }
  return result.data;
}

function number(hex: string, method: string): number {
  const n = Number.parseInt(hex.slice(2), 16);
  if (!Number.isSafeInteger(n)) throw new RpcShapeError(method, `${hex} is too large`);
  return n;
}

const toHex = (n: number) => `0x${n.toString(16)}` as const;

/** The source for one endpoint (http(s) with batching, or ws(s)). */
export function evmSource(rpcUrl: string, opts: { timeoutMs?: number } = {}): EvmSource {
  const timeout = opts.timeoutMs ?? 15_000;
  const isSocket = rpcUrl.startsWith("ws:") || rpcUrl.startsWith("wss:");
  const transport = isSocket
    ? webSocket(rpcUrl, { timeout, retryCount: 0 })
    : http(rpcUrl, { timeout, retryCount: 0, batch: { batchSize: 50, wait: 0 } });
  const client: PublicClient = createPublicClient({ transport });
  // viem's typed request needs its schema of methods; ours are checked by zod instead.
  const request = (method: string, params: unknown[]): Promise<unknown> =>
    (client.request as (args: { method: string; params: unknown[] }) => Promise<unknown>)({ method, params });

  return {
    async head() {
      return number(
        parse(quantity, "eth_blockNumber", await request("eth_blockNumber", [])),
        "eth_blockNumber",
      );
    },
    async block(n) {
      const raw = await request("eth_getBlockByNumber", [toHex(n), true]);
      if (raw === null) return null;
      const block = parse(blockSchema, "eth_getBlockByNumber", raw);
      return {
        number: number(block.number, "eth_getBlockByNumber"),
        hash: block.hash.toLowerCase(),
        parentHash: block.parentHash.toLowerCase(),
        transactions: block.transactions.map((t) => ({
          hash: t.hash.toLowerCase() as `0x${string}`,
          to: t.to ? getAddress(t.to) : null,
          value: BigInt(t.value),
        })),
      };
    },
    async header(n) {
      const raw = await request("eth_getBlockByNumber", [toHex(n), false]);
      if (raw === null) return null;
      const header = parse(headerSchema, "eth_getBlockByNumber", raw);
      return {
        number: number(header.number, "eth_getBlockByNumber"),
        hash: header.hash.toLowerCase(),
        parentHash: header.parentHash.toLowerCase(),
      };
    },
    async transferLogs(token, from, to) {
      const raw = await request("eth_getLogs", [
        { address: token, topics: [TRANSFER_TOPIC], fromBlock: toHex(from), toBlock: toHex(to) },
      ]);
      return parse(z.array(logSchema), "eth_getLogs", raw)
        .filter((log) => log.removed !== true)
        .map((log) => ({
          address: getAddress(log.address),
          topics: log.topics.map((t) => t.toLowerCase()),
          data: log.data as `0x${string}`,
          blockNumber: number(log.blockNumber, "eth_getLogs"),
          blockHash: log.blockHash.toLowerCase(),
          transactionHash: log.transactionHash.toLowerCase(),
          logIndex: number(log.logIndex, "eth_getLogs"),
        }));
    },
    async receipt(hash) {
      const raw = await request("eth_getTransactionReceipt", [hash]);
      if (raw === null) return null;
      const receipt = parse(receiptSchema, "eth_getTransactionReceipt", raw);
      return { ok: receipt.status === "0x1", blockHash: receipt.blockHash.toLowerCase() };
    },
    async close() {
      if (isSocket) {
        const socket = (await client.transport.getRpcClient?.())?.socket as
          { close?: () => void } | undefined;
        socket?.close?.();
      }
    },
  };
}
