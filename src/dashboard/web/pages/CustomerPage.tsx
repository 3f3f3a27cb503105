// A customer: details and address (editable), stats, subscriptions, charges and invoices (with the way
// to a new subscription or invoice), and Delete.
import { useMutation, useQuery } from "@urql/preact";
import { AddressFields, addressInput, addressParam } from "../address.js";
import { ChargeBadges } from "../charge-status.js";
import { graphql, type ResultOf } from "../graphql.js";
import { Link, navigate } from "../router.js";
import { Amount, Confirm, Day, ErrorNote, formValues, Outcome, Section, Status, Time } from "../ui.js";
import { periodWords } from "./Plans.js";
import { NewSubscription } from "./Subscriptions.js";

const CustomerQuery = graphql(`
  query Customer($id: ID!) {
    customer(id: $id) {
      id
      email
      name
      phone
      companyName
      taxId
      description
      address {
        line1
        line2
        city
        state
        postalCode
        country
      }
      stats {
        chargeCount
        invoiceCount
        totalSpent
      }
      subscriptions(first: 10) {
        totalCount
        edges {
          node {
            id
            status
            amount
            plan {
              id
              name
              interval
              intervalCount
            }
          }
        }
      }
      invoices(first: 10) {
        totalCount
        edges {
          node {
            id
            number
            status
            total
            amountDue
            dueDate
          }
        }
      }
      charges(first: 50) {
        edges {
          node {
            id
            orderId
            amount
            displayStatus
            needsReview
            createdAt
          }
        }
      }
    }
  }
`);

const UpdateCustomer = graphql(`
  mutation UpdateCustomer($id: ID!, $input: UpdateCustomerInput!) {
    updateCustomer(id: $id, input: $input) {
      id
      email
      name
      phone
      companyName
      taxId
      description
      address {
        line1
        line2
        city
        state
        postalCode
        country
      }
    }
  }
`);

const DeleteCustomer = graphql(`
  mutation DeleteCustomer($id: ID!) {
    deleteCustomer(id: $id) {
      id
    }
  }
`);

const EDITABLE = [
  ["email", "Email"],
  ["name", "Name"],
  ["phone", "Phone"],
  ["companyName", "Company"],
  ["taxId", "Tax id"],
  ["description", "Notes"],
] as const;

