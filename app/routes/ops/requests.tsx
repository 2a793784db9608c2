// Wallet requests (issue 26): the wallets waiting for an address (oldest
// first, 25 a page, one coin or all: ?coin= and ?page=, plain links and a GET
// form, so it works with scripts off), the address pools and how each coin
// issues; giving a wallet its address by hand, switching a coin's issuing,
// reporting a deposit.
import { Link } from "react-router";
import { Field } from "../../components/field.tsx";
import { CoinFilter, ConsoleForm, replyFor, SelectField, When } from "../../components/console-form.tsx";
import { readConsoleForm, refusedForm, runForm } from "../../console-forms.server.ts";
import { can, listFor, pageNumber, pageOf, requireStaff } from "../../console.server.ts";
import { COIN_CHOICES, depositSchema, issueAddressSchema, issuingSchema } from "../../forms/console.ts";
import type { Route } from "./+types/requests";

/** As `requests --json`. */
interface RequestRow {
  walletId: string;
  email: string;
  coin: string;
  requestedAt: string;
}

/** As `pool --json`. */
interface PoolRow {
  coin: string;
  free: number;
  taken: number;
  low: boolean;
}

/** As `custody --json`. */
interface CustodyRow {
  coin: string;
  mode: "derived" | "pool" | "manual" | "none";
  keyFingerprint?: string;
  nextIndex?: number;
  poolFree?: number;
  setBy?: string;
  since?: string;
  paused: { reason: string; actor: string; since: string } | null;
  waiting: number;
}

/** As `deposit --json`. */
interface DepositResult {
  status: "credited" | "pending" | "unchanged" | "already-credited";
  walletId: string;
  amount: string;
  confirmations: number | null;
  required: number;
  balance: string;
}

export function meta() {
  return [{ title: "Wallet requests — Coinkeep staff console" }];
}

const PAGE_SIZE = 25;

/** The queue's coin from the URL: an unknown coin is all coins. */
function coinOf(url: URL): (typeof COIN_CHOICES)[number] | null {
  const coinText = (url.searchParams.get("coin") ?? "").toUpperCase();
  return COIN_CHOICES.find((c) => c === coinText) ?? null;
}

/** The queue's address with this filter and page (the first page and all coins say nothing). */
function queueHref(coin: string | null, page: number): string {
  const query = new URLSearchParams();
  if (coin) query.set("coin", coin);
  if (page > 1) query.set("page", String(page));
  const text = query.toString();
  return text === "" ? "/ops/requests" : `/ops/requests?${text}`;
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const staff = await requireStaff(request, context, "requests");
  const url = new URL(request.url);
  const coin = coinOf(url);
  const [all, pools, custody] = await Promise.all([
    listFor<RequestRow[]>(context, staff, "requests", { options: { coin: coin ?? undefined } }),
    can(staff, "pool") ? listFor<PoolRow[]>(context, staff, "pool") : null,
    can(staff, "custody") ? listFor<CustodyRow[]>(context, staff, "custody") : null,
  ]);
  // Oldest first, as the command lists them; a page past the end shows the last.
  const { items: requests, page, pages, total, first } = pageOf(all, url.searchParams.get("page"), PAGE_SIZE);
  return {
    requests,
    queue: {
      coin,
      page,
      pages,
      total,
      first,
      earlier: page > 1 ? queueHref(coin, page - 1) : null,
      later: page < pages ? queueHref(coin, page + 1) : null,
    },
    pools,
    custody,
    may: {
      issue: can(staff, "issue-address"),
      issuing: can(staff, "issuing"),
      deposit: can(staff, "deposit"),
      users: can(staff, "users"),
    },
  };
}

