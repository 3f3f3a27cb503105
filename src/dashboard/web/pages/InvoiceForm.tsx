// The invoice form, for a new draft and for editing one: the customer (found by email, name or
// company), 1 to 100 lines with their amounts and the total (exact, in base units), the due date and
// the memo. A new draft goes to its page once made.
import type { CombinedError } from "@urql/core";
import { useMutation, useQuery } from "@urql/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { graphql } from "../graphql.js";
import { Link, navigate } from "../router.js";
import { Amount, AmountInput, ErrorNote, errorParam, FieldError, Section, typedUnits, usdc } from "../ui.js";

const CustomerSearch = graphql(`
  query CustomerSearch($query: String) {
    customers(first: 25, query: $query) {
      totalCount
      edges {
        node {
          id
          email
          name
        }
      }
    }
  }
`);

const PickedCustomer = graphql(`
  query PickedCustomer($id: ID!) {
    customer(id: $id) {
      id
      email
      name
    }
  }
`);

const CreateInvoice = graphql(`
  mutation CreateInvoice($input: CreateInvoiceInput!) {
    createInvoice(input: $input) {
      id
    }
  }
`);

/** The most lines an invoice has (the API's limit). */
const MAX_LINES = 100;

export interface PickedCustomer {
  id: string;
  email: string;
  name: string;
}

/** What the form gives: a due date as YYYY-MM-DD (the end of that day, UTC), and null for an empty field. */
export interface InvoiceFields {
  customerId: string;
  lineItems: { description: string; quantity: number; unitAmount: string }[];
  dueDate: string | null;
  memo: string | null;
}

interface Line {
  key: number;
  description: string;
  quantity: string;
  unitAmount: string;
}

/** `quantity × unit price` in base units, or null while either is not a valid number yet. */
function lineUnits(line: Line): bigint | null {
  const unit = typedUnits(line.unitAmount.trim());
  return unit !== null && /^\d{1,5}$/.test(line.quantity.trim()) ? unit * BigInt(line.quantity.trim()) : null;
}

export function InvoiceForm(props: {
  customer: PickedCustomer | null;
  lineItems: readonly { description: string; quantity: number; unitAmount: string }[];
  dueDate: string | null;
  memo: string | null;
  submit: string;
  busy: boolean;
  error: CombinedError | undefined;
  onSubmit: (fields: InvoiceFields) => void;
  onCancel?: () => void;
}) {
  const next = useRef(0);
  const line = (l?: { description: string; quantity: number; unitAmount: string }): Line => ({
    key: next.current++,
    description: l?.description ?? "",
    quantity: String(l?.quantity ?? 1),
    unitAmount: l?.unitAmount ?? "",
  });
  const [lines, setLines] = useState<Line[]>(() => (props.lineItems.length ? props.lineItems.map(line) : [line()]));
  const [dueDate, setDueDate] = useState(props.dueDate?.slice(0, 10) ?? "");
  const [memo, setMemo] = useState(props.memo ?? "");
  const [focusKey, setFocusKey] = useState<number | null>(null);
  const form = useRef<HTMLFormElement>(null);
  const invalid = errorParam(props.error);
  useEffect(() => {
    if (focusKey !== null) document.getElementById(`line-${focusKey}-description`)?.focus();
  }, [focusKey]);
  // The field the API refused gets the focus (its message is in the alert above the buttons).
  useEffect(() => {
    if (invalid) form.current?.querySelector<HTMLElement>(`[name="${CSS.escape(invalid)}"]`)?.focus();
  }, [props.error]);
  const change = (key: number, field: "description" | "quantity" | "unitAmount", value: string) =>
    setLines((all) => all.map((l) => (l.key === key ? { ...l, [field]: value } : l)));
  const amounts = lines.map(lineUnits);
  const total = amounts.every((a) => a !== null) ? amounts.reduce((sum: bigint, a) => sum + (a ?? 0n), 0n) : null;
  return (
    <form
      ref={form}
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit({
          customerId: String(new FormData(e.currentTarget).get("customerId") ?? ""),
          lineItems: lines.map((l) => ({ description: l.description.trim(), quantity: Number(l.quantity), unitAmount: l.unitAmount.trim() })),
          dueDate: dueDate || null,
          memo: memo.trim() || null,
        });
      }}
    >
      <Section title="Bill to">
        <CustomerPicker initial={props.customer} invalid={invalid === "customerId"} />
      </Section>
      <Section title="Lines">
        {lines.map((l, i) => (
          <LineFields
            key={l.key}
            line={l}
            index={i}
            amount={amounts[i] ?? null}
            invalid={invalid}
            removable={lines.length > 1}
            onChange={(field, value) => change(l.key, field, value)}
            onRemove={() => setLines((all) => all.filter((x) => x.key !== l.key))}
          />
        ))}
        <p class="actions">
          <button
            type="button"
            disabled={lines.length >= MAX_LINES}
            onClick={() => {
              const added = line();
              setLines((all) => [...all, added]);
              setFocusKey(added.key);
            }}
          >
            Add line
          </button>
          <span>
            Total: <span data-form-total>{total === null ? <span class="muted">— (complete every line)</span> : <Amount value={usdc(total)} />}</span>
            <span class="muted small">
              {" "}
              · {lines.length === MAX_LINES ? `${MAX_LINES} lines, the most an invoice has` : `${lines.length} of at most ${MAX_LINES} lines`}
            </span>
          </span>
        </p>
      </Section>
      <Terms dueDate={dueDate} memo={memo} error={props.error} onDueDate={setDueDate} onMemo={setMemo} />
      <ErrorNote error={props.error} skip={(param) => param === "dueDate"} />
      <p class="actions">
        <button type="submit" disabled={props.busy}>
          {props.submit}
        </button>
        {props.onCancel && (
          <button type="button" class="link" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </p>
    </form>
  );
}

