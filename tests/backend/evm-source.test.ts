// Issue 30 (record 053): the watcher's view of a node. Over http and over a WebSocket it reads
// the same chain; an answer of the wrong shape is refused with a sentence naming the method and
// the field, never recorded.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { evmSource, RpcShapeError } from "../../server/backend/chains/evm-source.ts";
import { startEvmNode, type EvmNode } from "../support/evm-node.ts";

let node: EvmNode;
beforeAll(async () => {
  node = await startEvmNode({ port: 8736 });
  await node.sendEth("0x8f348F300873Fd5DA36950B2aC75a26584584feE", 5n);
}, 120_000);
afterAll(async () => {
  await node?.stop();
});

describe("the EVM source", () => {
  test("http and WebSocket read the same blocks; the transaction's recipient in EIP-55 form", async () => {
    const overHttp = evmSource(node.rpcUrl);
    const overSocket = evmSource(node.wsUrl);
    try {
      const head = await overHttp.head();
      expect(head).toBe(await node.blockNumber());
      expect(await overSocket.head()).toBe(head);
      const block = await overHttp.block(head);
      expect(block).toEqual(await overSocket.block(head));
      expect(block?.transactions).toEqual([
        {
          hash: expect.stringMatching(/^0x[0-9a-f]{64}$/u),
          to: "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
          value: 5n,
        },
      ]);
      expect(await overHttp.header(head)).toEqual({
        number: head,
        hash: block?.hash,
        parentHash: block?.parentHash,
      });
      expect(await overHttp.block(head + 100)).toBeNull();
    } finally {
      await overSocket.close();
      await overHttp.close();
    }
  });
});

describe("a node answering garbage", () => {
  let server: Server;
  let answer: unknown;
  let url: string;
  const reply = (call: { id: number }) => ({ jsonrpc: "2.0", id: call.id, result: answer });
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        // viem sends JSON-RPC batches (arrays) over http.
        const calls = JSON.parse(body) as { id: number } | { id: number }[];
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(Array.isArray(calls) ? calls.map(reply) : reply(calls)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  test("each wrong shape is refused naming the method and the field", async () => {
    const source = evmSource(url);
    answer = "twelve";
    await expect(source.head()).rejects.toThrow(
      new RpcShapeError("eth_blockNumber", "answer: not a hex quantity"),
    );
    answer = { number: "0x1", hash: "0x12", parentHash: `0x${"0".repeat(64)}`, transactions: [] };
    await expect(source.block(1)).rejects.toThrow(
      "eth_getBlockByNumber: the node's answer has the wrong shape (hash: not a 32-byte hash)",
    );
    answer = {
      number: "0x1",
      hash: `0x${"1".repeat(64)}`,
      parentHash: `0x${"0".repeat(64)}`,
      transactions: [{ hash: `0x${"2".repeat(64)}`, to: "0xnot-an-address", value: "0x1" }],
    };
    await expect(source.block(1)).rejects.toThrow("(transactions.0.to: not an address)");
    answer = [{ address: "0x8f348F300873Fd5DA36950B2aC75a26584584feE", topics: [], data: "0x1" }];
    await expect(source.transferLogs("0x8f348F300873Fd5DA36950B2aC75a26584584feE", 1, 2)).rejects.toThrow(
      /^eth_getLogs: the node's answer has the wrong shape \(0\.data: not hex data\)$/u,
    );
    answer = { status: "0x2", blockHash: `0x${"1".repeat(64)}` };
    await expect(source.receipt(`0x${"2".repeat(64)}`)).rejects.toThrow(/^eth_getTransactionReceipt: /u);
    // A height too large for a safe integer is refused too, not rounded.
    answer = "0xffffffffffffffffff";
    await expect(source.head()).rejects.toThrow(
      "eth_blockNumber: the node's answer has the wrong shape (0xffffffffffffffffff is too large)",
    );
  });
});
