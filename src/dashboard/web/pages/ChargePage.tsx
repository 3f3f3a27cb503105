// A charge's page, in sections (pages/charge/) that each declare the fragment of the charge they show:
// the charge (heading, facts, metadata, cancel), what needs review, payments, refunds (and the form
// for a new one), settlements, ledger, other assets at its address (sweep), and its timeline. The page
// reads them once, then follows the charge live: chargeUpdated sends every section again with each
// committed change of the charge; a refund's events (which change no charge until the refund
// completes) read the refunds and the timeline again. A mutation's answer updates its own section.
import { useQuery, useSubscription } from "@urql/preact";
import { useEffect } from "preact/hooks";
import { type FragmentOf, graphql, readFragment } from "../graphql.js";
import { Link } from "../router.js";
import { ErrorNote } from "../ui.js";
import { useNewest } from "./charge/live.js";
import { ChargePayments, LedgerSection, PaymentsSection, SettlementsSection } from "./charge/Payments.js";
import { ChargeRefunds, RefundsSection } from "./charge/Refunds.js";
import { ChargeReview, ReviewSection } from "./charge/Review.js";
import { ChargeStrayAssets, StrayAssetsSection } from "./charge/StrayAssets.js";
import { ChargeFacts, ChargeHeading, ChargeSummary } from "./charge/Summary.js";
import { ChargeTimeline, TimelineSection } from "./charge/Timeline.js";

/** Every section's fields: what the page reads first, and what chargeUpdated sends again after each change. */
const ChargeSections = graphql(
  `
    fragment ChargeSections on Charge {
      id
      ...ChargeSummary
      ...ChargeReview
      ...ChargePayments
      ...ChargeRefunds
      ...ChargeStrayAssets
      ...ChargeTimeline
    }
  `,
  [ChargeSummary, ChargeReview, ChargePayments, ChargeRefunds, ChargeStrayAssets, ChargeTimeline],
);

const ChargeQuery = graphql(
  `
    query Charge($id: ID!) {
      chains {
        chainId
        name
        explorerUrl
        usdcAddress
      }
      charge(id: $id) {
        ...ChargeSections
      }
    }
  `,
  [ChargeSections],
);

const ChargeLive = graphql(
  `
    subscription ChargeLive($id: ID!) {
      chargeUpdated(id: $id) {
        ...ChargeSections
      }
    }
  `,
  [ChargeSections],
);

const RefundEvents = graphql(`
  subscription RefundEvents {
    events(types: ["refund.created", "refund.updated", "refund.completed", "refund.cancelled"]) {
      id
      data
    }
  }
`);

const ChargeRefundsAgain = graphql(
  `
    query ChargeRefundsAgain($id: ID!) {
      charge(id: $id) {
        id
        ...ChargeRefunds
        ...ChargeTimeline
      }
    }
  `,
  [ChargeRefunds, ChargeTimeline],
);

/** The page of charge `id`. */
export function ChargePage({ id }: { id: string }) {
  const [{ data, error }] = useQuery({ query: ChargeQuery, variables: { id } });
  const [{ data: live, error: liveError }] = useSubscription({ query: ChargeLive, variables: { id } });
  const [{ data: again }, readAgain] = useQuery({ query: ChargeRefundsAgain, variables: { id }, pause: true });
  const [{ data: event }] = useSubscription({ query: RefundEvents });
  useEffect(() => {
    if (event && event.events.data.chargeId === id) readAgain({ requestPolicy: "network-only" });
  }, [event?.events.id]);
  const newest = useNewest(data?.charge, live?.chargeUpdated);
  const charge = newest && readFragment(ChargeSections, newest);
  const refunds = useNewest<FragmentOf<typeof ChargeRefunds> & FragmentOf<typeof ChargeTimeline>>(charge, again?.charge);
  if (!charge || !refunds || !data) return <ErrorNote error={error ?? liveError} />;
  return (
    <>
      <p>
        <Link href="/charges">← Charges</Link>
      </p>
      <ChargeHeading charge={charge} />
      <ErrorNote error={error ?? liveError} />
      <ReviewSection charge={charge} />
      <ChargeFacts charge={charge} chains={data.chains} />
      <PaymentsSection charge={charge} chains={data.chains} />
      <RefundsSection charge={refunds} chains={data.chains} />
      <SettlementsSection charge={charge} chains={data.chains} />
      <LedgerSection charge={charge} chains={data.chains} />
      <StrayAssetsSection charge={charge} chains={data.chains} />
      <TimelineSection charge={refunds} chains={data.chains} />
    </>
  );
}
