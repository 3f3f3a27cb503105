// Small pieces every page uses: errors as the API words them, amounts, times, statuses, forms.
import type { CombinedError } from "@urql/core";
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

/** An API error (GraphQL or REST) as one readable line; the API's messages are written to be shown. */
export function errorText(error: CombinedError | Error | null | undefined): string | null {
  if (!error) return null;
  const graphQLErrors = (error as CombinedError).graphQLErrors;
  if (graphQLErrors?.length) return graphQLErrors.map((e) => e.message).join(" ");
  return error.message.replace(/^\[Network\] /, "");
}

/** The parameter an API error names (`lineItems[1].unitAmount`) as form fields are named: `lineItems.1.unitAmount`. */
export function errorParam(error: CombinedError | null | undefined): string | null {
  const param = error?.graphQLErrors?.[0]?.extensions?.param;
  return typeof param === "string" ? param.replace(/\[(\d+)\]/g, ".$1") : null;
}

export function ErrorNote({ error }: { error: CombinedError | Error | null | undefined }) {
  const text = errorText(error);
  return text ? (
    <p class="error" role="alert">
      {text}
    </p>
  ) : null;
}

/** A form's outcome under it: the mutation's error (or `error`, found before sending), or `saved` once it succeeded. */
export function Outcome(props: { result: { data?: unknown; error?: CombinedError }; saved: ComponentChildren; error?: Error | null }) {
  const error = props.error ?? props.result.error;
  if (error) return <ErrorNote error={error} />;
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

/** A secret shown once, with the warning that goes with it. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  return (
    <div class="secret" role="status">
      <p>
        <strong>{label}</strong> (shown once: copy it now)
      </p>
      <code data-secret>{value}</code>
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

/** A USDC decimal string ("2.50") in base units, exactly. */
export function units(amount: string): bigint {
  const [whole = "0", frac = ""] = amount.split(".");
  return BigInt(whole) * 1_000_000n + BigInt(frac.padEnd(6, "0").slice(0, 6));
}

/** A USDC decimal string ("2.50", at most 6 decimals) in base units; null if it is not one. */
export function parseUnits(amount: string): bigint | null {
  return /^\d{1,15}(\.\d{1,6})?$/.test(amount) ? units(amount) : null;
}

/** Base units as a USDC decimal string with 2 to 6 decimals, as the API writes amounts: 2500000n → "2.50". */
export function formatUnits(value: bigint): string {
  const frac = (value % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${value / 1_000_000n}.${frac}`;
}

/**
 * An amount as money views (Balance, Payouts, Home) show it: always two decimals, rounded to the
 * nearest cent (half away from zero). Nothing is rounded away silently: when the exact amount has
 * more decimals ("13.344999"), the text is marked "≈", the title says the exact amount, and
 * `data-amount` keeps it for whoever reads the page's markup.
 */
export function cents(amount: string): { text: string; exact: boolean } {
  const negative = amount.startsWith("-");
  const value = units(negative ? amount.slice(1) : amount);
  const rounded = (value + 5_000n) / 10_000n;
  const sign = negative && rounded !== 0n ? "-" : "";
  return { text: `${sign}${rounded / 100n}.${(rounded % 100n).toString().padStart(2, "0")}`, exact: value % 10_000n === 0n };
}

/** An amount in a money view: two decimals (see `cents`), the exact amount in the title when that rounds. */
export function Money({ value, currency = "USDC" }: { value: string | null | undefined; currency?: string }) {
  if (value == null) return <span class="muted">—</span>;
  const { text, exact } = cents(value);
  return exact ? (
    <span class="amount" data-amount={value}>{`${text} ${currency}`}</span>
  ) : (
    <span class="amount" data-amount={value} title={`Exactly ${value} ${currency}`}>{`≈ ${text} ${currency}`}</span>
  );
}

/** A button that copies `value`, saying whether it could. */
export function CopyButton({ value, label = "Copy" }: { value: string; label?: string }) {
  const [said, say] = useState("");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      say("Copied.");
    } catch {
      say("Could not copy: select the text and copy it.");
    }
  };
  return (
    <>
      <button type="button" class="link" onClick={() => void copy()}>
        {label}
      </button>
      <span class="muted small" role="status">
        {said}
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
