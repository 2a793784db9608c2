// The local EVM node of the chain watcher's tests (issue 30): Hardhat's EDR, run by
// tests/support/evm-node.ts as `hardhat --config <this file> node`. Blocks hold up to 1,000
// plain transfers (the bench), and Hardhat's own folders go to the system's temp folder, not
// into the repository.
import { tmpdir } from "node:os";
import path from "node:path";

const scratch = path.join(tmpdir(), "coinkeep-hardhat");

export default {
  paths: {
    artifacts: path.join(scratch, "artifacts"),
    cache: path.join(scratch, "cache"),
  },
  networks: {
    // `hardhat node` serves the network named "node".
    node: {
      type: "edr-simulated",
      blockGasLimit: 100_000_000,
    },
  },
};
