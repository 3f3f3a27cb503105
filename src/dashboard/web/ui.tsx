// Small pieces every page uses: errors in the words of the forms (not the API's field names), amounts, times, statuses, forms.
import type { CombinedError } from "@urql/core";
import type { ComponentChildren, InputHTMLAttributes } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { formatUnits, parseUnits, tryParseUnits, USDC_DECIMALS } from "../../lib/money.js";

/** Field labels for a form's parameters, by the API's name (`address.country`): what its messages call them. */
export type Labels = Readonly<Record<string, string>>;

/** The dashboard's names for parameters the API's messages name; anything else is said in words from its name. */
const LABELS: Labels = {
  password: "Your password",
  totpCode: "Two-factor code",
  testWallet: "Test settlement wallet",
  liveWallet: "Live settlement wallet",
  ipAllowlist: "IP allowlist",
  customerId: "Customer",
  dueDate: "Due date",
  orderId: "Order id",
  url: "URL",
  "address.line1": "Street and number",
  "address.line2": "Apartment, suite, building",
  "address.postalCode": "Postal code",
  "address.state": "State or region",
  "address.country": "Country",
};

/** How a person reads a parameter (`lineItems[1].unitAmount` → "Line 2: unit price"): the form's label, the dashboard's, or its name in words. */
export function fieldLabel(param: string, labels?: Labels): string {
  const known = labels?.[param] ?? LABELS[param];
  if (known) return known;
  const words = param
    .replace(/^lineItems\[(\d+)\]\.?/, (_, i: string) => `line ${Number(i) + 1}: `)
    .replace(/unitAmount$/, "unit price")
    .replace(/\[(\d+)\]/g, (_, i: string) => ` ${Number(i) + 1}`)
    .replace(/\./g, " ")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * An API message as a person reads it. The API names its fields for the developers who call it
 * ("Invalid testWallet: …", "… as password"); here the field's label takes the name's place.
 */
export function humanMessage(message: string, param: string | null | undefined, labels?: Labels): string {
  if (!param) return message;
  const sentence = fieldLabel(param, labels);
  // Inside a sentence in lower case, unless it starts with an abbreviation (IP, URL).
  const label = /^.[A-Z]/.test(sentence) ? sentence : sentence.charAt(0).toLowerCase() + sentence.slice(1);
  const escaped = param.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return (
    message
      .replace(new RegExp(`^Invalid ${escaped}: `), `${sentence}: `)
      .replace(new RegExp(`^Missing required param: ${escaped}$`), `${sentence}: this is required.`)
      .replace(new RegExp(`^Received unknown parameter: ${escaped}$`), `${sentence}: not something this form can set.`)
      // "give your current password as password": the field is the one being asked for already.
      .replace(new RegExp(` as \`?${escaped}\`?( too)?([.:]|$)`), "$1$2")
      // Any other mention of a name as code spells it (camelCase, a path): in words.
      .replace(/[a-z]+(?:[A-Z][a-z]*)+|[a-z]+(?:\[\d+\])?(?:\.[a-zA-Z]+(?:\[\d+\])?)+/g, (name) => (name === param ? label : name))
  );
}

/** An API error (GraphQL or REST) as one readable line, the fields it names in the form's words. */
export function errorText(error: CombinedError | Error | null | undefined, labels?: Labels): string | null {
  if (!error) return null;
  const graphQLErrors = (error as CombinedError).graphQLErrors;
  if (graphQLErrors?.length) return graphQLErrors.map((e) => humanMessage(e.message, paramOf(e.extensions?.param), labels)).join(" ");
  return error.message.replace(/^\[Network\] /, "");
}

const paramOf = (param: unknown) => (typeof param === "string" ? param : null);

/** The parameter an API error names (`lineItems[1].unitAmount`) as form fields are named: `lineItems.1.unitAmount`. */
export function errorParam(error: CombinedError | null | undefined): string | null {
  const param = paramOf(error?.graphQLErrors?.[0]?.extensions?.param);
  return param === null ? null : param.replace(/\[(\d+)\]/g, ".$1");
}

/** An error under the form; `labels` name its fields, `skip` leaves out an error a field shows beside itself (FieldError). */
export function ErrorNote({ error, labels, skip }: { error: CombinedError | Error | null | undefined; labels?: Labels; skip?: (param: string) => boolean }) {
  const param = errorParam(error as CombinedError);
  const text = param && skip?.(param) ? null : errorText(error, labels);
  return text ? (
    <p class="error" role="alert">
      {text}
    </p>
  ) : null;
}

/** The API's error about the field `name` (as the form names it: `address.country`), shown under that field; `id` is for its aria-describedby. */
export function FieldError({ error, name, id, labels }: { error: CombinedError | null | undefined; name: string; id: string; labels?: Labels }) {
  if (errorParam(error) !== name) return null;
  return (
    <span id={id} class="error field-error" role="alert">
      {errorText(error, labels)}
    </span>
  );
}

/** A form's outcome under it: the mutation's error (or `error`, found before sending), or `saved` once it succeeded. */
export function Outcome(props: {
  result: { data?: unknown; error?: CombinedError };
  saved: ComponentChildren;
  error?: Error | null;
  labels?: Labels;
  skip?: (param: string) => boolean;
}) {
  const error = props.error ?? props.result.error;
  if (error) return <ErrorNote error={error} labels={props.labels} skip={props.skip} />;
  return props.result.data ? <p role="status">{props.saved}</p> : null;
}

export function Amount({ value, currency = "USDC" }: { value: string | null | undefined; currency?: string }) {
  return value == null ? <span class="muted">—</span> : <span class="amount">{`${value} ${currency}`}</span>;
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  return <time dateTime={iso}>{new Date(iso).toLocaleString()}</time>;
}

/** A date without its time: due dates are the end of a day in UTC. */
export function Day({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  return <time dateTime={iso}>{iso.slice(0, 10)}</time>;
}

export function Status({ status }: { status: string }) {
  return <span class={`status status-${status.toLowerCase()}`}>{status}</span>;
}

/** Marks a charge whose ledger and chain disagree (see the charge's page). */
export function ReviewBadge() {
  return <span class="status status-review">Needs review</span>;
}

export function Section(props: { title: string; children: ComponentChildren; actions?: ComponentChildren; class?: string }) {
  return (
    <section class={props.class ? `card ${props.class}` : "card"} aria-label={props.title}>
      <header class="card-head">
        <h2>{props.title}</h2>
        {props.actions}
      </header>
      {props.children}
    </section>
  );
}

/** Says what the signed-in role cannot do here (.docs/dashboard.md "Roles"): the server refuses it anyway. */
export function RoleNote({ role, cannot }: { role: string; cannot: string }) {
  return (
    <p class="muted small" role="note">
      Your role ({role}) cannot {cannot}. Ask an owner or admin of your team.
    </p>
  );
}

/** A secret shown once, with the warning that goes with it and a Copy button. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  return (
    <div class="secret">
      <p role="status">
        <strong>{label}</strong> (shown once: copy it now)
      </p>
      <code data-secret>{value}</code> <CopyButton value={value} />
    </div>
  );
}

/** A link to a block explorer, or the plain text without one. */
export function Explorer({ base, kind, value }: { base: string | null | undefined; kind: "tx" | "address"; value: string }) {
  const short = value.length > 20 ? `${value.slice(0, 10)}…${value.slice(-8)}` : value;
  return base ? (
    <a href={`${base.replace(/\/+$/, "")}/${kind}/${value}`} rel="noreferrer noopener" target="_blank" title={value}>
      {short}
    </a>
  ) : (
    <code title={value}>{short}</code>
  );
}

/** A USDC decimal string from the API ("2.50", "-1.25") in base units, exactly (lib/money.js). */
export function units(amount: string): bigint {
  return parseUnits(amount, USDC_DECIMALS);
}

/** A USDC amount a person typed ("2.50", at most 6 decimals, not negative) in base units; null if it is not one. */
export function typedUnits(amount: string): bigint | null {
  return tryParseUnits(amount, USDC_DECIMALS, { negative: false, maxWholeDigits: 15 });
}

/** Base units as a USDC decimal string with 2 to 6 decimals, as the API writes amounts: 2500000n → "2.50". */
export function usdc(value: bigint): string {
  return formatUnits(value, USDC_DECIMALS, { minDecimals: 2 });
}

/** Base units in a cent. */
const CENT = 10n ** BigInt(USDC_DECIMALS - 2);

/**
 * An amount as money views (Balance, Payouts, Home) show it: always two decimals, rounded to the
 * nearest cent (half away from zero). Nothing is rounded away silently: when the exact amount has
 * more decimals ("13.344999"), the text is marked "≈", the title says the exact amount, and
 * `data-amount` keeps it for whoever reads the page's markup.
 */
export function cents(amount: string): { text: string; exact: boolean } {
  const value = units(amount);
  const half = value < 0n ? -CENT / 2n : CENT / 2n;
  return { text: formatUnits((value + half) / CENT, 2, { minDecimals: 2 }), exact: value % CENT === 0n };
}

/** An amount in a money view: two decimals (see `cents`), the exact amount in the title when that rounds. */
/** A USDC amount field: a decimal with at most 6 decimals, as the API takes it (which checks it again). */
export function AmountInput({ example = "25.00", ...input }: { example?: string } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <input
      inputMode="decimal"
      pattern="\d+(\.\d{1,6})?"
      title={`A decimal amount with at most 6 decimals, such as ${example}`}
      placeholder={example}
      {...input}
    />
  );
}

export function Money({ value, currency = "USDC" }: { value: string | null | undefined; currency?: string }) {
  if (value == null) return <span class="muted">—</span>;
  const { text, exact } = cents(value);
  return exact ? (
    <span class="amount" data-amount={value}>{`${text} ${currency}`}</span>
  ) : (
    <span class="amount" data-amount={value} title={`Exactly ${value} ${currency}`}>{`≈ ${text} ${currency}`}</span>
  );
}

/** Selects the text of `el`, so that the person can copy it themselves. */
function selectText(el: Element): void {
  const range = document.createRange();
  range.selectNodeContents(el);
  const selection = window.getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
}

/**
 * A button that copies `value`: it reads "Copied" for a moment when it could; when the browser refuses
 * (no clipboard outside https, or denied), it selects the text shown beside it (the element marked
 * `data-copy-source` in the same parent, else its first `<code>`) and says to copy it.
 */
export function CopyButton({ value, label = "Copy" }: { value: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "selected">("idle");
  const button = useRef<HTMLButtonElement>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const copy = async () => {
    clearTimeout(timer.current);
    try {
      await navigator.clipboard.writeText(value);
      setState("copied");
      timer.current = setTimeout(() => setState("idle"), 2000);
    } catch {
      const around = button.current?.parentElement;
      const shown = around?.querySelector("[data-copy-source]") ?? around?.querySelector("code");
      if (shown) selectText(shown);
      setState("selected");
    }
  };
  return (
    <>
      <button ref={button} type="button" class="link" data-copied={state === "copied" ? "" : undefined} onClick={() => void copy()}>
        {state === "copied" ? "Copied" : label}
      </button>
      <span class="muted small" role="status">
        {state === "copied" ? "Copied." : state === "selected" ? "Could not copy: the text is selected, copy it with Ctrl+C (⌘C on a Mac)." : ""}
      </span>
    </>
  );
}

/**
 * A button for something that cannot be undone or that needs the password: the first press asks
 * `question` (naming what it acts on), with any `fields` the answer needs, and only its confirming
 * button acts; focus moves to the first field (or that button) and back.
 */
export function Confirm(props: {
  label: string;
  question: string;
  confirm: string;
  disabled?: boolean;
  /** Inputs the answer needs: their values, by name, go to onConfirm. */
  fields?: ComponentChildren;
  /** The action needs the password (and the two-factor code with `totp`): the answer asks them (see `reauthentication`). */
  reauthenticate?: { totp: boolean };
  /** A plain button rather than a red one: the action is not destructive. */
  plain?: boolean;
  onConfirm: (values: Record<string, string>) => void;
}) {
  const [asking, setAsking] = useState(false);
  const ask = useRef<HTMLButtonElement>(null);
  const first = useRef(true);
  useEffect(() => {
    if (first.current) return void (first.current = false);
    if (!asking) ask.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button ref={ask} type="button" class={props.plain ? undefined : "danger"} disabled={props.disabled} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <ConfirmStep
      question={props.question}
      confirm={props.confirm}
      disabled={props.disabled}
      fields={props.fields}
      reauthenticate={props.reauthenticate}
      plain={props.plain}
      onCancel={() => setAsking(false)}
      onConfirm={(values) => {
        setAsking(false);
        props.onConfirm(values);
      }}
    />
  );
}

/**
 * The question of a confirmation, for a step some other control opened (a form's submit): `question`,
 * the `fields`, the confirming button and "Keep it". Focus starts on the first field or the button;
 * Enter in a field confirms.
 */
export function ConfirmStep(props: {
  question: string;
  confirm: string;
  disabled?: boolean;
  fields?: ComponentChildren;
  reauthenticate?: { totp: boolean };
  plain?: boolean;
  onConfirm: (values: Record<string, string>) => void;
  onCancel: () => void;
}) {
  const group = useRef<HTMLSpanElement>(null);
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => (group.current?.querySelector("input") ?? yes.current)?.focus(), []);
  const answer = () => {
    const inputs = [...(group.current?.querySelectorAll("input") ?? [])];
    props.onConfirm(Object.fromEntries(inputs.map((input) => [input.name, input.value])));
  };
  return (
    <span
      ref={group}
      class="confirm"
      role="group"
      aria-label={props.question}
      onKeyDown={(e) => {
        // Not the form around it, if any: Enter answers this question.
        if (e.key === "Enter" && (e.target as HTMLElement).tagName === "INPUT") {
          e.preventDefault();
          answer();
        }
      }}
    >
      <span>{props.question}</span>
      {props.fields}
      {props.reauthenticate && <ReauthenticationFields totp={props.reauthenticate.totp} />}
      <button ref={yes} type="button" class={props.plain ? undefined : "danger"} disabled={props.disabled} onClick={answer}>
        {props.confirm}
      </button>
      <button type="button" class="link" onClick={props.onCancel}>
        Keep it
      </button>
    </span>
  );
}

/** The password (and, with two-factor sign-in on, a code) that a re-authenticated action asks for. */
function ReauthenticationFields({ totp }: { totp: boolean }) {
  return (
    <>
      <label>
        Your password
        <input name="password" type="password" autoComplete="current-password" required />
      </label>
      {totp && (
        <label>
          Two-factor code (or a recovery code)
          <input name="totpCode" autoComplete="one-time-code" spellcheck={false} required />
        </label>
      )}
    </>
  );
}

/** What a reauthenticating confirmation gave, as the mutations take it: the password, and the code when asked. */
export function reauthentication(values: Record<string, string>): { password?: string; totpCode?: string } {
  return { ...(values.password && { password: values.password }), ...(values.totpCode && { totpCode: values.totpCode }) };
}

/** The form's fields as strings. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  return Object.fromEntries([...new FormData(form).entries()].map(([k, v]) => [k, String(v)]));
}
