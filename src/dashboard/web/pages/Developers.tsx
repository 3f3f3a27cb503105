// Developers: API keys (create with a name and an IP allowlist, roll, revoke; when each was last used), JWT secrets,
// webhook endpoints (add or edit with the event types they get, send a test event, rotate the secret, pause, delete)
// with their deliveries (each attempt's status and the start of the answer), and the event log; a link to the emails (Emails.tsx).
// Whatever cannot be undone asks first, naming the key or endpoint; making a key asks the password.
import type { OperationResult } from "@urql/core";
import { useMutation, useQuery } from "@urql/preact";
import { useRef, useState } from "preact/hooks";
import { useAction } from "../action.js";
import { graphql, type ResultOf } from "../graphql.js";
import { Link } from "../router.js";
import { Confirm, ErrorNote, formValues, reauthentication, Section, ShownOnce, Time } from "../ui.js";

const DevelopersQuery = graphql(`
  query Developers {
    viewer {
      mode
      user {
        id
        totpEnabled
      }
    }
    eventTypes {
      type
      description
    }
    apiKeys {
      id
      livemode
      name
      lastUsedAt
      last4
      ipAllowlist
      createdAt
      revokedAt
      expiresAt
      active
    }
    jwtSecrets {
      id
      livemode
      createdAt
      revokedAt
    }
    webhookEndpoints(first: 50) {
      edges {
        node {
          id
          url
          events
          description
          status
          createdAt
        }
      }
    }
    events(first: 25) {
      edges {
        node {
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
              latencyMs
              responseBody
            }
          }
        }
      }
    }
  }
`);

const CreateApiKey = graphql(`
  mutation CreateApiKey($name: String, $ipAllowlist: [String!], $password: String, $totpCode: String) {
    createApiKey(name: $name, ipAllowlist: $ipAllowlist, password: $password, totpCode: $totpCode) {
      secret
      apiKey {
        id
      }
    }
  }
`);
const RollApiKey = graphql(`
  mutation RollApiKey($id: ID!, $overlapHours: Int, $password: String, $totpCode: String) {
    rollApiKey(id: $id, overlapHours: $overlapHours, password: $password, totpCode: $totpCode) {
      secret
      apiKey {
        id
      }
    }
  }
`);
const RevokeApiKey = graphql(`
  mutation RevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) {
      id
      active
    }
  }
`);
const CreateJwtSecret = graphql(`
  mutation CreateJwtSecret {
    createJwtSecret {
      id
      secret
    }
  }
`);
const RevokeJwtSecret = graphql(`
  mutation RevokeJwtSecret($id: ID!) {
    revokeJwtSecret(id: $id)
  }
`);
const CreateEndpoint = graphql(`
  mutation CreateEndpoint($input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) {
      secret
      endpoint {
        id
      }
    }
  }
`);
const RotateEndpoint = graphql(`
  mutation RotateEndpoint($id: ID!) {
    rotateWebhookEndpointSecret(id: $id) {
      secret
      endpoint {
        id
      }
    }
  }
`);
const UpdateEndpoint = graphql(`
  mutation UpdateEndpoint($id: ID!, $input: UpdateWebhookEndpointInput!) {
    updateWebhookEndpoint(id: $id, input: $input) {
      id
      status
      events
    }
  }
`);
const DeleteEndpoint = graphql(`
  mutation DeleteEndpoint($id: ID!) {
    deleteWebhookEndpoint(id: $id) {
      id
      deleted
    }
  }
`);
const SendTestWebhook = graphql(`
  mutation SendTestWebhook($type: String!) {
    sendTestWebhook(type: $type) {
      id
      type
    }
  }
`);

type DevelopersData = ResultOf<typeof DevelopersQuery>;
/** A secret to show once: what it is, and its value. */
type Secret = { label: string; value: string };
/** Runs a mutation; on success shows the secret it made, if any, and reads the page again. */
type Act = <D>(mutation: () => Promise<OperationResult<D, any>>, secret?: (data: D) => Secret) => Promise<void>;

