// Sends waiting for a decision (issue 26), oldest first: who asks, the coin,
// the amount and its value in USD then and now, the address (and XRP tag), the
// account's age and its last sends and deposits, and the approvals so far.
// A send at or above its coin's four-eyes threshold needs two approvers; the
// rule is the domain's (approve), the page only shows where a send stands.
import { parseWithZod } from "@conform-to/zod/v4";
import { data, Form, Link } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { multiply, parseDecimal, toFixed } from "../../../common/decimal.ts";
import { prices } from "../../backend.server.ts";
import { CoinFilter, utc, When } from "../../components/console-form.tsx";
import { listFor, pageOf, redirectWithNotice, requireStaff, runAs } from "../../console.server.ts";
import { FormErrors } from "../../components/field.tsx";
import { SubmitButton } from "../../components/submit-button.tsx";
import { decideSchema } from "../../forms/console.ts";
import { readForm } from "../../forms.server.ts";
import type { Route } from "./+types/sends";

export function meta() {
  return [{ title: "Sends — Coinkeep staff" }];
}

interface Activity {
  coin: string;
  amount: string;
  /** Sends only: pending, Confirmed or Declined. */
  status?: string;
  at: string;
}

export interface WaitingSend {
  sendId: string;
  userId: string;
  email: string;
  coin: string;
  amount: string;
  amountUsd: string | null;
  address: string;
  destinationTag: number | null;
  requestedAt: string;
  ageSeconds: number;
  threshold: { usd: string; source: string };
  needed: 1 | 2;
  approvals: { approver: string; at: string }[];
  accountCreatedAt: string | null;
  recentSends: Activity[];
  recentDeposits: Activity[];
}

const PAGE = 20;

export async function loader({ request, context }: Route.LoaderArgs) {
  const staff = await requireStaff(request, context, "sends");
  const url = new URL(request.url);
  const coin = url.searchParams.get("coin") ?? "";
  const [all, quotes] = await Promise.all([
    listFor<WaitingSend[]>(context, staff, "sends"),
    prices(context)
      .currentPrices()
      .catch(() => null),
  ]);
  const priceOf = new Map<string, string>(
    quotes?.ok ? quotes.data.cryptoPrices.map((p) => [p.ticker, String(p.last_price)]) : [],
  );
  const shown = pageOf(coin ? all.filter((s) => s.coin === coin) : all, url.searchParams.get("page"), PAGE);
  const sends = shown.items.map((s) => {
    const price = parseDecimal(priceOf.get(s.coin));
    const amount = parseDecimal(s.amount);
    const usdNow = price && amount ? toFixed(multiply(price, amount), 2) : null;
    return { ...s, usdNow, mine: s.approvals.some((a) => a.approver === staff.email) };
  });
  const coins = [...new Set(all.map((s) => s.coin))].toSorted();
  return {
    sends,
    coin,
    coins,
    page: shown.page,
    pages: shown.pages,
    total: shown.total,
  };
}

export async function action({ request, context }: Route.ActionArgs) {
  const staff = await requireStaff(request, context, "approve");
  const formData = await readForm(request, context);
  const submission = parseWithZod(formData, { schema: decideSchema });
  const sendId = String(formData.get("sendId") ?? "");
  if (submission.status !== "success")
    return data({ for: sendId, result: submission.reply() }, { status: 400 });
  const decision = submission.value;
  const outcome =
    decision.intent === "approve"
      ? await runAs(context, staff, "approve", { args: [decision.sendId] })
      : await runAs(context, staff, "decline", {
          args: [decision.sendId],
          options: { reason: decision.reason },
        });
  if (!outcome.ok) {
    return data(
      { for: sendId, result: submission.reply({ formErrors: [outcome.message] }) },
      { status: 409 },
    );
  }
  const done = outcome.data as { status: string; approvals: unknown[]; needed: number };
  const notice =
    decision.intent === "decline"
      ? `Declined the send ${decision.sendId}: its amount is back in the holder's wallet.`
      : done.status === "Confirmed"
        ? `Approved the send ${decision.sendId}: Confirmed.`
        : `Approved the send ${decision.sendId}: ${done.approvals.length} of ${done.needed} approvals; it waits for a second approver.`;
  const back = new URL(request.url);
  return redirectWithNotice(context, `/ops/sends${back.search}`, notice);
}

