import type { SubmissionResult } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod/v4";
import { useState } from "react";
import { data, Form, Link, redirect, type RouterContextProvider } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { holdText, MAX_SAVED_ADDRESSES, utcMinute } from "../../common/allowlist.ts";
import { coinFor, TICKERS } from "../../common/coins.ts";
import type { AllowlistData, SavedAddressData } from "../../common/contract/calls.ts";
import { REFUSALS } from "../../common/contract/refusals.ts";
import { loadAllowlist } from "../allowlist.server.ts";
import { backend, limitedAnswer, retryAfterOf, type BackendFailure } from "../backend.server.ts";
import { useAutoHide } from "../components/auto-hide.ts";
import { CodeField } from "../components/code-field.tsx";
import { Field, FieldErrors, FormErrors } from "../components/field.tsx";
import { getFormProps, type FieldMetadata } from "../components/form-state.ts";
import { useHydrated } from "../components/hydrated.ts";
import { SubmitButton } from "../components/submit-button.tsx";
import { useValidatedForm } from "../components/use-validated-form.ts";
import { addAddressSchema, removeAddressSchema, switchSchema } from "../forms/allowlist.ts";
import { readForm } from "../forms.server.ts";
import { commitSession, requireUser, type AppSession, type SignedInUser } from "../session.server.ts";
import type { Route } from "./+types/security-addresses";

// Saved addresses and "Only send to saved addresses" (issue 27 item 2, record 048). Every form is
// a plain HTML form (a post, then a redirect), enhanced when scripts run; each change asks for the
// password (and the authentication code when two-factor is on), which the backend checks.

const PATH = "/security/addresses";
/** What a refused form must never send back: the password and the code. */
const hideFields = ["password", "code"];

export function meta() {
  return [{ title: "Saved addresses — Coinkeep" }];
}

// The holder's addresses and the answers to their password: never kept by a cache.
export function headers({ actionHeaders }: Route.HeadersArgs): HeadersInit {
  return { "Cache-Control": "no-store", ...retryAfterOf(actionHeaders) };
}

async function twoFactorOn(context: Readonly<RouterContextProvider>, user: SignedInUser): Promise<boolean> {
  const status = await backend(context).twoFactorStatus({ email: user.email, twelveWords: user.words });
  return status.ok && status.data.enabled;
}

async function listOf(context: Readonly<RouterContextProvider>, user: SignedInUser): Promise<AllowlistData> {
  const list = await loadAllowlist(context, user);
  if (!list) throw data("Your saved addresses could not be loaded. Please try again.", { status: 502 });
  return list;
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const { user } = await requireUser(request, context);
  const [list, twoFactor] = await Promise.all([listOf(context, user), twoFactorOn(context, user)]);
  // "Remove" opens its confirmation under the address: `?remove=<id>` (a link, scripts or not).
  const removeId = new URL(request.url).searchParams.get("remove");
  return {
    list,
    twoFactor,
    removing: list.addresses.some((saved) => saved.id === removeId) ? removeId : null,
  };
}

type FormName = "add" | "remove" | "switch";

/** The form a reply belongs to, with the submission's reply (errors, values as typed). */
function replyTo(form: FormName, result: SubmissionResult<string[]>, status = 400, extra?: HeadersInit) {
  return data({ form, result }, { status, headers: extra });
}

/** A field of a form, by the name the backend's refusal gave it (record 046: camelCase). */
const FIELD_OF: Readonly<Record<string, string>> = {
  address: "address",
  destinationTag: "tag",
  label: "label",
  coin: "coin",
  password: "password",
  twoFactorCode: "code",
};

/**
 * The backend's refusal as the form shows it: the password's and the code's at their fields, a
 * refused address, tag or label at theirs, a limit or anything else above the button.
 */
function refused(
  form: FormName,
  submission: { reply: (options: object) => SubmissionResult<string[]> },
  answer: BackendFailure,
) {
  const limited = limitedAnswer(answer);
  if (limited) {
    return replyTo(
      form,
      submission.reply({ formErrors: [limited.message], hideFields }),
      limited.status,
      limited.headers,
    );
  }
  if (answer.kind === "network") {
    return replyTo(form, submission.reply({ formErrors: ["Something went wrong!"], hideFields }), 502);
  }
  const fieldErrors: Record<string, string[]> = {};
  if (answer.code === "wrong_password") fieldErrors.password = ["Incorrect password"];
  else if (answer.code.startsWith("two_factor_")) fieldErrors.code = [answer.message];
  else {
    for (const issue of answer.issues ?? []) {
      const field = FIELD_OF[issue.path];
      if (field) (fieldErrors[field] ??= []).push(issue.message);
    }
  }
  const formErrors = Object.keys(fieldErrors).length ? [] : [answer.message];
  return replyTo(form, submission.reply({ formErrors, fieldErrors, hideFields }));
}

