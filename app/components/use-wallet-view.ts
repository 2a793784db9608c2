import { useRouteLoaderData } from "react-router";
import type { WalletView } from "../wallet-view.server.ts";

/** The signed-in shell's data (coins, total, currency), for the pages inside it. */
export function useWalletView(): WalletView {
  const data = useRouteLoaderData("routes/protected-layout") as { view: WalletView } | undefined;
  if (!data) throw new Error("useWalletView is used outside the signed-in layout");
  return data.view;
}
