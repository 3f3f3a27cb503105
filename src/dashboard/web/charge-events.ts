// Pages that show charges (Home, Charges) read them again when the chargeEvents subscription says a
// charge of this mode changed, throttled: a busy shop's stream of events must not spend the session's
// read budget.
import { useSubscription } from "@urql/preact";
import { useEffect, useRef } from "preact/hooks";
import { graphql } from "./graphql.js";

const ChargeEvents = graphql(`
  subscription ChargeEvents {
    chargeEvents {
      id
      type
    }
  }
`);

/** Calls `refresh` at most once per `ms` after charge events, with the types of the events it answers. */
export function useChargeEventsRefresh(ms: number, refresh: (types: ReadonlySet<string>) => void): void {
  const [{ data: event }] = useSubscription({ query: ChargeEvents });
  const latest = useRef(refresh);
  latest.current = refresh;
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  const types = useRef(new Set<string>());
  useEffect(() => {
    if (!event) return;
    types.current.add(event.chargeEvents.type);
    if (pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      const seen = types.current;
      types.current = new Set();
      latest.current(seen);
    }, ms);
  }, [event?.chargeEvents.id]);
  useEffect(() => () => void (pending.current && clearTimeout(pending.current)), []);
}