async function done(session: AppSession, context: Readonly<RouterContextProvider>, notice: string) {
  session.flash("notice", notice);
  return redirect(PATH, { headers: { "Set-Cookie": await commitSession(session, context) } });
}

export async function action({ request, context }: Route.ActionArgs) {
  const formData = await readForm(request, context);
  const { session, user } = await requireUser(request, context);
  const who = { email: user.email, twelveWords: user.words };
  const intent = formData.get("intent");

  if (intent === "add") {
    const list = await listOf(context, user);
    // The code is the backend's to ask for: whether two-factor is on is its answer, not the form's.
    const schema = addAddressSchema({ usdtNetwork: list.usdt_network, twoFactor: false });
    const submission = parseWithZod(formData, { schema });
    if (submission.status !== "success") return replyTo("add", submission.reply({ hideFields }));
    const { coin, label, address, tag, destination, password, code } = submission.value;
    // Known from the list already: said before the password and the code are spent on it.
    const taken = list.addresses.some(
      (saved) =>
        saved.coin === coin &&
        saved.address === destination?.address &&
        saved.destination_tag === destination.tag,
    );
    if (taken) {
      const fieldErrors = { address: [REFUSALS.saved_address_exists.message] };
      return replyTo("add", submission.reply({ fieldErrors, hideFields }));
    }
    if (list.addresses.length >= MAX_SAVED_ADDRESSES) {
      const formErrors = [REFUSALS.saved_addresses_full.message];
      return replyTo("add", submission.reply({ formErrors, hideFields }));
    }
    const answer = await backend(context).allowlistAdd({
      ...who,
      coin,
      label,
      address,
      ...(tag === null ? {} : { destinationTag: tag }),
      password,
      ...(code ? { twoFactorCode: code } : {}),
    });
    if (!answer.ok) return refused("add", submission, answer);
    const saved = answer.data.address;
    return done(
      session,
      context,
      `${answer.data.message} It can be used from ${utcMinute(saved.usable_from)}.`,
    );
  }

  if (intent === "remove") {
    const submission = parseWithZod(formData, { schema: removeAddressSchema(false) });
    if (submission.status !== "success") return replyTo("remove", submission.reply({ hideFields }));
    const { id, password, code } = submission.value;
    const answer = await backend(context).allowlistRemove({
      ...who,
      id,
      password,
      ...(code ? { twoFactorCode: code } : {}),
    });
    if (!answer.ok) return refused("remove", submission, answer);
    return done(session, context, answer.data.message);
  }

  if (intent === "on" || intent === "off") {
    const submission = parseWithZod(formData, { schema: switchSchema(false) });
    if (submission.status !== "success") return replyTo("switch", submission.reply({ hideFields }));
    const { password, code } = submission.value;
    const answer = await backend(context).allowlistSet({
      ...who,
      on: submission.value.intent === "on",
      password,
      ...(code ? { twoFactorCode: code } : {}),
    });
    if (!answer.ok) return refused("switch", submission, answer);
    return done(session, context, answer.data.message);
  }
  throw data("The form could not be read.", { status: 400 });
}

// ---------------------------------------------------------------------------
// The page

/** The password, and the code when two-factor is on (or the backend asked for one). */
function ProofFields({
  fields,
  twoFactor,
}: {
  fields: Record<"password" | "code", FieldMetadata>;
  twoFactor: boolean;
}) {
  return (
    <>
      <Field meta={fields.password} label="Password" type="password" autoComplete="current-password" />
      {twoFactor || fields.code.errors?.length ? <CodeField meta={fields.code} /> : null}
    </>
  );
}

function SwitchForm({
  list,
  twoFactor,
  result,
}: {
  list: AllowlistData;
  twoFactor: boolean;
  result: SubmissionResult<string[]> | undefined;
}) {
  const [form, fields] = useValidatedForm(
    "allowlist-switch",
    () => import("../forms/allowlist.ts").then((m) => m.switchSchema(twoFactor)),
    result,
  );
  const pendingOff = list.on && list.off_at !== null;
  const turnOn = !list.on || pendingOff;
  return (
    <section className="card security-card" aria-labelledby="allowlist-switch-title">
      <h2 id="allowlist-switch-title">Only send to saved addresses</h2>
      <p>
        <strong>{list.on ? "On" : "Off"}</strong>
        {": "}
        {list.on
          ? "sends can go only to your saved addresses whose waiting time is over."
          : "sends can go to any address."}
      </p>
      {pendingOff && list.off_at ? (
        <p>
          Turning off at <strong>{utcMinute(list.off_at)}</strong>. Until then, only your saved addresses can
          receive sends. Keep it on to cancel.
        </p>
      ) : null}
      <p className="muted small">
        Turning it on takes effect at once. Turning it off takes effect {holdText(list.hold_hours)} later.
      </p>
      <Form method="post" action={PATH} {...getFormProps(form)}>
        <AuthenticityTokenInput />
        <ProofFields fields={fields} twoFactor={twoFactor} />
        <FormErrors id={form.errorId} errors={form.errors} />
        <div className="actions">
          <SubmitButton name="intent" value={turnOn ? "on" : "off"} pendingLabel="Saving…">
            {pendingOff ? "Keep it on" : turnOn ? "Turn on" : "Turn off"}
          </SubmitButton>
        </div>
      </Form>
    </section>
  );
}

