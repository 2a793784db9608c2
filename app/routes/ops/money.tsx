// Money (issue 26): reconciliation per coin — owed to holders, held for
// sends, the holdings last recorded, the difference — and the pauses in
// force; for treasury, recording holdings and pausing or resuming a coin.
// Opening the page writes nothing: it shows `reconcile --dry-run`; the real
// `reconcile` (which pauses a short coin's sends) runs from its own button.
import { Link } from "react-router";
import { Field } from "../../components/field.tsx";
import { PausesTable, SwitchForm } from "../../components/console-pauses.tsx";
import { ConsoleForm, replyFor, SelectField, When } from "../../components/console-form.tsx";
import { readConsoleForm, refusedForm, runForm } from "../../console-forms.server.ts";
import { can, listFor, requireStaff } from "../../console.server.ts";
import type { PauseRow } from "../../console-users.server.ts";
import {
  COIN_CHOICES,
  coinSwitchSchema,
  holdingsSchema,
  PAUSE_WHATS,
  reconcileSchema,
} from "../../forms/console.ts";
import type { Route } from "./+types/money";

/** One coin as `reconcile --json` gives it (amounts are the command's decimal text). */
interface CoinRow {
  coin: string;
  owed: string;
  heldForSends: string;
  pendingSends: string;
  holdings: { amount: string; source: string; recordedAt: string; actor: string } | null;
  difference: string | null;
  shortfall: boolean;
  sendsPaused: PauseRow | null;
  pausedNow: boolean;
  /** The dry run: a real reconcile would pause this coin's sends now. */
  wouldPause: boolean;
}

/** `chains --json` (issue 30, record 053): each watched network, the orphaned deposits, what is not watched. */
interface ChainRows {
  networks: {
    network: string;
    coins: string[];
    rpc: string | null;
    head: number | null;
    cursor: number | null;
    lag: number | null;
    lastError: string | null;
    lastErrorAt: string | null;
  }[];
  orphaned: {
    coin: string;
    txid: string;
    output: number;
    walletId: string;
    amount: string;
    block: number | null;
  }[];
  unwatched: string[];
}

export function meta() {
  return [{ title: "Money — Coinkeep staff console" }];
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const staff = await requireStaff(request, context, "reconcile");
  const [coins, pauses, chains] = await Promise.all([
    listFor<CoinRow[]>(context, staff, "reconcile", { options: { "dry-run": true } }),
    can(staff, "pauses") ? listFor<PauseRow[]>(context, staff, "pauses") : null,
    can(staff, "chains") ? listFor<ChainRows>(context, staff, "chains") : null,
  ]);
  return {
    coins,
    pauses,
    chains,
    may: {
      reconcile: can(staff, "reconcile"),
      holdings: can(staff, "holdings set"),
      pause: can(staff, "pause --coin"),
      resume: can(staff, "resume --coin"),
      users: can(staff, "users"),
    },
  };
}

export async function action({ request, context }: Route.ActionArgs) {
  const staff = await requireStaff(request, context, "reconcile");
  const { formData, intent } = await readConsoleForm(request, context);
  const args = { context, staff, formData, to: "/ops/money" };
  switch (intent) {
    case "reconcile":
      return runForm(
        { ...args, form: "reconcile", schema: reconcileSchema },
        () => ({ command: "reconcile", input: {} }),
        (_v, json) => {
          const rows = json as CoinRow[];
          const paused = rows.filter((c) => c.pausedNow).map((c) => c.coin);
          const short = rows.filter((c) => c.shortfall).map((c) => c.coin);
          if (paused.length > 0) {
            return `Reconciled. Holdings are short: sends of ${paused.join(", ")} are now paused (automatic).`;
          }
          return short.length > 0
            ? `Reconciled. Holdings of ${short.join(", ")} are short; their sends were already paused.`
            : "Reconciled. No coin is short: nothing was paused.";
        },
      );
    case "holdings":
      return runForm(
        { ...args, form: "holdings", schema: holdingsSchema },
        (v) => ({
          command: "holdings set",
          input: { args: [v.coin, v.amount], options: { source: v.source } },
        }),
        (v, json) => {
          const row = json as Partial<CoinRow>;
          return (
            `Recorded holdings of ${v.amount} ${v.coin}.` +
            (row.pausedNow ? ` Holdings are short: sends of ${v.coin} are now paused (automatic).` : "")
          );
        },
      );
    case "pause":
    case "resume":
      return runForm(
        { ...args, form: intent, schema: coinSwitchSchema },
        (v) => ({
          command: v.intent === "pause" ? "pause --coin" : "resume --coin",
          input: { options: { coin: v.coin, reason: v.reason }, args: [v.what] },
        }),
        (v) => `${v.intent === "pause" ? "Paused" : "Resumed"} ${v.what} of ${v.coin} for every user.`,
      );
    default:
      return refusedForm("", { status: "error", error: { "": ["Unknown action."] } });
  }
}