/** The due date (today or later: the API refuses one in the past, and the date picker offers none) and the memo. */
function Terms(props: {
  dueDate: string;
  memo: string;
  error: CombinedError | undefined;
  onDueDate: (value: string) => void;
  onMemo: (value: string) => void;
}) {
  const invalid = errorParam(props.error);
  const today = new Date().toISOString().slice(0, 10);
  const past = props.dueDate !== "" && props.dueDate < today;
  return (
    <Section title="Terms">
      <label>
        Due date (optional; the end of that day, UTC; today or later)
        <input
          name="dueDate"
          type="date"
          min={today}
          value={props.dueDate}
          onInput={(e) => props.onDueDate(e.currentTarget.value)}
          aria-invalid={invalid === "dueDate" || past || undefined}
          aria-describedby={past || invalid === "dueDate" ? "due-date-note" : undefined}
        />
        {past && invalid !== "dueDate" ? (
          <span id="due-date-note" class="error field-error">
            This date has passed: choose today or a later one, or leave it empty.
          </span>
        ) : (
          <FieldError error={props.error} name="dueDate" id="due-date-note" />
        )}
      </label>
      <label>
        Memo (optional; shown on the invoice)
        <textarea
          name="memo"
          rows={3}
          maxLength={5000}
          value={props.memo}
          onInput={(e) => props.onMemo(e.currentTarget.value)}
          aria-invalid={invalid === "memo" || undefined}
        />
      </label>
    </Section>
  );
}

/** One line's fields (named as the API names them, `lineItems.0.description`) and its amount. */
function LineFields(props: {
  line: Line;
  index: number;
  amount: bigint | null;
  invalid: string | null;
  removable: boolean;
  onChange: (field: "description" | "quantity" | "unitAmount", value: string) => void;
  onRemove: () => void;
}) {
  const { line: l, index: i, amount, invalid } = props;
  const name = (field: string) => `lineItems.${i}.${field}`;
  return (
    <fieldset class="line">
      <legend>Line {i + 1}</legend>
      <label class="grow">
        Description
        <input
          id={`line-${l.key}-description`}
          name={name("description")}
          value={l.description}
          onInput={(e) => props.onChange("description", e.currentTarget.value)}
          maxLength={500}
          required
          aria-invalid={invalid === name("description") || undefined}
        />
      </label>
      <label class="qty">
        Quantity
        <input
          name={name("quantity")}
          type="number"
          min={1}
          max={10000}
          step={1}
          inputMode="numeric"
          value={l.quantity}
          onInput={(e) => props.onChange("quantity", e.currentTarget.value)}
          required
          aria-invalid={invalid === name("quantity") || undefined}
        />
      </label>
      <label class="price">
        Unit price (USDC)
        <AmountInput
          name={name("unitAmount")}
          example="12.50"
          value={l.unitAmount}
          onInput={(e) => props.onChange("unitAmount", e.currentTarget.value)}
          required
          aria-invalid={invalid === name("unitAmount") || undefined}
        />
      </label>
      <p class="line-amount">
        <span class="muted small">Amount</span> {amount == null ? <span class="muted">—</span> : <Amount value={usdc(amount)} />}
      </p>
      <button type="button" class="link danger" disabled={!props.removable} onClick={props.onRemove}>
        Remove line {i + 1}
      </button>
    </fieldset>
  );
}

