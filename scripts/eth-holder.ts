// A sender for the scripts that drive sends through a real server
// (scripts/bench/sends.ts, durability-trace.ts): an account with an issued ETH wallet
// holding a deposit, written through the backend's own domain functions.
import { randomBytes } from "node:crypto";
import { createAccount, type AccountsContext } from "../server/backend/domain/accounts.ts";
import { validateAddress } from "../common/addresses.ts";
import { creditDeposit } from "../server/backend/domain/ledger.ts";
import { issueAddress, requestWallet } from "../server/backend/domain/wallets.ts";

/** A fresh valid ETH address, in its checksummed form. */
export function ethAddress(): string {
  const checked = validateAddress("ETH", `0x${randomBytes(20).toString("hex")}`);
  if (!checked.ok) throw new Error(checked.reason);
  return checked.address;
}

export async function seedEthHolder(
  ctx: AccountsContext,
  holder: { email: string; password: string; units: bigint; externalTxId: string },
): Promise<{ email: string; twelveWords: string; walletId: string }> {
  const account = await createAccount(ctx, holder.email, holder.password);
  if (!account.ok) throw new Error("account");
  const wallet = await requestWallet(ctx.db, account.userId, "ETH");
  if (!wallet.ok) throw new Error("wallet");
  await issueAddress(ctx.db, wallet.wallet.id, ethAddress());
  await creditDeposit(ctx.db, {
    walletId: wallet.wallet.id,
    units: holder.units,
    externalTxId: holder.externalTxId,
  });
  return { email: holder.email, twelveWords: account.words.join(" "), walletId: wallet.wallet.id };
}
