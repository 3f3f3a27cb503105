// x402: selling an API to software (.docs/x402.md, "Selling an API with x402"). The merchant's x402
// address for this mode (made on first use) and the facilitator's URL, both to copy into the x402
// middleware, what a route may ask for on each chain (network, USDC, its EIP-712 domain, the least a
// payment settles for), and the payments the facilitator settled, newest first, paged by cursor in the
// URL. Without a settlement wallet for the mode, or without a chain on the service, the page says what
// to do instead of showing an address; the payments are listed either way.
import type { CombinedError } from "@urql/core";
import { useQuery } from "@urql/preact";
import { graphql, type ResultOf } from "../graphql.js";
import { type Column, cursorPage, DataTable, ListCount, TxCell, useListQuery } from "../list.js";
import { Pager } from "../period.js";
import { Link } from "../router.js";
import { Amount, CopyButton, ErrorNote, Explorer, Section, Status, Time } from "../ui.js";

const X402SetupQuery = graphql(`
  query X402Setup {
    chains {
      chainId
      name
      explorerUrl
    }
    x402 {
      livemode
      payTo
      facilitatorUrl
      accepts {
        scheme
        network
        asset
        extraName
        extraVersion
        minAmount
      }
    }
  }
`);

const X402PaymentsQuery = graphql(`
  query X402Payments($first: Int, $after: String, $last: Int, $before: String) {
    chains {
      chainId
      name
      explorerUrl
    }
    x402Payments(first: $first, after: $after, last: $last, before: $before) {
      totalCount
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
      edges {
        node {
          id
          status
          amount
          payer
          payTo
          network
          txHash
          resource
          description
          error
          createdAt
        }
      }
    }
  }
`);

type Chains = ResultOf<typeof X402PaymentsQuery>["chains"];
type Accept = ResultOf<typeof X402SetupQuery>["x402"]["accepts"][number];
type Payment = ResultOf<typeof X402PaymentsQuery>["x402Payments"]["edges"][number]["node"];

/** The chain id of a CAIP-2 network ("eip155:8453" → 8453). */
const chainIdOf = (network: string) => Number(network.replace(/^eip155:/, ""));

/** The facilitator's URL as the middleware needs it: absolute (the service gives a path when PUBLIC_URL is not set). */
const absolute = (url: string) => (url.startsWith("/") ? `${location.origin}${url}` : url);

export function X402({ mode }: { mode: string }) {
  return (
    <>
      <h1>x402</h1>
      <p>
        Sell your API to software (agents, scripts), paid per request in USDC over x402: Stablegate is the facilitator that checks and settles each payment to
        your x402 address, and the money is paid out to your settlement wallet less the fee, like a charge's.
      </p>
      <Setup mode={mode} />
      <Payments />
    </>
  );
}

/** Why there is no x402 address in this mode, said as what to do; null for any other error (shown as one). */
function missingNote(error: CombinedError | undefined, mode: string) {
  const code = error?.graphQLErrors[0]?.extensions?.code;
  if (code === "settlement_wallet_missing")
    return (
      <p class="notice" role="note" data-x402-missing="wallet">
        Your x402 address is made from your {mode} settlement wallet, and there is none yet: set one in <Link href="/settings">Settings</Link>.
      </p>
    );
  if (code === "chain_unsupported")
    return (
      <p class="notice" role="note" data-x402-missing="chain">
        No chain is enabled on this service, so there is no x402 address to pay yet: the operator enables one (CHAIN_&lt;id&gt;_RPC_URL and
        CHAIN_&lt;id&gt;_FACTORY).
      </p>
    );
  return null;
}