/**
 * The customer: a search (on Enter or Find, not per keystroke: lists spend the session's list
 * budget) whose matches fill the select; the one chosen stays in it whatever is searched next.
 * `optional`: "No customer" may stay chosen.
 */
export function CustomerPicker({ initial, invalid, optional = false }: { initial: PickedCustomer | null; invalid: boolean; optional?: boolean }) {
  const [query, setQuery] = useState<string | undefined>(undefined);
  const [chosen, setChosen] = useState<PickedCustomer | null>(initial);
  const search = useRef<HTMLInputElement>(null);
  const [{ data, error, fetching }] = useQuery({ query: CustomerSearch, variables: { query } });
  const found = data?.customers.edges.map((e) => e.node) ?? [];
  const options = chosen && !found.some((c) => c.id === chosen.id) ? [chosen, ...found] : found;
  const find = () => setQuery(search.current?.value.trim() || undefined);
  return (
    <>
      <div class="filters">
        <label class="grow">
          Find customer
          <input
            ref={search}
            type="search"
            placeholder="Email, name or company"
            onKeyDown={(e) => {
              if (e.key !== "Enter") return;
              e.preventDefault();
              find();
            }}
          />
        </label>
        <button type="button" disabled={fetching} onClick={find}>
          Find
        </button>
      </div>
      <ErrorNote error={error} />
      {/* Named by its label's text alone: a label's own name would include the option chosen. */}
      <label>
        <span id="customer-label">Customer</span>
        <select
          aria-labelledby="customer-label"
          name="customerId"
          required={!optional}
          value={chosen?.id ?? ""}
          onChange={(e) => setChosen(options.find((c) => c.id === e.currentTarget.value) ?? null)}
          aria-invalid={invalid || undefined}
        >
          <option value="">{optional ? "No customer" : choice(data?.customers.totalCount, found.length)}</option>
          {options.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name} · {c.email}
            </option>
          ))}
        </select>
      </label>
      <p class="muted small">
        No customer yet? <Link href="/customers">Customers</Link> lists them; the API creates them.
      </p>
    </>
  );
}

/** The select's empty option: how many customers the search found. */
function choice(total: number | undefined, shown: number): string {
  if (total === undefined) return "Loading…";
  if (total === 0) return "No customer found";
  return shown === total ? `Choose one of ${total}` : `Choose one of the first ${shown} of ${total}`;
}

/** The new invoice page (`?customer=<id>` picks the customer): creates a DRAFT and opens it. */
export function NewInvoice() {
  const customerId = new URLSearchParams(location.search).get("customer");
  const [{ data, error }] = useQuery({ query: PickedCustomer, variables: { id: customerId ?? "" }, pause: !customerId });
  const [created, create] = useMutation(CreateInvoice);
  return (
    <>
      <p>
        <Link href="/invoices">← Invoices</Link>
      </p>
      <h1>New invoice</h1>
      <ErrorNote error={error} />
      {customerId && !data && !error ? (
        <p class="loading">Loading…</p>
      ) : (
        <InvoiceForm
          customer={data?.customer ?? null}
          lineItems={[]}
          dueDate={null}
          memo={null}
          submit="Create draft"
          busy={created.fetching}
          error={created.error}
          onSubmit={async ({ dueDate, memo, ...fields }) => {
            const result = await create({ input: { ...fields, ...(dueDate && { dueDate }), ...(memo && { memo }) } });
            if (result.data) navigate(`/invoices/${result.data.createInvoice.id}`);
          }}
        />
      )}
    </>
  );
}
