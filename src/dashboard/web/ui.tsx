// Small pieces every page uses: errors as the API words them, amounts, times, statuses, forms.
import type { CombinedError } from "@urql/core";
import type { ComponentChildren } from "preact";

/** An API error (GraphQL or REST) as one readable line; the API's messages are written to be shown. */
export function errorText(error: CombinedError | Error | null | undefined): string | null {
  if (!error) return null;
  const graphQLErrors = (error as CombinedError).graphQLErrors;
  if (graphQLErrors?.length) return graphQLErrors.map((e) => e.message).join(" ");
  return error.message.replace(/^\[Network\] /, "");
}

export function ErrorNote({ error }: { error: CombinedError | Error | null | undefined }) {
  const text = errorText(error);
  return text ? (
    <p class="error" role="alert">
      {text}
    </p>
  ) : null;
}

export function Amount({ value, currency = "USDC" }: { value: string | null | undefined; currency?: string }) {
  return value == null ? <span class="muted">—</span> : <span class="amount">{`${value} ${currency}`}</span>;
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  return <time dateTime={iso}>{new Date(iso).toLocaleString()}</time>;
}

export function Status({ status }: { status: string }) {
  return <span class={`status status-${status.toLowerCase()}`}>{status}</span>;
}

export function Section(props: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card" aria-label={props.title}>
      <header class="card-head">
        <h2>{props.title}</h2>
        {props.actions}
      </header>
      {props.children}
    </section>
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

/** The form's fields as strings. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  return Object.fromEntries([...new FormData(form).entries()].map(([k, v]) => [k, String(v)]));
}