export async function action({ request, context }: Route.ActionArgs) {
  const staff = await requireStaff(request, context, "requests");
  const { formData, intent } = await readConsoleForm(request, context);
  // Back to the same page of the queue after a form.
  const url = new URL(request.url);
  const args = {
    context,
    staff,
    formData,
    to: queueHref(coinOf(url), pageNumber(url.searchParams.get("page"))),
  };
  switch (intent) {
    case "issue-address": {
      const walletId = formData.get("walletId");
      return runForm(
        {
          ...args,
          form: `issue-${typeof walletId === "string" ? walletId : ""}`,
          schema: issueAddressSchema,
        },
        (v) => ({ command: "issue-address", input: { args: [v.walletId, v.address] } }),
        (_v, json) => {
          const r = json as { coin?: string; address?: string; email?: string };
          return `Issued ${r.address ?? ""} to the ${r.coin ?? ""} wallet of ${r.email ?? ""}.`;
        },
      );
    }
    case "issuing":
      return runForm(
        { ...args, form: "issuing", schema: issuingSchema },
        (v) => ({ command: "issuing", input: { args: [v.coin, v.mode], options: { reason: v.reason } } }),
        (v, json) => {
          const r = json as { changed?: boolean; issued?: unknown[]; waiting?: number };
          if (!r.changed) return `${v.coin} issuing is already ${v.mode}. Nothing changed.`;
          const caught =
            r.issued !== undefined
              ? ` ${r.issued.length} waiting issued now, ${r.waiting ?? 0} still waiting.`
              : "";
          return `${v.coin} issuing is now ${v.mode}.${caught}`;
        },
      );
    case "deposit":
      return runForm(
        { ...args, form: "deposit", schema: depositSchema },
        (v) => ({
          command: "deposit",
          input: {
            args: [v.coin, v.txid, v.output || "0", v.address, v.amount],
            options: {
              confirmations: v.confirmations || undefined,
              usd: v.usd || undefined,
            },
          },
        }),
        (v, json) => {
          const r = json as DepositResult;
          const what = `${r.amount} ${v.coin} to wallet ${r.walletId}`;
          switch (r.status) {
            case "credited":
              return `Credited ${what}. Available balance: ${r.balance} ${v.coin}.`;
            case "pending":
              return `Pending: ${what}, ${r.confirmations ?? 0} of ${r.required} confirmations.`;
            case "unchanged":
              return `Pending, unchanged: ${what}. Nothing changed.`;
            default:
              return `Already credited: ${what}. Nothing changed.`;
          }
        },
      );
    default:
      return refusedForm("", { status: "error", error: { "": ["Unknown action."] } });
  }
}

const MODE_TEXT: Record<CustodyRow["mode"], string> = {
  derived: "automatic, from the account key",
  pool: "automatic, from the pool",
  manual: "by hand",
  none: "nothing to issue from",
};

