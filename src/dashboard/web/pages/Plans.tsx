// Plans: what the merchant bills on a schedule. The list a
// form for a new one, retire and reactivate. A plan's amount, period and trial never change, so the
// page offers no edit of them. How many rows it shows lives in the URL.
import { useMutation, useQuery } from "@urql/preact";
import { ActiveToggle } from "../active-toggle.js";
import { graphql, type ResultOf } from "../graphql.js";
import { ListPage, useListQuery } from "../list.js";
import { Amount, AmountInput, ErrorNote, formValues, Section, Status } from "../ui.js";

export const PlansQuery = graphql(`
  query Plans($first: Int!, $active: Boolean) {
    plans(first: $first, active: $active) {
      totalCount
      pageInfo {
        hasNextPage
      }
      edges {
        node {
          id
          name
          amount
          interval
          intervalCount
          trialDays
          active
        }
      }
    }
  }
`);

const CreatePlan = graphql(`
  mutation CreatePlan($input: CreatePlanInput!) {
    createPlan(input: $input) {
      id
    }
  }
`);

const SetPlanActive = graphql(`
  mutation SetPlanActive($id: ID!, $active: Boolean!) {
    updatePlan(id: $id, input: { active: $active }) {
      id
      active
    }
  }
`);

const INTERVALS = ["DAY", "WEEK", "MONTH", "YEAR"] as const;

/** "every month", "every 3 weeks": as the buyer's checkout says it. */
export function periodWords(interval: string, count: number): string {
  const unit = interval.toLowerCase();
  return count === 1 ? `every ${unit}` : `every ${count} ${unit}s`;
}

/** The form for a new plan; `onCreated` reads the list again. */
function NewPlan({ onCreated }: { onCreated: () => void }) {
  const [created, create] = useMutation(CreatePlan);
  return (
    <Section title="New plan">
      <p class="muted small">
        The amount is pulled from the buyer's wallet once per period, never more. A month is 30 days and a year 365 (the chain counts fixed periods); a period
        is at most a year. Amount, period and trial never change: make a new plan and retire the old one instead.
      </p>
      <form
        class="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const v = formValues(form);
          const result = await create({
            input: {
              name: v.name ?? "",
              amount: (v.amount ?? "").trim(),
              interval: INTERVALS.find((i) => i === v.interval) ?? "MONTH",
              intervalCount: Number(v.intervalCount || "1"),
              trialDays: Number(v.trialDays || "0"),
            },
          });
          if (!result.error) {
            form.reset();
            onCreated();
          }
        }}
      >
        <label class="grow">
          Name
          <input name="name" maxLength={200} required placeholder="Pro, monthly" />
        </label>
        <label>
          Amount (USDC)
          <AmountInput name="amount" required />
        </label>
        <label>
          Every
          <input name="intervalCount" type="number" min={1} max={365} value="1" required />
        </label>
        <label>
          Period
          <select name="interval">
            {INTERVALS.map((i) => (
              <option key={i} value={i} selected={i === "MONTH"}>
                {i.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
        <label>
          Trial (days)
          <input name="trialDays" type="number" min={0} max={730} value="0" />
        </label>
        <button type="submit" disabled={created.fetching}>
          Create plan
        </button>
      </form>
      <ErrorNote error={created.error} />
    </Section>
  );
}

type PlanRow = ResultOf<typeof PlansQuery>["plans"]["edges"][number]["node"];

function PlanItem({ plan: p, onChange }: { plan: PlanRow; onChange: () => void }) {
  return (
    <li class="link-row" data-plan={p.id}>
      <span class="link-name">
        {p.name} <code class="muted small">{p.id}</code>
      </span>
      <span>
        <Amount value={p.amount} /> {periodWords(p.interval, p.intervalCount)}
        {p.trialDays > 0 && <span class="muted small"> · {p.trialDays}-day trial</span>}
      </span>
      <Status status={p.active ? "ACTIVE" : "RETIRED"} />
      <div>
        <ActiveToggle
          mutation={SetPlanActive}
          off="Retire"
          question={`Retire ${p.name}? No new subscription can start on it until you reactivate it; its subscriptions go on being billed.`}
          id={p.id}
          active={p.active}
          onChange={onChange}
        />
      </div>
    </li>
  );
}

export function Plans() {
  const list = useListQuery();
  const [result, refetch] = useQuery({ query: PlansQuery, variables: { first: list.first } });
  const reload = () => refetch({ requestPolicy: "network-only" });
  return (
    <ListPage title="Plans" intro={<NewPlan onCreated={reload} />} list={list} result={result} connection={result.data?.plans} noun={["plan", "plans"]}>
      {(plans) => (
        <div class="card">
          <ul class="rows">
            {plans.edges.map(({ node }) => (
              <PlanItem key={node.id} plan={node} onChange={reload} />
            ))}
          </ul>
        </div>
      )}
    </ListPage>
  );
}
