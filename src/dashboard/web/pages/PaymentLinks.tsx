// Payment links: a no-code checkout whose every buyer gets a charge of their own. The list (with how
// many charges each made), a form for a new one (optionally asking the email, letting buyers choose a
// quantity), deactivate and reactivate; and a link's own page with its charges. The list's filter and how many rows it shows live in the URL.
import type { CombinedError } from "@urql/core";
import { useMutation, useQuery } from "@urql/preact";
import { ActiveToggle } from "../active-toggle.js";
import { graphql, type ResultOf } from "../graphql.js";
import { ChargeItems, FilterForm, ListPage, useListQuery } from "../list.js";
import { Link } from "../router.js";
import { Amount, AmountInput, CopyButton, ErrorNote, errorText, formValues, Section, Status, Time } from "../ui.js";

const PaymentLinksQuery = graphql(`
  query PaymentLinks($first: Int!, $active: Boolean) {
    paymentLinks(first: $first, active: $active) {
      totalCount
      pageInfo {
        hasNextPage
      }
      edges {
        node {
          id
          name
          amount
          description
          url
          active
          createdAt
          charges(first: 0) {
            totalCount
          }
        }
      }
    }
  }
`);

const PaymentLinkQuery = graphql(`
  query PaymentLink($id: ID!) {
    paymentLink(id: $id) {
      id
      name
      amount
      description
      url
      active
      successUrl
      cancelUrl
      collectEmail
      quantityMax
      createdAt
      charges(first: 50) {
        totalCount
        edges {
          node {
            id
            orderId
            amount
            status
            createdAt
          }
        }
      }
    }
  }
`);

const CreatePaymentLink = graphql(`
  mutation CreatePaymentLink($input: CreatePaymentLinkInput!) {
    createPaymentLink(input: $input) {
      id
      url
    }
  }
`);

const SetPaymentLinkActive = graphql(`
  mutation SetPaymentLinkActive($id: ID!, $active: Boolean!) {
    updatePaymentLink(id: $id, input: { active: $active }) {
      id
      active
    }
  }
`);

/** The form for a new payment link; `onCreated` reads the list again. */
function NewPaymentLink({ onCreated }: { onCreated: () => void }) {
  const [created, create] = useMutation(CreatePaymentLink);
  return (
    <Section title="New payment link">
      <p class="muted small">Share its URL: every buyer who pays there gets a charge of their own, for the amount set here (fixed for the link's life).</p>
      <form
        class="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const v = formValues(form);
          // Empty optional fields are left out (undefined is not sent).
          const optional = (value: string | undefined) => value?.trim() || undefined;
          const result = await create({
            input: {
              name: v.name ?? "",
              amount: (v.amount ?? "").trim(),
              description: optional(v.description),
              successUrl: optional(v.successUrl),
              cancelUrl: optional(v.cancelUrl),
              collectEmail: (form.elements.namedItem("collectEmail") as HTMLInputElement).checked,
              quantityMax: (form.elements.namedItem("chooseQuantity") as HTMLInputElement).checked ? Number(v.quantityMax) : null,
            },
          });
          if (!result.error) {
            form.reset();
            onCreated();
          }
        }}
      >
        <label class="grow">
          Name
          <input name="name" maxLength={200} required placeholder="Poster, A2" />
        </label>
        <label>
          Amount (USDC)
          <AmountInput name="amount" required />
        </label>
        <label class="grow">
          Description (optional)
          <input name="description" maxLength={1000} />
        </label>
        <label class="grow">
          Success URL (optional: where buyers go once paid)
          <input name="successUrl" type="url" placeholder="https://shop.example/thanks" />
        </label>
        <label class="grow">
          Cancel URL (optional)
          <input name="cancelUrl" type="url" placeholder="https://shop.example" />
        </label>
        <label>
          <input type="checkbox" name="collectEmail" /> Ask the buyer's email (the receipt goes there)
        </label>
        <label>
          <input type="checkbox" name="chooseQuantity" /> Let buyers choose a quantity
        </label>
        <label>
          Most one buyer may choose
          <input name="quantityMax" type="number" min={2} max={1000} step={1} defaultValue="10" />
        </label>
        <button type="submit" disabled={created.fetching}>
          Create payment link
        </button>
      </form>
      <ErrorNote error={readable(created.error)} />
    </Section>
  );
}

type LinkRow = ResultOf<typeof PaymentLinksQuery>["paymentLinks"]["edges"][number]["node"];