export default function Requests({ loaderData, actionData }: Route.ComponentProps) {
  const { requests, queue, pools, custody, may } = loaderData;
  const which = queue.coin ? `${queue.coin} ` : "";
  return (
    <>
      <h1>Wallet requests</h1>
      <h2 id="requests-waiting">Waiting for an address</h2>
      <CoinFilter
        id="requests-coin"
        label="Filter wallet requests"
        coins={COIN_CHOICES}
        value={queue.coin ?? ""}
      />
      <p role="status">
        {queue.total === 0
          ? `No ${which}wallet requests are waiting for an address.`
          : `${queue.total} ${which}${queue.total === 1 ? "request" : "requests"} waiting, oldest first. ` +
            `Showing ${queue.first} to ${queue.first + requests.length - 1} (page ${queue.page} of ${queue.pages}).`}
      </p>
      {requests.length === 0 ? null : (
        <table aria-labelledby="requests-waiting">
          <thead>
            <tr>
              <th scope="col">Requested</th>
              <th scope="col">User</th>
              <th scope="col">Coin</th>
              <th scope="col">Wallet id</th>
              {may.issue ? <th scope="col">Issue an address</th> : null}
            </tr>
          </thead>
          <tbody>
            {requests.map((r) => (
              <tr key={r.walletId}>
                <td>
                  <When iso={r.requestedAt} />
                </td>
                <td>{r.email}</td>
                <td>{r.coin}</td>
                <td className="mono">{r.walletId}</td>
                {may.issue ? (
                  <td>
                    <ConsoleForm
                      id={`issue-${r.walletId}`}
                      intent="issue-address"
                      hidden={{ walletId: r.walletId }}
                      schema={() => import("../../forms/console.ts").then((m) => m.issueAddressSchema)}
                      result={replyFor(actionData, `issue-${r.walletId}`)}
                      submit="Issue"
                      className="inline"
                    >
                      {(f) => (
                        <Field
                          meta={f.address}
                          label={`${r.coin} address for ${r.email}`}
                          type="text"
                          autoComplete="off"
                          spellCheck={false}
                        />
                      )}
                    </ConsoleForm>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {queue.earlier || queue.later ? (
        <nav aria-label="Pages of wallet requests">
          <ul>
            {queue.earlier ? (
              <li>
                <Link to={queue.earlier} rel="prev">
                  Earlier requests
                </Link>
              </li>
            ) : null}
            {queue.later ? (
              <li>
                <Link to={queue.later} rel="next">
                  Later requests
                </Link>
              </li>
            ) : null}
          </ul>
        </nav>
      ) : null}

      {custody !== null ? (
        <>
          <h2 id="requests-custody">How each coin issues</h2>
          <table aria-labelledby="requests-custody">
            <thead>
              <tr>
                <th scope="col">Coin</th>
                <th scope="col">Issuing</th>
                <th scope="col">Detail</th>
                <th scope="col">Paused</th>
                <th scope="col" className="num">
                  Waiting
                </th>
              </tr>
            </thead>
            <tbody>
              {custody.map((c) => (
                <tr key={c.coin}>
                  <th scope="row">{c.coin}</th>
                  <td>{MODE_TEXT[c.mode]}</td>
                  <td>
                    {c.mode === "derived" ? (
                      <>
                        key <span className="mono">{c.keyFingerprint}</span>, next index {c.nextIndex}
                      </>
                    ) : null}
                    {c.mode === "manual" ? (
                      <>
                        set by {c.setBy} on <When iso={c.since} />
                      </>
                    ) : null}
                    {c.poolFree !== undefined ? ` ${c.poolFree} free in the pool` : ""}
                  </td>
                  <td>
                    {c.paused ? (
                      <>
                        since <When iso={c.paused.since} />, by {c.paused.actor}:{" "}
                        <span className="message-text">{c.paused.reason}</span>
                      </>
                    ) : (
                      "no"
                    )}
                  </td>
                  <td className="num">{c.waiting}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}

      {pools !== null ? (
        <>
          <h2 id="requests-pools">Address pools</h2>
          {pools.length === 0 ? (
            <p>No address pools.</p>
          ) : (
            <table aria-labelledby="requests-pools">
              <thead>
                <tr>
                  <th scope="col">Coin</th>
                  <th scope="col" className="num">
                    Free
                  </th>
                  <th scope="col" className="num">
                    Taken
                  </th>
                  <th scope="col">Level</th>
                </tr>
              </thead>
              <tbody>
                {pools.map((p) => (
                  <tr key={p.coin}>
                    <th scope="row">{p.coin}</th>
                    <td className="num">{p.free}</td>
                    <td className="num">{p.taken}</td>
                    <td>{p.low ? "low" : "ok"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <p>
            Load a pool from the command line: <code>npm run ops -- pool add &lt;coin&gt; &lt;file&gt;</code>.
          </p>
        </>
      ) : null}

      {may.issuing ? (
        <section aria-labelledby="issuing-title" className="console-card">
          <h2 id="issuing-title">Switch issuing</h2>
          <p>
            Automatic issues at once (and issues the waiting requests); by hand, every request waits here.
          </p>
          <ConsoleForm
            id="issuing"
            intent="issuing"
            schema={() => import("../../forms/console.ts").then((m) => m.issuingSchema)}
            result={replyFor(actionData, "issuing")}
            submit="Switch issuing"
          >
            {(f) => (
              <>
                <SelectField meta={f.coin} label="Coin" options={COIN_CHOICES} />
                <SelectField
                  meta={f.mode}
                  label="Issuing"
                  options={[
                    { value: "auto", label: "auto (automatic)" },
                    { value: "manual", label: "manual (by hand)" },
                  ]}
                />
                <Field meta={f.reason} label="Reason (for the audit log)" type="text" maxLength={500} />
              </>
            )}
          </ConsoleForm>
        </section>
      ) : null}

      {may.deposit ? (
        <section aria-labelledby="deposit-title" className="console-card">
          <h2 id="deposit-title">Report a deposit</h2>
          <p>
            One chain output paying one of our addresses: credited once it has the coin&apos;s confirmations,
            pending until then. To import a CSV file, use the command line:{" "}
            <code>npm run ops -- deposits import &lt;file.csv&gt;</code>.
          </p>
          <ConsoleForm
            id="deposit"
            intent="deposit"
            schema={() => import("../../forms/console.ts").then((m) => m.depositSchema)}
            result={replyFor(actionData, "deposit")}
            submit="Report deposit"
          >
            {(f) => (
              <>
                <SelectField meta={f.coin} label="Coin" options={COIN_CHOICES} />
                <Field
                  meta={f.txid}
                  label="Transaction id"
                  type="text"
                  autoComplete="off"
                  spellCheck={false}
                />
                <Field
                  meta={f.output}
                  label="Output index (optional, default 0)"
                  type="text"
                  inputMode="numeric"
                />
                <Field
                  meta={f.address}
                  label="Address paid (one of ours)"
                  type="text"
                  autoComplete="off"
                  spellCheck={false}
                />
                <Field meta={f.amount} label="Amount" type="text" inputMode="decimal" />
                <Field
                  meta={f.confirmations}
                  label="Confirmations (optional, default 0)"
                  type="text"
                  inputMode="numeric"
                />
                <Field
                  meta={f.usd}
                  label="Value in USD at the time (optional)"
                  type="text"
                  inputMode="decimal"
                />
              </>
            )}
          </ConsoleForm>
        </section>
      ) : null}
    </>
  );
}
