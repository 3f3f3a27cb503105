// Subscriptions: the list (status filter in the URL), a subscription's page (status, plan, customer,
// period, payer and chain, the checkout and manage links to copy, its invoices, cancel now or at the
// period's end), and the form that subscribes a customer from the customer's page.
import { useMutation, useQuery } from "@urql/preact";
import { graphql, type ResultOf } from "../graphql.js";
import { AnyOf, type Column, CustomerLink, DataTable, FilterForm, ListPage, RowLink, useListQuery } from "../list.js";
import { Link, navigate } from "../router.js";
import { Amount, Confirm, CopyButton, ErrorNote, formValues, Section, Status, Time } from "../ui.js";
import { PlansQuery, periodWords } from "./Plans.js";

const SubscriptionsQuery = graphql(`
  query Subscriptions($first: Int!, $status: SubscriptionStatus) {
    subscriptions(first: $first, status: $status) {
      totalCount
      pageInfo {
        hasNextPage
      }
      edges {
        node {
          id
          status
          amount
          currentPeriodEnd
          cancelAtPeriodEnd
          createdAt
          customer {
            id
            email
          }
          plan {
            id
            name
            interval
            intervalCount
          }
        }
      }
    }
  }
`);

const SubscriptionQuery = graphql(`
  query Subscription($id: ID!) {
    subscription(id: $id) {
      id
      status
      amount
      chainId
      payer
      contractAddress
      currentPeriodStart
      currentPeriodEnd
      trialEnd
      cancelAtPeriodEnd
      canceledAt
      cancelReason
      checkoutUrl
      manageUrl
      createdAt
      customer {
        id
        email
        name
      }
      plan {
        id
        name
        interval
        intervalCount
      }
      invoices(first: 24) {
        totalCount
        edges {
          node {
            id
            number
            status
            total
            billingReason
            createdAt
          }
        }
      }
    }
  }
`);

const CancelSubscription = graphql(`
  mutation CancelSubscription($id: ID!, $atPeriodEnd: Boolean) {
    cancelSubscription(id: $id, atPeriodEnd: $atPeriodEnd) {
      id
      status
      cancelAtPeriodEnd
    }
  }
`);

const CreateSubscription = graphql(`
  mutation CreateSubscription($input: CreateSubscriptionInput!) {
    createSubscription(input: $input) {
      id
    }
  }
`);

export const SUBSCRIPTION_STATUSES = ["INCOMPLETE", "TRIALING", "ACTIVE", "PAST_DUE", "CANCELED", "INCOMPLETE_EXPIRED"] as const;
type Row = ResultOf<typeof SubscriptionsQuery>["subscriptions"]["edges"][number]["node"];

const COLUMNS: Column<Row>[] = [
  {
    header: "Plan",
    cell: (s) => (
      <RowLink href={`/subscriptions/${s.id}`} id={s.id}>
        {s.plan.name}
      </RowLink>
    ),
  },
  { header: "Customer", cell: (s) => <CustomerLink customer={s.customer} /> },
  {
    header: "Price",
    cell: (s) => (
      <>
        <Amount value={s.amount} /> {periodWords(s.plan.interval, s.plan.intervalCount)}
      </>
    ),
  },
  { header: "Status", cell: (s) => <Status status={s.status} /> },
  { header: "Renews", cell: (s) => (s.cancelAtPeriodEnd ? <span class="muted">Ends at period end</span> : <Time iso={s.currentPeriodEnd} />) },
  { header: "Created", cell: (s) => <Time iso={s.createdAt} /> },
];

export function Subscriptions() {
  const list = useListQuery();
  const status = SUBSCRIPTION_STATUSES.find((s) => s === list.params.get("status"));
  const [result] = useQuery({ query: SubscriptionsQuery, variables: { first: list.first, ...(status && { status }) } });
  return (
    <ListPage
      title="Subscriptions"
      filters={
        <FilterForm list={list} toQuery={(v) => ({ status: v.status })}>
          <AnyOf label="Status" name="status" options={SUBSCRIPTION_STATUSES} selected={status} />
        </FilterForm>
      }
      list={list}
      result={result}
      connection={result.data?.subscriptions}
      noun={["subscription", "subscriptions"]}
    >
      {(subs) => <DataTable columns={COLUMNS} rows={subs.edges.map((e) => e.node)} rowData={(s) => ({ "data-subscription": s.id })} />}
    </ListPage>
  );
}

const ENDED = new Set(["CANCELED", "INCOMPLETE_EXPIRED"]);

