// Home: the ledger's totals for a period (gross received, fees, refunds, net) and the money received
// per day as a chart with its axes, both read again when a charge event comes in (the chargeEvents
// subscription), so a charge completing shows without reload; and the charges of the last 30 days by
// status. The period (whole UTC days, the last 30 by default) lives in the URL.
import { useQuery } from "@urql/preact";
import { useChargeEventsRefresh } from "../charge-events.js";
import { graphql } from "../graphql.js";
import { instants, lastDays, PeriodFields, periodOf } from "../period.js";
import { Link, useQueryState } from "../router.js";
import { LiveChecklist } from "./LiveChecklist.js";
import { cents, ErrorNote, formValues, Money, Section, Status, units, usdc } from "../ui.js";

const SummaryQuery = graphql(`
  query HomeSummary($createdGte: String, $createdLt: String) {
    ledgerSummary(createdGte: $createdGte, createdLt: $createdLt) {
      grossReceived
      fees
      refunded
      net
      daily {
        day
        grossReceived
      }
    }
  }
`);

const StatsQuery = graphql(`
  query HomeStats {
    chargeStats(days: 30) {
      days
      byStatus {
        status
        count
      }
    }
  }
`);

/** The longest a charge event waits before the totals show it: a busy shop's stream must not spend the session's read budget. */
const REFRESH_MS = 1000;
const DEFAULT_DAYS = 30;

export function Home() {
  const [search, change] = useQueryState();
  const chosen = periodOf(search);
  const period = chosen.from || chosen.to ? chosen : lastDays(DEFAULT_DAYS);
  const [{ data, error }, refetch] = useQuery({ query: SummaryQuery, variables: instants(period) });
  const [{ data: stats }, restat] = useQuery({ query: StatsQuery });
  useChargeEventsRefresh(REFRESH_MS, () => {
    refetch({ requestPolicy: "network-only" });
    restat({ requestPolicy: "network-only" });
  });
  const summary = data?.ledgerSummary;
  return (
    <>
      <h1>Home</h1>
      <LiveChecklist />
      <form
        key={search.toString()}
        class="filters"
        aria-label="Period"
        onSubmit={(e) => {
          e.preventDefault();
          const form = formValues(e.currentTarget);
          change({ from: form.from, to: form.to });
        }}
      >
        <PeriodFields period={period} />
        <button type="submit">Show</button>
      </form>
      <ErrorNote error={error} />
      {summary && (
        <>
          <Section title="Totals">
            <dl class="totals">
              {(
                [
                  ["grossReceived", "Gross received"],
                  ["fees", "Fees"],
                  ["refunded", "Refunds"],
                  ["net", "Net"],
                ] as const
              ).map(([key, label]) => (
                <div key={key} data-total={key}>
                  <dt>{label}</dt>
                  <dd>
                    <Money value={summary[key]} />
                  </dd>
                </div>
              ))}
            </dl>
            <p class="muted small">
              {period.from} to {period.to} (UTC), from the ledger: net is what was received less fees and refunds. <Link href="/balance">Balance</Link> ·{" "}
              <Link href="/payouts">Payouts</Link>
            </p>
          </Section>
          <Section title="Money received per day">
            <VolumeChart days={summary.daily} total={summary.grossReceived} />
          </Section>
        </>
      )}
      {stats && (
        <Section title={`Charges created in the last ${stats.chargeStats.days} days`}>
          <ul class="counts">
            {stats.chargeStats.byStatus.map((s) => (
              <li key={s.status}>
                <Status status={s.status} /> <strong>{s.count}</strong>
              </li>
            ))}
          </ul>
          <Link href="/charges">All charges</Link>
        </Section>
      )}
    </>
  );
}

// The chart's drawing area, in the SVG's own units (it scales to the page's width).
const WIDTH = 640;
const HEIGHT = 220;
const LEFT = 70;
const RIGHT = 10;
const TOP = 22;
const BOTTOM = 26;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = HEIGHT - TOP - BOTTOM;
/** At most this many steps up the y axis, and dates along the x axis. */
const Y_STEPS = 4;
const X_LABELS = 6;

/** The y axis' step in cents: 1, 2 or 5 times a power of ten, so that Y_STEPS steps reach `top`. */
function yStep(top: bigint): bigint {
  for (let power = 1n; ; power *= 10n) {
    for (const m of [1n, 2n, 5n]) if (m * power * BigInt(Y_STEPS) >= top) return m * power;
  }
}

/** Cents as the axis writes them: two decimals. */
function centsText(c: bigint): string {
  return cents(usdc(c * 10_000n)).text;
}

/** "Nov 24" for the UTC day "2026-11-24". */
function shortDay(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString("en", { month: "short", day: "numeric", timeZone: "UTC" });
}

/** The days' bars; `total` is the period's gross received, as the ledger sums it. */
function VolumeChart({ days, total }: { days: readonly { day: string; grossReceived: string }[]; total: string }) {
  // Bars are drawn in cents, rounded up, so that no amount received draws as nothing.
  const inCents = days.map((d) => (units(d.grossReceived) + 9_999n) / 10_000n);
  const max = inCents.reduce((m, c) => (c > m ? c : m), 0n);
  const step = yStep(max === 0n ? 100n : max);
  const steps = max === 0n ? BigInt(Y_STEPS) : (max + step - 1n) / step;
  const top = step * steps;
  const y = (c: bigint) => TOP + PLOT_H - Number((c * BigInt(PLOT_H * 1000)) / top) / 1000;
  const band = PLOT_W / Math.max(days.length, 1);
  const every = Math.ceil(days.length / X_LABELS);
  const first = days[0]?.day ?? "";
  const last = days.at(-1)?.day ?? "";
  return (
    <figure class="chart">
      <svg class="axes" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`Money received per day in USDC, ${first} to ${last}`}>
        <text x={4} y={12}>
          USDC
        </text>
        {Array.from({ length: Number(steps) + 1 }, (_, i) => {
          const value = step * BigInt(i);
          return (
            <g key={i} data-y-tick={centsText(value)}>
              <line class="grid-line" x1={LEFT} x2={WIDTH - RIGHT} y1={y(value)} y2={y(value)} />
              <text x={LEFT - 6} y={y(value) + 4} text-anchor="end">
                {centsText(value)}
              </text>
            </g>
          );
        })}
        {days.map((d, i) => {
          const h = TOP + PLOT_H - y(inCents[i]!);
          return (
            <rect key={d.day} class="bar" x={LEFT + i * band + band * 0.15} y={TOP + PLOT_H - h} width={band * 0.7} height={h} data-day={d.day}>
              <title>{`${d.day}: ${cents(d.grossReceived).text} USDC`}</title>
            </rect>
          );
        })}
        <line class="axis" x1={LEFT} x2={LEFT} y1={TOP} y2={TOP + PLOT_H} />
        <line class="axis" x1={LEFT} x2={WIDTH - RIGHT} y1={TOP + PLOT_H} y2={TOP + PLOT_H} />
        {days.map((d, i) =>
          i % every === 0 ? (
            <text key={d.day} data-x-tick={d.day} x={LEFT + i * band + band / 2} y={HEIGHT - 8} text-anchor="middle">
              {shortDay(d.day)}
            </text>
          ) : null,
        )}
      </svg>
      <figcaption>
        {first} to {last} (UTC days) ·{" "}
        {units(total) === 0n ? (
          "nothing received yet"
        ) : (
          <>
            <Money value={total} /> received
          </>
        )}
      </figcaption>
    </figure>
  );
}