export function CustomerPage({ id }: { id: string }) {
  const [{ data, error }] = useQuery({ query: CustomerQuery, variables: { id } });
  const [update, runUpdate] = useMutation(UpdateCustomer);
  const [addressUpdate, runAddressUpdate] = useMutation(UpdateCustomer);
  const [deleted, runDelete] = useMutation(DeleteCustomer);
  const customer = data?.customer;
  if (!customer) return <ErrorNote error={error} />;
  return (
    <>
      <p>
        <Link href="/customers">← Customers</Link>
      </p>
      <div class="page-head">
        <h1>{customer.name}</h1>
        <Confirm
          label="Delete customer"
          question={`Delete ${customer.name} (${customer.email})? This cannot be undone. Their charges and issued invoices stay, without a customer; their draft invoices lose theirs.`}
          confirm={`Delete ${customer.name}`}
          disabled={deleted.fetching}
          onConfirm={() => void runDelete({ id }).then((r) => !r.error && navigate("/customers"))}
        />
      </div>
      <ErrorNote error={deleted.error} />
      <div class="grid">
        <Section title="Details">
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const v = formValues(e.currentTarget);
              // Empty optional fields clear them; email and name are required by the API.
              const input = Object.fromEntries(EDITABLE.map(([k]) => [k, v[k] === "" && k !== "email" && k !== "name" ? null : v[k]]));
              void runUpdate({ id, input });
            }}
          >
            {EDITABLE.map(([key, label]) => (
              <label key={key}>
                {label}
                {key === "email" ? <input name={key} value={customer[key]} type="email" required /> : <input name={key} value={customer[key] ?? ""} />}
              </label>
            ))}
            <Outcome result={update} saved="Saved." labels={Object.fromEntries(EDITABLE)} />
            <button type="submit" disabled={update.fetching}>
              Save
            </button>
          </form>
        </Section>
        <Section title="Address">
          <form
            onSubmit={(e) => {
              e.preventDefault();
              // Every part blank clears the address.
              void runAddressUpdate({ id, input: { address: addressInput(formValues(e.currentTarget)) } });
            }}
          >
            <AddressFields value={customer.address} legend="Postal address (printed on invoices)" error={addressUpdate.error} />
            <Outcome result={addressUpdate} saved="Address saved." skip={addressParam} />
            <button type="submit" disabled={addressUpdate.fetching}>
              Save address
            </button>
          </form>
        </Section>
        <Section title="Stats">
          <dl class="facts">
            <dt>Charges</dt>
            <dd>{customer.stats.chargeCount}</dd>
            <dt>Invoices</dt>
            <dd>{customer.stats.invoiceCount}</dd>
            <dt>Total spent</dt>
            <dd>
              <Amount value={customer.stats.totalSpent} />
            </dd>
          </dl>
        </Section>
      </div>
      <CustomerSubscriptions customer={customer} />
      <CustomerInvoices customer={customer} />
      <Section title="Charges">
        <ul class="rows">
          {customer.charges.edges.map(({ node: c }) => (
            <li key={c.id} data-charge={c.id}>
              <Link href={`/charges/${c.id}`}>{c.orderId}</Link> <Amount value={c.amount} />{" "}
              <ChargeBadges displayStatus={c.displayStatus} needsReview={c.needsReview} /> <Time iso={c.createdAt} />
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}

type Customer = NonNullable<ResultOf<typeof CustomerQuery>["customer"]>;

/** The customer's subscriptions, and the way to a new one. */
function CustomerSubscriptions({ customer }: { customer: Customer }) {
  const subs = customer.subscriptions;
  return (
    <Section title="Subscriptions">
      {subs.totalCount === 0 ? (
        <p class="muted">No subscription yet.</p>
      ) : (
        <ul class="rows">
          {subs.edges.map(({ node: s }) => (
            <li key={s.id} data-subscription={s.id}>
              <Link href={`/subscriptions/${s.id}`}>{s.plan.name}</Link> <Amount value={s.amount} /> {periodWords(s.plan.interval, s.plan.intervalCount)}{" "}
              <Status status={s.status} />
            </li>
          ))}
        </ul>
      )}
      {subs.totalCount > subs.edges.length && (
        <p class="muted small">
          The newest {subs.edges.length} of {subs.totalCount}.
        </p>
      )}
      <NewSubscription customerId={customer.id} />
    </Section>
  );
}

/** The customer's newest invoices, what each still has due, and the way to a new one. */
function CustomerInvoices({ customer }: { customer: Customer }) {
  return (
    <Section
      title="Invoices"
      actions={
        <Link href={`/invoices/new?customer=${encodeURIComponent(customer.id)}`} class="button">
          New invoice
        </Link>
      }
    >
      {customer.invoices.totalCount === 0 ? (
        <p class="muted">No invoice yet.</p>
      ) : (
        <ul class="rows">
          {customer.invoices.edges.map(({ node: i }) => (
            <li key={i.id}>
              <Link href={`/invoices/${i.id}`}>{i.number ?? "Draft"}</Link> <Amount value={i.total} /> <Status status={i.status} />
              {i.status !== "DRAFT" && i.status !== "VOID" && i.amountDue !== "0.00" && (
                <span class="muted">
                  {" "}
                  · due <Amount value={i.amountDue} />
                  {i.dueDate && (
                    <>
                      {" "}
                      by <Day iso={i.dueDate} />
                    </>
                  )}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      {customer.invoices.totalCount > customer.invoices.edges.length && (
        <p class="muted small">
          The newest {customer.invoices.edges.length} of {customer.invoices.totalCount}.
        </p>
      )}
    </Section>
  );
}
