// A charge the ledger and chain disagree about: why, what to do, and Mark reviewed.
import { useMutation } from "@urql/preact";
import { type FragmentOf, graphql, readFragment } from "../../graphql.js";
import { Confirm, ErrorNote, Section } from "../../ui.js";
import { useNewest } from "./live.js";

export const ChargeReview = graphql(`
  fragment ChargeReview on Charge {
    id
    needsReview
    reviewReason
  }
`);

const MarkChargeReviewed = graphql(
  `
    mutation MarkChargeReviewed($id: ID!) {
      markChargeReviewed(id: $id) {
        id
        ...ChargeReview
      }
    }
  `,
  [ChargeReview],
);

type Review = FragmentOf<typeof ChargeReview>;

/** Needs review, with Mark reviewed (asked first; then "Marked reviewed."), or nothing for a charge that needs none. */
export function ReviewSection(props: { charge: Review }) {
  const [reviewed, runReviewed] = useMutation(MarkChargeReviewed);
  const charge = readFragment(ChargeReview, useNewest<Review>(props.charge, reviewed.data?.markChargeReviewed)!);
  return charge.needsReview ? (
    <Section
      title="Needs review"
      class="review"
      actions={
        <Confirm
          plain
          label="Mark reviewed"
          question="Mark this charge reviewed? It leaves the list of charges to review; its amounts stay as they are."
          confirm="Yes, mark it reviewed"
          disabled={reviewed.fetching}
          onConfirm={() => void runReviewed({ id: charge.id })}
        />
      }
    >
      <p data-review-reason>{charge.reviewReason}</p>
      <p>
        The ledger and the chain disagree about this charge, so its amounts may not be final; nothing is corrected by itself. Compare its ledger rows below with
        its address and transactions in the explorer, settle any difference with your buyer (a refund, or asking for the rest), then mark it reviewed. A
        difference still there at a later check flags it again.
      </p>
      <ErrorNote error={reviewed.error} />
    </Section>
  ) : reviewed.data ? (
    <p role="status">Marked reviewed.</p>
  ) : null;
}