/** A payment link in the list: its name, amount, state, URL to copy, charges, and its toggle. */
function LinkItem({ link: l, onChange }: { link: LinkRow; onChange: () => void }) {
  return (
    <li class="link-row" data-link={l.id}>
      <span class="link-name">
        <Link href={`/payment-links/${l.id}`}>{l.name}</Link>
        {l.description && <span class="muted small"> {l.description}</span>}
      </span>
      <Amount value={l.amount} />
      <Status status={l.active ? "ACTIVE" : "INACTIVE"} />
      <span class="link-url">
        <code data-link-url>{l.url}</code> <CopyButton value={l.url} />
      </span>
      <span class="muted small">
        <span data-charges>
          {l.charges.totalCount} {l.charges.totalCount === 1 ? "charge" : "charges"}
        </span>{" "}
        · created <Time iso={l.createdAt} />
      </span>
      <div>
        <ActiveToggle
          mutation={SetPaymentLinkActive}
          off="Deactivate"
          question={`Deactivate ${l.name}? Its page stops taking payments (buyers are told it is no longer available) until you reactivate it; charges already made are not affected.`}
          id={l.id}
          active={l.active}
          onChange={onChange}
        />
      </div>
    </li>
  );
}

export function PaymentLinks() {
  const list = useListQuery();
  // `active`: "true" or "false" (absent: every link).
  const active = list.params.get("active");
  const filters = { first: list.first, ...((active === "true" || active === "false") && { active: active === "true" }) };
  const [result, refetch] = useQuery({ query: PaymentLinksQuery, variables: filters });
  const reload = () => refetch({ requestPolicy: "network-only" });
  return (
    <ListPage
      title="Payment links"
      intro={<NewPaymentLink onCreated={reload} />}
      filters={
        <FilterForm list={list} toQuery={(v) => ({ active: v.active })}>
          <label>
            Show
            <select name="active">
              <option value="">All links</option>
              <option value="true" selected={active === "true"}>
                Active only
              </option>
              <option value="false" selected={active === "false"}>
                Inactive only
              </option>
            </select>
          </label>
        </FilterForm>
      }
      list={list}
      result={result}
      connection={result.data?.paymentLinks}
      noun={["payment link", "payment links"]}
    >
      {(links) => (
        <div class="card">
          <ul class="rows">
            {links.edges.map(({ node }) => (
              <LinkItem key={node.id} link={node} onChange={reload} />
            ))}
          </ul>
        </div>
      )}
    </ListPage>
  );
}

export function PaymentLinkPage({ id }: { id: string }) {
  const [{ data, error }, refetch] = useQuery({ query: PaymentLinkQuery, variables: { id } });
  const link = data?.paymentLink;
  if (!link) return <ErrorNote error={error} />;
  return (
    <>
      <p>
        <Link href="/payment-links">← Payment links</Link>
      </p>
      <h1>
        {link.name} <Status status={link.active ? "ACTIVE" : "INACTIVE"} />
      </h1>
      <Section
        title="Payment link"
        actions={
          <ActiveToggle
            mutation={SetPaymentLinkActive}
            off="Deactivate"
            question={`Deactivate ${link.name}? Its page stops taking payments (buyers are told it is no longer available) until you reactivate it; charges already made are not affected.`}
            id={link.id}
            active={link.active}
            onChange={() => refetch({ requestPolicy: "network-only" })}
          />
        }
      >
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{link.id}</code>
          </dd>
          <dt>Amount</dt>
          <dd>
            <Amount value={link.amount} />
          </dd>
          <dt>URL</dt>
          <dd>
            <code data-link-url>{link.url}</code> <CopyButton value={link.url} />
          </dd>
          <dt>Description</dt>
          <dd>{link.description ?? <span class="muted">—</span>}</dd>
          <dt>Success / cancel URL</dt>
          <dd>
            {link.successUrl ?? <span class="muted">—</span>} / {link.cancelUrl ?? <span class="muted">—</span>}
          </dd>
          <dt>Asks the buyer's email</dt>
          <dd data-collect-email>{link.collectEmail ? "Yes" : "No"}</dd>
          <dt>Buyers choose a quantity</dt>
          <dd data-quantity-max>{link.quantityMax ? `Yes, up to ${link.quantityMax}` : "No: one each"}</dd>
          <dt>Created</dt>
          <dd>
            <Time iso={link.createdAt} />
          </dd>
        </dl>
      </Section>
      <Section title={`Charges (${link.charges.totalCount})`}>
        {link.charges.totalCount === 0 ? <p class="muted">No buyer has paid here yet.</p> : <ChargeItems charges={link.charges.edges.map((e) => e.node)} />}
      </Section>
    </>
  );
}

/** The API's refusal in the form's words: the quantity's limit is named as the form names it. */
function readable(error: CombinedError | undefined): Error | undefined {
  const text = errorText(error);
  if (!error || !text) return undefined;
  return new Error(text.replace(/^Invalid quantityMax: /, "Most one buyer may choose: "));
}
