// The live-mode checklist (GraphQL `liveReadiness`): what is still missing before live mode takes real
// money, each item with a link to where it is fixed. Home shows it in live mode; until every item is
// done, the shell says on every live page that live mode is not ready.
import { useQuery } from "@urql/preact";
import { graphql } from "../graphql.js";
import { Link } from "../router.js";
import { ErrorNote, Section } from "../ui.js";

const LiveReadinessQuery = graphql(`
  query LiveReadiness {
    viewer {
      mode
    }
    liveReadiness {
      ready
      items {
        key
        done
        detail
      }
    }
  }
`);

/** Each check's name, and where the merchant fixes it (the chain is the operator's). */
const ITEMS = {
  LIVE_WALLET: { title: "Live settlement wallet", fix: { href: "/settings", label: "Set it in Settings" } },
  LIVE_CHAIN: { title: "A mainnet with a funded relayer", fix: null },
  LIVE_WEBHOOK_ENDPOINT: { title: "A live webhook endpoint", fix: { href: "/developers", label: "Add one in Developers" } },
} as const;

/** The readiness of live mode, or null in test mode (and while it loads). */
function useLiveReadiness() {
  const [{ data, error }] = useQuery({ query: LiveReadinessQuery });
  return { readiness: data?.viewer.mode === "LIVE" ? data.liveReadiness : null, error };
}

/** The checklist, in live mode only. */
export function LiveChecklist() {
  const { readiness, error } = useLiveReadiness();
  if (error) return <ErrorNote error={error} />;
  if (!readiness) return null;
  const left = readiness.items.filter((i) => !i.done).length;
  return (
    <Section title="Going live" class="checklist">
      <p data-ready={readiness.ready}>
        {readiness.ready
          ? "Live mode is ready: it takes real money."
          : `Live mode is not ready: ${left} of ${readiness.items.length} items ${left === 1 ? "is" : "are"} still to do.`}
      </p>
      <ul class="checks">
        {readiness.items.map((item) => {
          const { title, fix } = ITEMS[item.key];
          return (
            <li key={item.key} data-check={item.key} data-done={item.done}>
              <span class="check-mark" aria-hidden="true">
                {item.done ? "✓" : ""}
              </span>
              <div>
                <strong>{title}</strong> <span class={`status status-${item.done ? "done" : "todo"}`}>{item.done ? "Done" : "To do"}</span>
                <p class="muted small">{item.detail}</p>
                {!item.done && fix && <Link href={fix.href}>{fix.label}</Link>}
              </div>
            </li>
          );
        })}
      </ul>
    </Section>
  );
}

/** In live mode while the checklist is not done: says so, with a link to it (Home). */
export function LiveNotReady() {
  const { readiness } = useLiveReadiness();
  if (!readiness || readiness.ready) return null;
  return (
    <p class="live-not-ready">
      Live mode is not ready to take real money yet. <Link href="/">See the checklist</Link>
    </p>
  );
}
