// How a charge's state reads everywhere in the dashboard: its display status as a badge (the API
// decides it: Charge.displayStatus, refined from status by the money received and refunded), and
// beside it "Needs review" and "Overpaid 5.00" (Charge.amountOverpaid, when the buyer paid too much).
import { ReviewBadge } from "./ui.js";

/** A charge's display status (PARTLY_PAID reads "PARTLY PAID") and, when it needs review or was overpaid, those badges. */
export function ChargeBadges({ displayStatus, needsReview = false, overpaid }: { displayStatus: string; needsReview?: boolean; overpaid?: string }) {
  return (
    <>
      <span class={`status status-${displayStatus.toLowerCase().replace(/_/g, "-")}`} data-display-status={displayStatus}>
        {displayStatus.replace(/_/g, " ")}
      </span>
      {needsReview && (
        <>
          {" "}
          <ReviewBadge />
        </>
      )}
      {overpaid !== undefined && overpaid !== "0.00" && (
        <>
          {" "}
          <span class="status status-overpaid" data-overpaid={overpaid} title={`The buyer paid ${overpaid} USDC more than the amount`}>
            Overpaid {overpaid}
          </span>
        </>
      )}
    </>
  );
}