function RemoveForm({
  saved,
  twoFactor,
  result,
}: {
  saved: SavedAddressData;
  twoFactor: boolean;
  result: SubmissionResult<string[]> | undefined;
}) {
  const [form, fields] = useValidatedForm(
    "allowlist-remove",
    () => import("../forms/allowlist.ts").then((m) => m.removeAddressSchema(twoFactor)),
    result,
  );
  const errors = Boolean(result);
  return (
    <Form
      method="post"
      action={`${PATH}?remove=${encodeURIComponent(saved.id)}`}
      {...getFormProps(form)}
      aria-labelledby="allowlist-remove-title"
      className="saved-remove"
    >
      <h4 id="allowlist-remove-title">Remove {saved.label}?</h4>
      <p>It is removed at once. Adding it again means waiting again.</p>
      <AuthenticityTokenInput />
      <input type="hidden" name="id" value={saved.id} />
      <Field
        meta={fields.password}
        label="Password"
        type="password"
        autoComplete="current-password"
        autoFocus={!errors}
      />
      {twoFactor || fields.code.errors?.length ? <CodeField meta={fields.code} /> : null}
      <FormErrors id={form.errorId} errors={form.errors} />
      <div className="actions">
        <SubmitButton name="intent" value="remove" pendingLabel="Removing…">
          Remove
        </SubmitButton>
        <Link to={PATH} className="button button-secondary">
          Cancel
        </Link>
      </div>
    </Form>
  );
}

/** "Ethereum (ETH)"; "XRP" (its name is its ticker). */
function coinName(ticker: string): string {
  const coin = coinFor(ticker);
  if (!coin) return ticker;
  return coin.name === coin.ticker ? coin.ticker : `${coin.name} (${coin.ticker})`;
}