export default function Money({ loaderData, actionData }: Route.ComponentProps) {
  const { coins, pauses, chains, may } = loaderData;
  const shortfalls = coins.filter((c) => c.shortfall);
  const unpaused = shortfalls.filter((c) => c.wouldPause).map((c) => c.coin);
  const paused = shortfalls.filter((c) => !c.wouldPause).map((c) => c.coin);
  return (
    <>
      <h1>Money</h1>
      {shortfalls.length > 0 ? (
        <div className="console-refusal" role="alert">
          <p>
            Shortfall: holdings of {shortfalls.map((c) => c.coin).join(", ")} are below what is owed plus held
            for sends.
          </p>
          {paused.length > 0 ? (
            <p>Sends of {paused.join(", ")} are paused until someone resumes them.</p>
          ) : null}
          {unpaused.length > 0 ? (
            <p>Sends of {unpaused.join(", ")} are not paused yet: reconciling now pauses them (automatic).</p>
          ) : null}
        </div>
      ) : null}
      <p>
        These figures are computed as the page opens; opening it changes nothing. Reconciling pauses the sends
        of a coin whose holdings are short.
      </p>
      {may.reconcile ? (
        <ConsoleForm
          id="reconcile"
          intent="reconcile"
          schema={() => import("../../forms/console.ts").then((m) => m.reconcileSchema)}
          result={replyFor(actionData, "reconcile")}
          submit="Reconcile now"
        />
      ) : null}
      <table>
        <caption>Reconciliation per coin: holdings − (owed + held for sends)</caption>
        <thead>
          <tr>
            <th scope="col">Coin</th>
            <th scope="col" className="num">
              Owed to holders
            </th>
            <th scope="col" className="num">
              Held for sends
            </th>
            <th scope="col" className="num">
              Holdings
            </th>
            <th scope="col" className="num">
              Difference
            </th>
            <th scope="col">Sends</th>
          </tr>
        </thead>
        <tbody>
          {coins.map((c) => (
            <tr key={c.coin}>
              <th scope="row">{c.coin}</th>
              <td className="num">{c.owed}</td>
              <td className="num">{c.heldForSends}</td>
              <td className="num">
                {c.holdings ? (
                  <>
                    {c.holdings.amount}{" "}
                    <small>
                      (<When iso={c.holdings.recordedAt} />, {c.holdings.source}, by {c.holdings.actor})
                    </small>
                  </>
                ) : (
                  "not recorded"
                )}
              </td>
              <td className="num">
                {c.difference ?? "–"}
                {c.shortfall ? " (shortfall)" : ""}
              </td>
              <td>
                {c.sendsPaused
                  ? `paused${c.sendsPaused.automatic ? " (automatic)" : ""}`
                  : c.wouldPause
                    ? "open (reconciling pauses them)"
                    : "open"}
                {c.heldForSends !== c.pendingSends ? ` — pending sends add up to ${c.pendingSends}` : ""}
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      {chains !== null ? <ChainWatchers chains={chains} /> : null}

      {pauses !== null ? (
        <>
          <h2 id="money-pauses">Pauses in force</h2>
          {pauses.length === 0 ? (
            <p>Nothing is paused.</p>
          ) : (
            <PausesTable
              labelledBy="money-pauses"
              scoped
              pauses={pauses.map((p) => ({
                ...p,
                scope:
                  p.coin !== null ? (
                    `coin ${p.coin} (every user)`
                  ) : may.users && p.userId ? (
                    <>
                      user <Link to={`/ops/users/${p.userId}`}>{p.email ?? p.userId}</Link>
                    </>
                  ) : (
                    `user ${p.email ?? p.userId ?? ""}`
                  ),
              }))}
            />
          )}
        </>
      ) : null}

      {may.holdings ? (
        <section aria-labelledby="holdings-title" className="console-card">
          <h2 id="holdings-title">Record holdings</h2>
          <p>What the provider holds of a coin, from its node or a custodian statement. The newest counts.</p>
          <ConsoleForm
            id="holdings"
            intent="holdings"
            schema={() => import("../../forms/console.ts").then((m) => m.holdingsSchema)}
            result={replyFor(actionData, "holdings")}
            submit="Record holdings"
          >
            {(f) => (
              <>
                <SelectField meta={f.coin} label="Coin" options={COIN_CHOICES} />
                <Field meta={f.amount} label="Amount held" type="text" inputMode="decimal" />
                <Field meta={f.source} label="Source (node, statement)" type="text" maxLength={500} />
              </>
            )}
          </ConsoleForm>
        </section>
      ) : null}

      {may.pause ? (
        <SwitchForm verb="pause" title="Pause a coin" whats={PAUSE_WHATS} coin actionData={actionData} />
      ) : null}

      {may.resume ? (
        <SwitchForm
          verb="resume"
          title="Resume a coin"
          note="Also lifts an automatic pause after a shortfall."
          whats={PAUSE_WHATS}
          coin
          actionData={actionData}
        />
      ) : null}
    </>
  );
}

const shown = (n: number | null) => (n === null ? "–" : String(n));

/** Where each chain watcher is (record 053); a rescan is an operator command (npm run ops -- chains rescan). */
function ChainWatchers({ chains }: { chains: ChainRows }) {
  return (
    <>
      <h2 id="money-chains">Chain watchers</h2>
      {chains.networks.length === 0 ? (
        <p>No chain is watched (set CHAIN_RPC_ETH or CHAIN_RPC_BNB).</p>
      ) : (
        <table aria-labelledby="money-chains">
          <thead>
            <tr>
              <th scope="col">Network</th>
              <th scope="col">Coins</th>
              <th scope="col" className="num">
                Head
              </th>
              <th scope="col" className="num">
                Last block read
              </th>
              <th scope="col" className="num">
                Behind by
              </th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {chains.networks.map((n) => (
              <tr key={n.network}>
                <th scope="row">{n.network}</th>
                <td>{n.coins.join(", ") || "not configured"}</td>
                <td className="num">{shown(n.head)}</td>
                <td className="num">{shown(n.cursor)}</td>
                <td className="num">
                  {n.lag === null ? "–" : `${n.lag} ${n.lag === 1 ? "block" : "blocks"}`}
                </td>
                <td>
                  {n.lastError ? (
                    <>
                      {n.lastError} {n.lastErrorAt ? <When iso={n.lastErrorAt} /> : null}
                    </>
                  ) : (
                    "none"
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {chains.orphaned.length > 0 ? (
        <>
          <p>
            Credited deposits whose block was reorganised away (their coin&apos;s deposits are paused until
            you decide; README, &ldquo;Chain watchers&rdquo;):
          </p>
          <ul>
            {chains.orphaned.map((d) => (
              <li key={`${d.coin}:${d.txid}:${d.output}`}>
                {d.amount}, {d.txid}:{d.output}, block {shown(d.block)}, wallet {d.walletId}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {chains.unwatched.length > 0 ? (
        <ul>
          {chains.unwatched.map((sentence) => (
            <li key={sentence}>{sentence}.</li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
