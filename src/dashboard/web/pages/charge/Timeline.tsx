// The charge's timeline: its events (with their webhook deliveries and Resend webhook) and its
// refunds (made, then completed or cancelled), oldest first.
import { useMutation } from "@urql/preact";
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { type FragmentOf, graphql, readFragment, type ResultOf } from "../../graphql.js";
import { Amount, ErrorNote, Explorer, Section, Status, Time } from "../../ui.js";
import { type ChainInfo, chainOf } from "./live.js";

export const ChargeTimeline = graphql(`
  fragment ChargeTimeline on Charge {
    id
    chainId
    events {
      id
      type
      timestamp
      deliveries {
        endpointId
        url
        status
        attempts {
          attemptedAt
          statusCode
          succeeded
          error
        }
      }
    }
    refunds {
      id
      amount
      status
      address
      txHash
      createdAt
      completedAt
      cancelledAt
    }
  }
`);

const ResendEvent = graphql(`
  mutation ResendEvent($id: ID!) {
    resendEvent(id: $id) {
      id
      deliveries {
        endpointId
        url
        status
        attempts {
          attemptedAt
          statusCode
          succeeded
          error
        }
      }
    }
  }
`);

type TimelineData = ResultOf<typeof ChargeTimeline>;
type TimelineEntry = { at: string; key: string; body: ComponentChildren };

/** The Timeline section; an event resent shows the deliveries the resend answered with until the charge is read again. */
export function TimelineSection(props: { charge: FragmentOf<typeof ChargeTimeline>; chains: readonly ChainInfo[] }) {
  const [resend, runResend] = useMutation(ResendEvent);
  // The charge as it was read when an event was resent: a newer read has the newer deliveries.
  const [resentFor, setResentFor] = useState<unknown>(null);
  const charge = readFragment(ChargeTimeline, props.charge);
  const chain = chainOf(props.chains, charge.chainId);
  const resent = resentFor === props.charge ? resend.data?.resendEvent : undefined;
  const events = charge.events.map((e) => (resent?.id === e.id ? { ...e, deliveries: resent.deliveries } : e));
  const onResend = (id: string) => {
    setResentFor(props.charge);
    void runResend({ id });
  };
  const entries = [...eventEntries(events, resend.fetching, onResend), ...refundEntries(charge.refunds, chain)];
  // ISO 8601 UTC times sort as text.
  entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return (
    <Section title="Timeline">
      <ErrorNote error={resend.error} />
      <ol class="timeline">
        {entries.map((e) => (
          <li key={e.key}>{e.body}</li>
        ))}
      </ol>
    </Section>
  );
}

/** The charge's events, each with its webhook deliveries and Resend webhook. */
function eventEntries(events: TimelineData["events"], resending: boolean, onResend: (eventId: string) => void): TimelineEntry[] {
  return events.map((e) => ({
    at: e.timestamp,
    key: e.id,
    body: (
      <>
        <strong>{e.type}</strong> <Time iso={e.timestamp} />
        {e.deliveries.length > 0 && (
          <ul class="deliveries">
            {e.deliveries.map((d) => (
              <li key={d.endpointId}>
                {d.url}: {d.status.toLowerCase()}
                {d.attempts.length > 0 &&
                  ` (${d.attempts.length} attempt${d.attempts.length === 1 ? "" : "s"}, last ${d.attempts.at(-1)?.statusCode ?? d.attempts.at(-1)?.error})`}
              </li>
            ))}
          </ul>
        )}
        <button type="button" class="link" disabled={resending} onClick={() => onResend(e.id)}>
          Resend webhook
        </button>
      </>
    ),
  }));
}

/** Each refund made, and completed or cancelled. */
function refundEntries(refunds: TimelineData["refunds"], chain: ChainInfo | undefined): TimelineEntry[] {
  return refunds.flatMap((r) => {
    const to = r.address ? <Explorer base={chain?.explorerUrl} kind="address" value={r.address} /> : "a claim link";
    const made: TimelineEntry = {
      at: r.createdAt,
      key: `${r.id}:created`,
      body: (
        <span data-timeline-refund={r.id}>
          <strong>Refund</strong> <Amount value={r.amount} /> to {to} <Status status={r.status} /> <Time iso={r.createdAt} />
          {r.txHash && (
            <>
              {" "}
              · <Explorer base={chain?.explorerUrl} kind="tx" value={r.txHash} />
            </>
          )}
        </span>
      ),
    };
    const ended = r.completedAt ?? r.cancelledAt;
    if (!ended) return [made];
    const end: TimelineEntry = {
      at: ended,
      key: `${r.id}:ended`,
      body: (
        <>
          <strong>Refund {r.completedAt ? "completed" : "cancelled"}</strong> <Amount value={r.amount} /> <Time iso={ended} />
        </>
      ),
    };
    return [made, end];
  });
}