function SavedList({
  list,
  removing,
  twoFactor,
  removeResult,
}: {
  list: AllowlistData;
  removing: string | null;
  twoFactor: boolean;
  removeResult: SubmissionResult<string[]> | undefined;
}) {
  return (
    <section className="card security-card" aria-labelledby="saved-addresses-title">
      <h2 id="saved-addresses-title">Your saved addresses</h2>
      {list.addresses.length === 0 ? (
        <p className="muted">No saved addresses yet.</p>
      ) : (
        <ul className="saved-addresses">
          {list.addresses.map((saved) => (
            <li key={saved.id}>
              <h3>{saved.label}</h3>
              <p>
                <span className="muted">Coin:</span> {coinName(saved.coin)}
              </p>
              <p>
                <span className="muted">Address:</span>{" "}
                <span className="mono address-text">{saved.address}</span>
              </p>
              {saved.destination_tag === null ? null : (
                <p>
                  <span className="muted">Destination tag:</span>{" "}
                  <span className="mono">{saved.destination_tag}</span>
                </p>
              )}
              <p>{saved.usable ? "Usable" : `Usable from ${utcMinute(saved.usable_from)}`}</p>
              {removing === saved.id ? (
                <RemoveForm saved={saved} twoFactor={twoFactor} result={removeResult} />
              ) : (
                <p>
                  <Link to={`${PATH}?remove=${encodeURIComponent(saved.id)}`}>
                    Remove<span className="visually-hidden"> {saved.label}</span>
                  </Link>
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The coin select, wired as Field wires an input. */
function CoinSelect({ field, onChange }: { field: FieldMetadata; onChange: (coin: string) => void }) {
  const errors = useAutoHide(field.errors);
  const invalid = Boolean(errors?.length);
  return (
    <div className="field">
      <label htmlFor={field.id}>Coin</label>
      <select
        id={field.id}
        name={field.name}
        form={field.formId}
        key={field.key}
        defaultValue={field.initialValue ?? ""}
        onChange={(event) => onChange(event.target.value)}
        aria-invalid={invalid || undefined}
        aria-describedby={invalid ? field.errorId : undefined}
        autoFocus={(field.errors?.length && field.valid === false) || undefined}
      >
        <option value="">Choose a coin</option>
        {TICKERS.map((ticker) => (
          <option key={ticker} value={ticker}>
            {coinName(ticker)}
          </option>
        ))}
      </select>
      <FieldErrors id={field.errorId} errors={errors} />
    </div>
  );
}

/** XRP's destination tag, with its hint (without scripts it is always there: for XRP only). */
function TagInput({ field, scripted }: { field: FieldMetadata; scripted: boolean }) {
  const errors = useAutoHide(field.errors);
  const invalid = Boolean(errors?.length);
  const hintId = `${field.id}-hint`;
  return (
    <div className="field">
      <label htmlFor={field.id}>
        {scripted ? "Destination tag (optional)" : "Destination tag (XRP only, optional)"}
      </label>
      <input
        id={field.id}
        name={field.name}
        form={field.formId}
        key={field.key}
        className="mono"
        inputMode="numeric"
        autoComplete="off"
        spellCheck={false}
        defaultValue={field.initialValue ?? undefined}
        aria-invalid={invalid || undefined}
        aria-describedby={invalid ? `${hintId} ${field.errorId}` : hintId}
        autoFocus={(field.errors?.length && field.valid === false) || undefined}
      />
      <p id={hintId} className="muted small field-hint">
        {scripted
          ? "The destination tag your exchange gave you, if any: sends to this address need the same tag."
          : "For XRP only: the destination tag your exchange gave you, if any. Leave it empty for other coins."}
      </p>
      <FieldErrors id={field.errorId} errors={errors} />
    </div>
  );
}

function AddForm({
  list,
  twoFactor,
  result,
}: {
  list: AllowlistData;
  twoFactor: boolean;
  result: SubmissionResult<string[]> | undefined;
}) {
  const usdtNetwork = list.usdt_network;
  const [form, fields] = useValidatedForm(
    "allowlist-add",
    () => import("../forms/allowlist.ts").then((m) => m.addAddressSchema({ usdtNetwork, twoFactor })),
    result,
  );
  const hydrated = useHydrated();
  const [coin, setCoin] = useState(fields.coin.initialValue ?? "");
  // Without scripts the tag field is always there, saying it is for XRP only.
  const showTag = !hydrated || coin === "XRP" || Boolean(fields.tag.errors?.length);
  return (
    <section className="card security-card" aria-labelledby="allowlist-add-title">
      <h2 id="allowlist-add-title">Add an address</h2>
      <p className="muted small">
        A new address can receive sends {holdText(list.hold_hours)} after you add it.
      </p>
      <Form method="post" action={PATH} {...getFormProps(form)}>
        <AuthenticityTokenInput />
        <CoinSelect field={fields.coin} onChange={setCoin} />
        <Field meta={fields.label} label="Label" autoComplete="off" maxLength={200} />
        <Field
          meta={fields.address}
          label="Address"
          className="mono"
          autoComplete="off"
          autoCapitalize="none"
          autoCorrect="off"
          spellCheck={false}
        />
        {showTag ? <TagInput field={fields.tag} scripted={hydrated} /> : null}
        <ProofFields fields={fields} twoFactor={twoFactor} />
        <FormErrors id={form.errorId} errors={form.errors} />
        <div className="actions">
          <SubmitButton name="intent" value="add" pendingLabel="Saving…">
            Save address
          </SubmitButton>
        </div>
      </Form>
    </section>
  );
}

export default function SecurityAddresses({ loaderData, actionData }: Route.ComponentProps) {
  const { list, twoFactor, removing } = loaderData;
  const result = (form: FormName) => (actionData?.form === form ? actionData.result : undefined);
  // A change shows the forms afresh (the page's data changed): nothing typed stays behind.
  const version = `${list.on}:${list.off_at}:${list.addresses.map((saved) => saved.id).join(",")}`;
  return (
    <div className="allowlist-page">
      <section className="card security-card" aria-labelledby="addresses-title">
        <h1 id="addresses-title">Saved addresses</h1>
        <p>
          Save the addresses you send to, then turn on &quot;Only send to saved addresses&quot;: someone who
          gets into your account cannot send your coins anywhere else. A new address can be used{" "}
          {holdText(list.hold_hours)} after you add it, and turning the setting off also waits{" "}
          {holdText(list.hold_hours)}.
        </p>
        <p>
          <Link to="/security">Back to Security</Link>
        </p>
      </section>
      <SwitchForm key={`switch:${version}`} list={list} twoFactor={twoFactor} result={result("switch")} />
      <SavedList
        key={`list:${version}`}
        list={list}
        removing={removing}
        twoFactor={twoFactor}
        removeResult={result("remove")}
      />
      <AddForm key={`add:${version}`} list={list} twoFactor={twoFactor} result={result("add")} />
    </div>
  );
}
