// Home: completed volume per day over 30 days as a chart, charges by status, fees paid.
import { useQuery } from "@urql/preact";
import { graphql } from "../graphql.js";
import { Link } from "../router.js";
import { Amount, ErrorNote, Section, Status, units } from "../ui.js";

const StatsQuery = graphql(`
  query HomeStats {
    chargeStats(days: 30) {
      days
      byStatus {
        status
        count
      }
      completedVolume {
        day
        amount
      }
      feesPaid
    }
  }
`);

export function Home() {
  const [{ data, error }] = useQuery({ query: StatsQuery });
  const stats = data?.chargeStats;
  return (
    <>
      <h1>Home</h1>
      <ErrorNote error={error} />
      {stats && (
        <>
          <Section title={`Completed volume, last ${stats.days} days`}>
            <VolumeChart days={stats.completedVolume} />
          </Section>
          <div class="grid">
            <Section title="Charges by status">
              <ul class="counts">
                {stats.byStatus.map((s) => (
                  <li key={s.status}>
                    <Status status={s.status} /> <strong>{s.count}</strong>
                  </li>
                ))}
              </ul>
              <Link href="/charges">All charges</Link>
            </Section>
            <Section title="Protocol fees paid">
              <p class="big">
                <Amount value={stats.feesPaid} />
              </p>
            </Section>
          </div>
        </>
      )}
    </>
  );
}

function daysWithPayments(n: number): string {
  return n === 1 ? "1 day with payments" : `${n} days with payments`;
}

function VolumeChart({ days }: { days: readonly { day: string; amount: string }[] }) {
  const max = days.reduce((m, d) => (units(d.amount) > m ? units(d.amount) : m), 0n);
  const total = days.reduce((sum, d) => sum + units(d.amount), 0n);
  const width = 10;
  const height = 100;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${days.length * width} ${height}`} preserveAspectRatio="none" role="img" aria-label="Completed volume per day">
        {days.map((d, i) => {
          const h = max === 0n ? 0 : Number((units(d.amount) * BigInt(height - 2)) / max);
          return (
            <rect key={d.day} x={i * width + 1} y={height - h} width={width - 2} height={h} class="bar">
              <title>{`${d.day}: ${d.amount} USDC`}</title>
            </rect>
          );
        })}
      </svg>
      <figcaption>
        {days[0]?.day} to {days.at(-1)?.day} · {total === 0n ? "nothing completed yet" : daysWithPayments(days.filter((d) => d.amount !== "0.00").length)}
      </figcaption>
    </figure>
  );
}
