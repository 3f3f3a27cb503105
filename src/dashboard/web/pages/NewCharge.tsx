// A new charge from the dashboard, for an order taken by phone or in person: the amount (USDC as typed,
// checked in base units, never as a float), the order id, a description and, optionally, a customer
// found by email. Once made, its hosted payment link is shown to copy and send, with its page.
import type { CombinedError } from "@urql/core";
import { useMutation } from "@urql/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { graphql, type ResultOf } from "../graphql.js";
import { Link } from "../router.js";
import { Amount, CopyButton, ErrorNote, errorParam, formValues, humanMessage, Section, typedUnits } from "../ui.js";
import { CustomerPicker } from "./InvoiceForm.js";

const CreateCharge = graphql(`
  mutation CreateDashboardCharge($input: CreateChargeInput!) {
    createCharge(input: $input) {
      id
      orderId
      amount
      currency
      paymentUrl
      expiresAt
    }
  }
`);

type Made = ResultOf<typeof CreateCharge>["createCharge"];
/** The form's fields, as a person reads them. */
const LABELS = { amount: "Amount", orderId: "Order id", description: "Description", customerId: "Customer" } as const;
type Field = keyof typeof LABELS;
/** What is wrong with each field, found here or by the API. */
type Problems = Partial<Record<Field, string>>;

/** What is wrong with the form before it is sent, in the words shown beside each field. */
function check(v: Record<string, string>): Problems {
  const problems: Problems = {};
  const amount = typedUnits((v.amount ?? "").trim());
  if (amount === null || amount === 0n) problems.amount = "Enter an amount in USDC, such as 25.00 (at most 6 decimals).";
  const orderId = (v.orderId ?? "").trim();
  if (orderId === "") problems.orderId = "Enter the order this charge is for, such as 1042.";
  else if (orderId.length > 200) problems.orderId = "The order id is at most 200 characters.";
  if ((v.description ?? "").length > 1000) problems.description = "The description is at most 1000 characters.";
  return problems;
}

/** The API's refusal as words beside the field it names ("Invalid amount: must be…" → "Amount must be…"); null for one about no field. */
function apiProblem(error: CombinedError | undefined): Problems | null {
  const param = errorParam(error ?? null);
  if (!error || !param || !(param in LABELS)) return null;
  const field = param as Field;
  const code = error.graphQLErrors[0]?.extensions?.code;
  if (code === "duplicate_order_id") return { orderId: "An open charge for this order exists already: use another order id, or cancel that charge first." };
  if (code === "resource_missing") return { customerId: "That customer no longer exists: choose another one." };
  // The field's label leads the sentence: the API's "Invalid amount: " prefix goes, other names in it are said in words.
  const detail = humanMessage((error.graphQLErrors[0]?.message ?? "").replace(/^Invalid [\w.[\]]+: /, ""), param, LABELS);
  return { [field]: `${LABELS[field]} ${detail}` };
}

export function NewCharge() {
  const [result, create] = useMutation(CreateCharge);
  const [problems, setProblems] = useState<Problems>({});
  const [made, setMade] = useState<Made | null>(null);
  const form = useRef<HTMLFormElement>(null);
  // The first field with a problem takes the focus, so its message is read out next.
  useEffect(() => {
    const first = (Object.keys(LABELS) as Field[]).find((f) => problems[f]);
    if (first) form.current?.querySelector<HTMLElement>(`[name="${first}"]`)?.focus();
  }, [problems]);
  const fieldError = apiProblem(result.error);
  const shown = problems;
  const described = (f: Field) => (shown[f] ? { "aria-invalid": true, "aria-describedby": `${f}-problem` } : {});
  const note = (f: Field) =>
    shown[f] ? (
      <p id={`${f}-problem`} class="error field-error" data-problem={f}>
        {shown[f]}
      </p>
    ) : null;
  if (made) return <Created charge={made} again={() => setMade(null)} />;
  return (
    <>
      <p>
        <Link href="/charges">← Charges</Link>
      </p>
      <h1>Create charge</h1>
      <Section title="New charge">
        <form
          ref={form}
          noValidate
          onSubmit={async (e) => {
            e.preventDefault();
            const v = formValues(e.currentTarget);
            const found = check(v);
            setProblems(found);
            if (Object.keys(found).length > 0) return;
            const input = {
              amount: (v.amount ?? "").trim(),
              orderId: (v.orderId ?? "").trim(),
              ...(v.description?.trim() && { description: v.description.trim() }),
              ...(v.customerId && { customerId: v.customerId }),
            };
            const res = await create({ input });
            if (res.data) setMade(res.data.createCharge);
            else setProblems(apiProblem(res.error) ?? {});
          }}
        >
          <div class="grid">
            <div class="field">
              <label>
                Amount (USDC)
                <input name="amount" inputMode="decimal" autoComplete="off" placeholder="25.00" required {...described("amount")} />
              </label>
              {note("amount")}
            </div>
            <div class="field">
              <label>
                Order id
                <input name="orderId" maxLength={200} required {...described("orderId")} />
              </label>
              {note("orderId")}
            </div>
          </div>
          <div class="field">
            <label>
              Description (shown to the buyer)
              <input name="description" maxLength={1000} {...described("description")} />
            </label>
            {note("description")}
          </div>
          <CustomerPicker initial={null} invalid={Boolean(shown.customerId)} optional />
          {note("customerId")}
          {!fieldError && <ErrorNote error={result.error} />}
          <div class="actions">
            <button type="submit" disabled={result.fetching}>
              Create charge
            </button>
          </div>
        </form>
      </Section>
    </>
  );
}

/** The charge just made: its payment link to copy and send, and its page. */
function Created({ charge, again }: { charge: Made; again: () => void }) {
  return (
    <>
      <p>
        <Link href="/charges">← Charges</Link>
      </p>
      <h1>Charge created</h1>
      <Section title="Send this link to the buyer">
        <p role="status">
          A charge of <Amount value={charge.amount} currency={charge.currency} /> for order {charge.orderId} is waiting for payment.
        </p>
        <p class="copy-line">
          <code data-payment-url>{charge.paymentUrl}</code> <CopyButton value={charge.paymentUrl} label="Copy payment link" />
        </p>
        <p>
          <Link href={`/charges/${charge.id}`}>Open the charge</Link> ·{" "}
          <button type="button" class="link" onClick={again}>
            Create another charge
          </button>
        </p>
      </Section>
    </>
  );
}