function age(seconds: number): string {
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

export default function Sends({ loaderData, actionData }: Route.ComponentProps) {
  const { sends, coin, coins, page, pages, total } = loaderData;
  const query = (p: number) => `?${new URLSearchParams({ ...(coin ? { coin } : {}), page: String(p) })}`;
  return (
    <>
      <h1>Sends waiting for a decision</h1>
      <CoinFilter id="sends-coin" label="Filter sends" coins={coins} value={coin} />
      {actionData && !sends.some((s) => s.sendId === actionData.for) ? (
        <div className="console-refusal" role="alert">
          {(actionData.result.error?.[""] ?? []).map((e) => (
            <p key={e}>{e}</p>
          ))}
        </div>
      ) : null}
      <p>
        <span data-count="sends">{total}</span> {total === 1 ? "send" : "sends"} waiting, oldest first. Page{" "}
        {page} of {pages}.
      </p>
      {sends.map((s) => {
        const { approvals, needed } = s;
        const errors = actionData?.for === s.sendId ? actionData.result : undefined;
        return (
          <article
            key={s.sendId}
            className="console-card"
            aria-labelledby={`send-${s.sendId}`}
            data-send={s.sendId}
          >
            <h2 id={`send-${s.sendId}`}>
              {s.amount} {s.coin} for {s.email}
            </h2>
            <dl>
              <dt>Requested</dt>
              <dd>
                <When iso={s.requestedAt} /> ({age(s.ageSeconds)} ago)
              </dd>
              <dt>Value</dt>
              <dd>
                {s.amountUsd === null ? "unknown" : `$${s.amountUsd}`} when requested;{" "}
                {s.usdNow === null ? "no price now" : `$${s.usdNow} now`} (two approvers from $
                {s.threshold.usd})
              </dd>
              <dt>To address</dt>
              <dd className="mono">{s.address}</dd>
              {s.destinationTag !== null ? (
                <>
                  <dt>Destination tag</dt>
                  <dd>{s.destinationTag}</dd>
                </>
              ) : null}
              <dt>Account</dt>
              <dd>
                <Link to={`/ops/users/${s.userId}`}>{s.email}</Link>
                {s.accountCreatedAt ? (
                  <>
                    , opened <When iso={s.accountCreatedAt} />
                  </>
                ) : null}
              </dd>
              <dt>Approvals</dt>
              <dd data-approvals={approvals.length}>
                {approvals.length} of {needed}
                {approvals.length > 0 ? (
                  <> ({approvals.map((a) => `${a.approver}, ${utc(a.at)}`).join("; ")})</>
                ) : null}
                {needed === 2 && approvals.length === 1 ? <> — waiting for a second approver.</> : null}
              </dd>
            </dl>
            {s.recentSends.length + s.recentDeposits.length > 0 ? (
              <>
                <h3>Last sends and deposits of this account</h3>
                <ul>
                  {[
                    ...(s.recentSends ?? []).map((a) => ({ ...a, kind: "Send" })),
                    ...(s.recentDeposits ?? []).map((a) => ({ ...a, kind: "Deposit" })),
                  ].map((a, i) => (
                    <li key={`${a.kind}-${a.at}-${i}`}>
                      {a.kind}: {a.amount} {a.coin}
                      {a.status ? `, ${a.status}` : ""}, <When iso={a.at} />
                    </li>
                  ))}
                </ul>
              </>
            ) : null}
            <Form
              method="post"
              className="inline"
              noValidate
              aria-label={`Approve the send of ${s.amount} ${s.coin}`}
            >
              <AuthenticityTokenInput />
              <input type="hidden" name="sendId" value={s.sendId} />
              <SubmitButton name="intent" value="approve">
                {s.mine ? "Approved by you" : "Approve"}
              </SubmitButton>
            </Form>{" "}
            <Form
              method="post"
              className="inline"
              noValidate
              aria-label={`Decline the send of ${s.amount} ${s.coin}`}
            >
              <AuthenticityTokenInput />
              <input type="hidden" name="sendId" value={s.sendId} />
              <div className="field">
                <label htmlFor={`reason-${s.sendId}`}>Reason to decline</label>
                <input
                  id={`reason-${s.sendId}`}
                  name="reason"
                  type="text"
                  maxLength={1000}
                  aria-invalid={errors?.error?.reason ? true : undefined}
                  aria-describedby={errors?.error?.reason ? `reason-${s.sendId}-error` : undefined}
                />
                <div id={`reason-${s.sendId}-error`} className="field-errors" role="alert">
                  {errors?.error?.reason?.map((e) => (
                    <p key={e}>{e}</p>
                  ))}
                </div>
              </div>
              <SubmitButton name="intent" value="decline" className="button button-secondary">
                Decline
              </SubmitButton>
            </Form>
            <FormErrors id={`send-${s.sendId}-errors`} errors={errors?.error?.[""] ?? undefined} />
          </article>
        );
      })}
      {sends.length === 0 ? <p>No sends are waiting for a decision.</p> : null}
      {pages > 1 ? (
        <nav aria-label="Pages">
          {page > 1 ? <Link to={query(page - 1)}>Earlier</Link> : null}{" "}
          {page < pages ? <Link to={query(page + 1)}>Later</Link> : null}
        </nav>
      ) : null}
    </>
  );
}