/** The address and facilitator to configure the middleware with, how to use them, and each chain's requirements. */
function Setup({ mode }: { mode: string }) {
  const [{ data, error, fetching }] = useQuery({ query: X402SetupQuery });
  const x402 = data?.x402;
  const missing = missingNote(error, mode);
  return (
    <>
      <Section title="Your x402 address">
        {missing ?? <ErrorNote error={error} />}
        {!x402 && !error && fetching && <p class="muted">Loading…</p>}
        {x402 && (
          <dl class="facts">
            <dt>x402 address (payTo)</dt>
            <dd class="copy">
              <code data-pay-to>{x402.payTo}</code> <CopyButton value={x402.payTo} label="Copy address" />
            </dd>
            <dt>Facilitator URL</dt>
            <dd class="copy">
              <code data-facilitator-url>{absolute(x402.facilitatorUrl)}</code> <CopyButton value={absolute(x402.facilitatorUrl)} label="Copy URL" />
            </dd>
          </dl>
        )}
        <p class="muted small">
          Point the x402 middleware's facilitator client at the facilitator URL with an API key of this mode (<Link href="/developers">Developers</Link>) as its
          Bearer token, and give each paid route this address as its payTo. A new settlement wallet or fee gives a new address. How to set it up: the guide{" "}
          <cite>Selling an API with x402</cite> (.docs/x402.md in Stablegate's documentation) and GET /v1/x402 in the <a href="/docs">API reference</a>.
        </p>
      </Section>
      {x402 && (
        <Section title="What a route may ask for">
          {x402.accepts.length === 0 ? (
            <p class="muted">No chain of this mode can take x402 payments now: its USDC could not be read.</p>
          ) : (
            <DataTable
              columns={acceptColumns(data.chains)}
              rows={x402.accepts.map((a) => ({ ...a, id: a.network }))}
              rowData={(a) => ({ "data-network": a.network })}
            />
          )}
        </Section>
      )}
    </>
  );
}

const acceptColumns = (chains: Chains): Column<Accept & { id: string }>[] => [
  {
    header: "Network",
    cell: (a) => (
      <>
        <code>{a.network}</code>
        <div class="muted small">{chains.find((c) => c.chainId === chainIdOf(a.network))?.name ?? `Chain ${chainIdOf(a.network)}`}</div>
      </>
    ),
  },
  {
    header: "Asset (USDC)",
    cell: (a) => <Explorer base={chains.find((c) => c.chainId === chainIdOf(a.network))?.explorerUrl} kind="address" value={a.asset} />,
  },
  { header: "EIP-712 name and version", cell: (a) => `${a.extraName}, version ${a.extraVersion}` },
  { header: "Minimum", num: true, name: "minAmount", cell: (a) => <Amount value={a.minAmount} /> },
];

const paymentColumns = (chains: Chains): Column<Payment>[] => [
  { header: "Created", cell: (p) => <Time iso={p.createdAt} /> },
  { header: "Amount", num: true, name: "amount", cell: (p) => <Amount value={p.amount} /> },
  {
    header: "Payer",
    cell: (p) => <Explorer base={chains.find((c) => c.chainId === chainIdOf(p.network))?.explorerUrl} kind="address" value={p.payer} />,
  },
  {
    header: "Resource",
    name: "resource",
    cell: (p) =>
      p.resource || p.description ? (
        <>
          {p.resource && <span class="copy">{p.resource}</span>}
          {p.description && <div class="muted small">{p.description}</div>}
        </>
      ) : (
        <span class="muted">—</span>
      ),
  },
  {
    header: "Status",
    cell: (p) => (
      <>
        <Status status={p.status} />
        {p.error && <div class="muted small copy">{p.error}</div>}
      </>
    ),
  },
  {
    header: "Transaction",
    cell: (p) => (p.txHash ? <TxCell chains={chains} chainId={chainIdOf(p.network)} txHash={p.txHash} /> : <span class="muted">—</span>),
  },
];

/** The payments the facilitator settled (or is settling), newest first, paged by cursor in the URL. */
function Payments() {
  const list = useListQuery();
  const [{ data, error }] = useQuery({ query: X402PaymentsQuery, variables: cursorPage(list.params) });
  const payments = data?.x402Payments;
  return (
    <Section title="Payments">
      <ErrorNote error={error} />
      {payments && (
        <>
          <ListCount count={payments.totalCount} noun={["payment", "payments"]} />
          <DataTable columns={paymentColumns(data.chains)} rows={payments.edges.map((e) => e.node)} rowData={(p) => ({ "data-x402-payment": p.id })} />
          {payments.edges.length === 0 && (
            <p class="muted">No x402 payments yet: each request the facilitator settles for you shows here, and in Balance once it is confirmed.</p>
          )}
          <Pager pageInfo={payments.pageInfo} filters={{}} />
        </>
      )}
    </Section>
  );
}