export function Developers() {
  const [{ data, error }, refetch] = useQuery({ query: DevelopersQuery });
  const [shown, setShown] = useState<Secret | null>(null);
  const action = useAction();
  const act: Act = async (mutation, secret) => {
    await action.run(mutation, (d) => {
      setShown(secret ? secret(d) : null);
      refetch({ requestPolicy: "network-only" });
    });
  };
  if (!data) return <ErrorNote error={error} />;
  const live = data.viewer.mode === "LIVE";
  const events = data.events.edges.map((e) => e.node);
  return (
    <>
      <h1>Developers</h1>
      <ErrorNote error={action.error} />
      {shown && <ShownOnce label={shown.label} value={shown.value} />}
      <ApiKeys data={data} act={act} />
      <JwtSecrets secrets={data.jwtSecrets.filter((s) => s.livemode === live)} act={act} />
      <WebhookEndpoints endpoints={data.webhookEndpoints.edges.map((e) => e.node)} eventTypes={data.eventTypes} events={events} live={live} act={act} />
      <Section title="Emails">
        <p>
          Every email sent for you in this mode (invoices, receipts, refund links, your team's resets and notices), as it arrived, with where sending it stands.{" "}
          <Link href="/developers/emails">See the emails</Link>
        </p>
      </Section>
      <Section title="Event log">
        <ul class="rows">
          {events.map((e) => (
            <li key={e.id}>
              <strong>{e.type}</strong> <Time iso={e.timestamp} /> <span class="muted">{e.id}</span>
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}

/** This mode's API keys: roll (with the password), revoke, and create one with an IP allowlist (with the password). */
function ApiKeys({ data, act }: { data: DevelopersData; act: Act }) {
  const [, createKey] = useMutation(CreateApiKey);
  const [, rollKey] = useMutation(RollApiKey);
  const [, revokeKey] = useMutation(RevokeApiKey);
  const keyForm = useRef<HTMLFormElement>(null);
  const live = data.viewer.mode === "LIVE";
  const modeWord = live ? "live" : "test";
  const totp = data.viewer.user.totpEnabled;
  const keys = data.apiKeys.filter((k) => k.livemode === live);
  return (
    <Section title="API keys">
      <ul class="rows">
        {keys.map((k) => {
          const name = `the ${modeWord} key ${k.name ? `“${k.name}” ` : ""}sk_${modeWord}_…${k.last4}`;
          return (
            <li key={k.id} data-key={k.id}>
              {k.name && <strong data-key-name>{k.name} </strong>}
              <code>
                sk_{modeWord}_…{k.last4}
              </code>{" "}
              <span class="muted">{k.id}</span>{" "}
              <span class="muted" data-last-used>
                {k.lastUsedAt ? (
                  <>
                    last used <Time iso={k.lastUsedAt} />
                  </>
                ) : (
                  "never used"
                )}
              </span>{" "}
              {k.ipAllowlist.length > 0 && <span>only from {k.ipAllowlist.join(", ")}</span>}{" "}
              {k.revokedAt ? (
                <span class="muted">revoked</span>
              ) : !k.active ? (
                <span class="muted">expired</span>
              ) : (
                <>
                  {k.expiresAt ? (
                    <span class="muted">
                      rolled, works until <Time iso={k.expiresAt} />
                    </span>
                  ) : (
                    <Confirm
                      plain
                      label="Roll (old key works 24 h more)"
                      question={`Roll ${name}? A new key replaces it; this one keeps working for 24 hours unless you revoke it.`}
                      confirm="Yes, roll it"
                      reauthenticate={{ totp }}
                      onConfirm={(v) =>
                        act(
                          () => rollKey({ id: k.id, overlapHours: 24, ...reauthentication(v) }),
                          (d) => ({ label: "New API key", value: d.rollApiKey.secret }),
                        )
                      }
                    />
                  )}{" "}
                  <Confirm
                    label="Revoke"
                    question={`Revoke ${name}? Whatever uses it stops working at once.`}
                    confirm="Yes, revoke it"
                    onConfirm={() => act(() => revokeKey({ id: k.id }))}
                  />
                </>
              )}
            </li>
          );
        })}
      </ul>
      <form ref={keyForm} class="inline" onSubmit={(e) => e.preventDefault()}>
        <label>
          Name (optional)
          <input name="name" maxLength={100} placeholder="Shop backend" />
        </label>
        <label class="grow">
          IP allowlist (optional)
          <input name="ipAllowlist" placeholder="203.0.113.7, 198.51.100.0/24" />
        </label>
        <Confirm
          plain
          label="Create API key"
          question={`Create a new ${modeWord} API key? Its secret is shown once.`}
          confirm="Yes, create it"
          reauthenticate={{ totp }}
          onConfirm={(v) => {
            const values = keyForm.current ? formValues(keyForm.current) : {};
            const ipAllowlist = (values.ipAllowlist ?? "")
              .split(",")
              .map((x) => x.trim())
              .filter(Boolean);
            void act(
              () => createKey({ name: values.name?.trim() || null, ipAllowlist, ...reauthentication(v) }),
              (d) => ({ label: "New API key", value: d.createApiKey.secret }),
            );
          }}
        />
      </form>
    </Section>
  );
}

/** This mode's JWT secrets (for customer tokens): revoke one, create one. */
function JwtSecrets({ secrets, act }: { secrets: DevelopersData["jwtSecrets"]; act: Act }) {
  const [, createJwt] = useMutation(CreateJwtSecret);
  const [, revokeJwt] = useMutation(RevokeJwtSecret);
  return (
    <Section title="JWT secrets (customer tokens)">
      <ul class="rows">
        {secrets.map((s) => (
          <li key={s.id}>
            <code>{s.id}</code> <Time iso={s.createdAt} />{" "}
            {s.revokedAt ? (
              <span class="muted">revoked</span>
            ) : (
              <Confirm
                label="Revoke"
                question={`Revoke the JWT secret ${s.id}? Customer tokens signed with it stop working at once.`}
                confirm="Yes, revoke it"
                onConfirm={() => act(() => revokeJwt({ id: s.id }))}
              />
            )}
          </li>
        ))}
      </ul>
      <button
        type="button"
        onClick={() =>
          act(
            () => createJwt({}),
            (d) => ({ label: `JWT secret ${d.createJwtSecret.id}`, value: d.createJwtSecret.secret }),
          )
        }
      >
        Create JWT secret
      </button>
    </Section>
  );
}

/** The webhook endpoints with their deliveries: rotate the secret, pause, delete, add one, send a test event (test mode). */
function WebhookEndpoints(props: {
  endpoints: readonly DevelopersData["webhookEndpoints"]["edges"][number]["node"][];
  eventTypes: DevelopersData["eventTypes"];
  events: readonly LoggedEvent[];
  live: boolean;
  act: Act;
}) {
  const { act } = props;
  const [, createEndpoint] = useMutation(CreateEndpoint);
  const [, rotateEndpoint] = useMutation(RotateEndpoint);
  const [, updateEndpoint] = useMutation(UpdateEndpoint);
  const [, deleteEndpoint] = useMutation(DeleteEndpoint);
  const [, sendTest] = useMutation(SendTestWebhook);
  return (
    <Section title="Webhook endpoints">
      {props.endpoints.map((ep) => (
        <div key={ep.id} class="endpoint" data-endpoint={ep.id}>
          <p>
            <strong>{ep.url}</strong> <span class="muted">{ep.id}</span> · {ep.events.length ? ep.events.join(", ") : "all events"} · {ep.status}
          </p>
          <p class="actions">
            <Confirm
              plain
              label="Rotate secret"
              question={`Rotate the signing secret of ${ep.url}? Deliveries are signed with the new one too from now, and with the old one for 24 hours more.`}
              confirm="Yes, rotate it"
              onConfirm={() =>
                act(
                  () => rotateEndpoint({ id: ep.id }),
                  (d) => ({ label: "New signing secret", value: d.rotateWebhookEndpointSecret.secret }),
                )
              }
            />
            <button
              type="button"
              class="link"
              onClick={() => act(() => updateEndpoint({ id: ep.id, input: { status: ep.status === "ENABLED" ? "DISABLED" : "ENABLED" } }))}
            >
              {ep.status === "ENABLED" ? "Pause" : "Enable"}
            </button>
            <Confirm
              label="Delete"
              question={`Delete the endpoint ${ep.url}? It gets no more events, and its pending deliveries are dropped.`}
              confirm="Yes, delete it"
              onConfirm={() => act(() => deleteEndpoint({ id: ep.id }))}
            />
          </p>
          <details class="event-types-edit">
            <summary>Choose its event types</summary>
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void act(() => updateEndpoint({ id: ep.id, input: { events: checkedEvents(e.currentTarget) } }));
              }}
            >
              <EventTypePicker types={props.eventTypes} chosen={ep.events} />
              <button type="submit">Save event types</button>
            </form>
          </details>
          <DeliveryLog endpointId={ep.id} events={props.events} />
        </div>
      ))}
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          const url = formValues(e.currentTarget).url ?? "";
          const events = checkedEvents(e.currentTarget);
          void act(
            () => createEndpoint({ input: { url, events } }),
            (d) => ({ label: "Signing secret", value: d.createWebhookEndpoint.secret }),
          );
        }}
      >
        <label class="grow">
          Endpoint URL
          <input name="url" type="url" required placeholder="https://shop.example/hooks" />
        </label>
        <button type="submit">Add endpoint</button>
        <details class="event-types-new">
          <summary>Event types (every type unless you choose some)</summary>
          <EventTypePicker types={props.eventTypes} chosen={[]} />
        </details>
      </form>
      {!props.live && (
        <button type="button" onClick={() => act(() => sendTest({ type: "charge.completed" }))}>
          Send test event (charge.completed)
        </button>
      )}
    </Section>
  );
}

/** The event types an endpoint gets, as checkboxes; none checked means every type. */
function EventTypePicker({ types, chosen }: { types: DevelopersData["eventTypes"]; chosen: readonly string[] }) {
  return (
    <fieldset class="event-types">
      <legend>Send only these events (none checked: every event)</legend>
      {types.map((t) => (
        <label key={t.type} class="check" title={t.description}>
          <input type="checkbox" name="events" value={t.type} defaultChecked={chosen.includes(t.type)} /> {t.type}
        </label>
      ))}
    </fieldset>
  );
}

/** The event types checked in `form`'s picker. */
function checkedEvents(form: HTMLFormElement): string[] {
  return [...form.querySelectorAll<HTMLInputElement>('input[name="events"]:checked')].map((i) => i.value);
}

type LoggedEvent = {
  id: string;
  type: string;
  timestamp: string;
  deliveries: readonly {
    endpointId: string;
    status: string;
    attempts: readonly { attemptedAt: string; statusCode: number | null; error: string | null; latencyMs: number; responseBody: string | null }[];
  }[];
};

/** The recent deliveries to one endpoint, newest first. */
function DeliveryLog({ endpointId, events }: { endpointId: string; events: readonly LoggedEvent[] }) {
  const rows = events.flatMap((e) => e.deliveries.filter((d) => d.endpointId === endpointId).map((d) => ({ event: e, delivery: d })));
  if (rows.length === 0) return <p class="muted small">No deliveries yet.</p>;
  return (
    <ul class="deliveries" aria-label="Deliveries">
      {rows.map(({ event, delivery }) => {
        const last = delivery.attempts.at(-1);
        return (
          <li key={event.id} data-delivery={event.id}>
            {event.type}: <strong>{delivery.status.toLowerCase()}</strong>
            {last && ` · ${last.statusCode ?? last.error} in ${last.latencyMs} ms · `}
            {last && <Time iso={last.attemptedAt} />}
            {delivery.attempts.length > 0 && (
              <details class="attempts">
                <summary>Attempts and responses</summary>
                <ol>
                  {delivery.attempts.map((a) => (
                    <li key={a.attemptedAt} data-attempt>
                      <Time iso={a.attemptedAt} /> · {a.statusCode === null ? `no answer: ${a.error ?? ""}` : `HTTP ${a.statusCode}`} · {a.latencyMs} ms
                      {a.responseBody ? (
                        <pre class="response-body" data-response-body>
                          {a.responseBody}
                        </pre>
                      ) : (
                        a.statusCode !== null && <p class="muted small">The answer had no body.</p>
                      )}
                    </li>
                  ))}
                </ol>
              </details>
            )}
          </li>
        );
      })}
    </ul>
  );
}