/** One subscription: its facts, the links to send the buyer, cancel now or at period end, and its invoices. */
export function SubscriptionPage({ id }: { id: string }) {
  const [{ data, error }, refetch] = useQuery({ query: SubscriptionQuery, variables: { id } });
  const [canceled, cancel] = useMutation(CancelSubscription);
  const sub = data?.subscription;
  if (!sub) return <ErrorNote error={error} />;
  const reload = () => refetch({ requestPolicy: "network-only" });
  const ended = ENDED.has(sub.status);
  const hasPeriod = sub.currentPeriodEnd !== null;
  const run = (atPeriodEnd: boolean) => void cancel({ id, atPeriodEnd }).then((r) => !r.error && reload());
  return (
    <>
      <p>
        <Link href="/subscriptions">← Subscriptions</Link>
      </p>
      <h1>
        {sub.plan.name} <Status status={sub.status} />
      </h1>
      <Section
        title="Subscription"
        actions={
          !ended && (
            <span>
              {hasPeriod && !sub.cancelAtPeriodEnd && (
                <Confirm
                  label="Cancel at period end"
                  question="Cancel when the current period ends?"
                  confirm="Cancel at period end"
                  disabled={canceled.fetching}
                  plain
                  onConfirm={() => run(true)}
                />
              )}{" "}
              <Confirm
                label="Cancel now"
                question="Cancel now? Nothing more is pulled."
                confirm="Cancel now"
                disabled={canceled.fetching}
                onConfirm={() => run(false)}
              />
            </span>
          )
        }
      >
        <ErrorNote error={canceled.error} />
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{sub.id}</code>
          </dd>
          <dt>Customer</dt>
          <dd>
            <CustomerLink customer={sub.customer} /> {sub.customer.name}
          </dd>
          <dt>Price</dt>
          <dd>
            <Amount value={sub.amount} /> {periodWords(sub.plan.interval, sub.plan.intervalCount)}
          </dd>
          <dt>Current period</dt>
          <dd>
            {hasPeriod ? (
              <>
                <Time iso={sub.currentPeriodStart} /> – <Time iso={sub.currentPeriodEnd} />
                {sub.cancelAtPeriodEnd && <strong> (ends then)</strong>}
              </>
            ) : (
              <span class="muted">Not started</span>
            )}
          </dd>
          {sub.trialEnd && (
            <>
              <dt>Trial ends</dt>
              <dd>
                <Time iso={sub.trialEnd} />
              </dd>
            </>
          )}
          {sub.canceledAt && (
            <>
              <dt>Canceled</dt>
              <dd>
                <Time iso={sub.canceledAt} /> <span class="muted">({sub.cancelReason})</span>
              </dd>
            </>
          )}
          <dt>Payer</dt>
          <dd>{sub.payer ? <code>{sub.payer}</code> : <span class="muted">Not authorized yet</span>}</dd>
          <dt>Chain</dt>
          <dd>
            {sub.chainId ?? <span class="muted">—</span>}
            {sub.contractAddress && (
              <span class="muted small">
                {" "}
                · contract <code>{sub.contractAddress}</code>
              </span>
            )}
          </dd>
          <dt>Checkout link</dt>
          <dd>
            <code data-checkout-url>{sub.checkoutUrl}</code> <CopyButton value={sub.checkoutUrl} />
          </dd>
          <dt>Manage link (the buyer's)</dt>
          <dd>
            <code data-manage-url>{sub.manageUrl}</code> <CopyButton value={sub.manageUrl} />
          </dd>
          <dt>Created</dt>
          <dd>
            <Time iso={sub.createdAt} />
          </dd>
        </dl>
      </Section>
      <PeriodInvoices invoices={sub.invoices} />
    </>
  );
}

type Invoices = NonNullable<ResultOf<typeof SubscriptionQuery>["subscription"]>["invoices"];

/** The invoices of a subscription's periods, newest first. */
function PeriodInvoices({ invoices }: { invoices: Invoices }) {
  return (
    <Section title={`Invoices (${invoices.totalCount})`}>
      {invoices.totalCount === 0 ? (
        <p class="muted">No period billed yet.</p>
      ) : (
        <ul class="rows">
          {invoices.edges.map(({ node: i }) => (
            <li key={i.id}>
              <Link href={`/invoices/${i.id}`}>{i.number ?? "Draft"}</Link> <Amount value={i.total} /> <Status status={i.status} />{" "}
              <span class="muted small">{i.billingReason === "SUBSCRIPTION_CREATE" ? "first period" : "renewal"}</span> <Time iso={i.createdAt} />
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}

/** Subscribes a customer to an active plan, then opens the new subscription (its checkout link to send). */
export function NewSubscription({ customerId }: { customerId: string }) {
  const [{ data }] = useQuery({ query: PlansQuery, variables: { first: 100, active: true } });
  const [created, create] = useMutation(CreateSubscription);
  const plans = data?.plans.edges.map((e) => e.node) ?? [];
  if (data && plans.length === 0) {
    return (
      <p class="muted">
        No active plan yet: <Link href="/plans">create one</Link> to subscribe this customer.
      </p>
    );
  }
  return (
    <form
      class="inline"
      aria-label="New subscription"
      onSubmit={async (e) => {
        e.preventDefault();
        const v = formValues(e.currentTarget);
        const trial = v.trialDays?.trim();
        const result = await create({ input: { customerId, planId: v.planId ?? "", ...(trial ? { trialDays: Number(trial) } : {}) } });
        const id = result.data?.createSubscription.id;
        if (id) navigate(`/subscriptions/${id}`);
      }}
    >
      <label class="grow">
        Plan
        <select name="planId" required>
          {plans.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}: {p.amount} USDC {periodWords(p.interval, p.intervalCount)}
            </option>
          ))}
        </select>
      </label>
      <label>
        Trial days (optional: the plan's otherwise)
        <input name="trialDays" type="number" min={0} max={730} />
      </label>
      <button type="submit" disabled={created.fetching}>
        New subscription
      </button>
      <ErrorNote error={created.error} />
    </form>
  );
}
