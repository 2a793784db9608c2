import { parseWithZod } from "@conform-to/zod/v4";
import { Link } from "react-router";
import { COINS } from "../../common/coins.ts";
import { dayOf, STATEMENT_COINS, STATEMENT_CURRENCIES } from "../../common/statement.ts";
import { Field, FieldErrors, FormErrors } from "../components/field.tsx";
import { getFormProps, type FieldMetadata } from "../components/form-state.ts";
import { TransactionList } from "../components/transactions.tsx";
import { useValidatedForm } from "../components/use-validated-form.ts";
import { useWalletView } from "../components/use-wallet-view.ts";
import { statementSchema } from "../forms/statement.ts";
import { HISTORY_PAGE_SIZE, loadWalletView } from "../wallet-view.server.ts";
import type { Route } from "./+types/history";

const PAGE_SIZE = HISTORY_PAGE_SIZE;

export function meta() {
  return [{ title: "History — Coinkeep" }];
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const url = new URL(request.url);
  // The layout's view load read this page's transactions (transactionsOf), one more than a
  // page to tell whether there is an older page.
  const { balances } = await loadWalletView(request, context);
  const all = balances ? balances.transactions : [];
  // The statement form came back from its download (issue 28, record 050): its fields as sent,
  // with the rules' messages at the fields, or the backend's failure.
  const came = url.searchParams.get("statement");
  const statementResult =
    came === "check" || came === "failed"
      ? parseWithZod(url.searchParams, { schema: statementSchema() }).reply(
          came === "failed" ? { formErrors: [STATEMENT_FAILED] } : {},
        )
      : undefined;
  const page = all.slice(0, PAGE_SIZE);
  return {
    transactions: page,
    olderThan: all.length > PAGE_SIZE ? (page.at(-1)?.date ?? null) : null,
    paged: Boolean(url.searchParams.get("before")),
    unavailable: balances === null,
    statementResult,
    today: dayOf(new Date()),
  };
}

const STATEMENT_FAILED = "The statement could not be made just now. Please try again.";

export default function History({ loaderData }: Route.ComponentProps) {
  const view = useWalletView();
  const addresses = Object.fromEntries(
    view.rows.filter((r) => r.walletId).map((r) => [r.walletId!, r.address]),
  );
  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">History</h1>
      <TransactionList
        labels="history"
        transactions={loaderData.transactions}
        walletAddresses={addresses}
        currency={view.currency}
        multiplier={view.multiplier}
      />
      <nav aria-label="Pages" className="pager">
        {loaderData.paged ? <Link to="/history">Newest transactions</Link> : null}
        {loaderData.olderThan ? (
          <Link to={`/history?before=${encodeURIComponent(loaderData.olderThan)}`}>Older transactions</Link>
        ) : null}
      </nav>
      <StatementForm
        lastResult={loaderData.statementResult}
        today={loaderData.today}
        currency={view.currency}
      />
    </section>
  );
}

/** A select with its label and errors wired like Field's. */
function SelectField({
  meta: field,
  label,
  options,
  fallback,
}: {
  meta: FieldMetadata;
  label: string;
  options: readonly { value: string; label: string }[];
  fallback: string;
}) {
  const invalid = Boolean(field.errors?.length);
  return (
    <div className="field">
      <label htmlFor={field.id}>{label}</label>
      <select
        id={field.id}
        name={field.name}
        form={field.formId}
        key={field.key}
        defaultValue={field.initialValue ?? fallback}
        aria-invalid={invalid || undefined}
        aria-describedby={invalid ? field.errorId : undefined}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <FieldErrors id={field.errorId} errors={field.errors} />
    </div>
  );
}

/**
 * The statement download (issue 28, record 050), after the spec's list: a plain GET form whose
 * submit fetches the CSV (a download; the page stays), scripts or not. The browser checks the
 * fields once the form is used; the server always does, and sends a refused one back here.
 */
function StatementForm({
  lastResult,
  today,
  currency,
}: {
  lastResult: Route.ComponentProps["loaderData"]["statementResult"];
  today: string;
  currency: string;
}) {
  const [form, fields] = useValidatedForm(
    "statement-form",
    () => import("../forms/statement.ts").then((m) => m.statementSchema()),
    lastResult,
  );
  const yearStart = `${today.slice(0, 4)}-01-01`;
  return (
    <section id="statement" aria-labelledby="statement-title" className="statement">
      <h2 id="statement-title">Statement</h2>
      <p>
        Download your deposits and sends of a period as a CSV file: dates in UTC, exact amounts, and each
        transaction&apos;s value at the time in the currency you choose.
      </p>
      <form method="get" action="/history/statement.csv" {...getFormProps(form)}>
        <Field
          meta={{ ...fields.from, initialValue: fields.from.initialValue ?? yearStart }}
          label="From (UTC day, YYYY-MM-DD)"
          type="date"
          max={today}
          autoFocusOnError
        />
        <Field
          meta={{ ...fields.to, initialValue: fields.to.initialValue ?? today }}
          label="To (UTC day, YYYY-MM-DD)"
          type="date"
          max={today}
        />
        <SelectField
          meta={fields.coin}
          label="Coin"
          fallback="all"
          options={STATEMENT_COINS.map((c) => ({
            value: c,
            label: c === "all" ? "All coins" : `${COINS[c].name} (${c})`,
          }))}
        />
        <SelectField
          meta={fields.currency}
          label="Currency"
          fallback={(STATEMENT_CURRENCIES as readonly string[]).includes(currency) ? currency : "USD"}
          options={STATEMENT_CURRENCIES.map((c) => ({ value: c, label: c }))}
        />
        <FormErrors id={form.errorId} errors={form.errors} />
        <button type="submit" className="button button-primary">
          Download CSV
        </button>
      </form>
      <p>
        Or, in one click:{" "}
        <a
          href={`/history/statement.csv?${new URLSearchParams({ from: yearStart, to: today, coin: "all", currency: (STATEMENT_CURRENCIES as readonly string[]).includes(currency) ? currency : "USD" })}`}
          download
        >
          Download CSV of {today.slice(0, 4)} so far, all coins
        </a>
      </p>
    </section>
  );
}
