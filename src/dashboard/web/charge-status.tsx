// How a charge's state reads everywhere in the dashboard: its display status as a badge (the API
// decides it: Charge.displayStatus, refined from status by the money received and refunded) and
// "Needs review" beside it.
import { ReviewBadge } from "./ui.js";

/** A charge's display status (PARTLY_PAID reads "PARTLY PAID") and, when it needs review, that badge. */
export function ChargeBadges({ displayStatus, needsReview = false }: { displayStatus: string; needsReview?: boolean }) {
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
    </>
  );
}
