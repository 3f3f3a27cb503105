// `stablegate listen`: follows the events of a test key's merchant on a running instance (the
// GraphQL `events` subscription over graphql-ws, a connection the CLI opens, so a laptop behind NAT
// receives a hosted instance's events) and forwards each new one to a local URL, signed with a
// secret of this run (forward.ts).
//
// Invariants:
// - An event is forwarded at most once per run: an id is taken when it first arrives, from the
//   stream or a catch-up, and skipped after.
// - Deliveries go one at a time, in the order events arrived (a catch-up's events come after those
//   the stream already gave).
// - Nothing committed since the run began is lost: after every connection (the first included, as
//   the stream registers only after the socket opens) and after a stream the server ended because
//   it fell behind, GET /v1/events is read back to the last event forwarded, less a margin for
//   events stamped just before their commit (a transaction in flight when the run began commits
//   events stamped before it), never before the run began less that margin.
// - What existed before the run is never forwarded: the first read takes every event visible then
//   back to that same floor, and marks them taken.
// - One delivery's failure (a receiver's error, a print to a closed pipe) is printed and stops none
//   after it.
import { CloseCode, createClient, type FormattedExecutionResult } from "graphql-ws";
import WebSocket from "ws";
import { type EventResource } from "../domain/events.js";
import { newWebhookSecret } from "../webhooks/signature.js";
import { deliveryLine, forwardEvent } from "./forward.js";
import { instanceFetch, InstanceRefusal, underBaseUrl } from "./instance-fetch.js";

/** What `listen` is told by the command. */
export interface ListenOptions {
  /** The instance's base URL (http(s)://host[:port][/path]). */
  baseUrl: string;
  /** What chose `baseUrl`, in words (said when it cannot be reached). */
  chosenBy?: string;
  /** A test-mode secret key (sk_test_…). */
  key: string;
  forwardTo: string;
  /** The event types to forward; empty: every type. */
  types: readonly string[];
  /** Prints one line (the command's stdout). */
  print(line: string): void;
  /** How long to wait before reconnect attempt `retries` (0, 1, …). */
  retryWaitMs?(retries: number): number;
}

/** A running `listen`. */
export interface Listener {
  /** The `whsec_…` every forwarded delivery is signed with (new for each run). */
  secret: string;
  /** Settles when listening stopped: resolves on stop(), rejects when the instance refused the key or the stream. */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** How far before the last forwarded event a catch-up reads (events are stamped just before their commit). */
const CATCH_UP_MARGIN_MS = 10_000;
/** The most pages of 100 events one catch-up reads. */
const CATCH_UP_PAGES = 50;
/** Ids forwarded, remembered to skip repeats. */
const IDS_KEPT = 10_000;
/** How long after a reconnect the catch-up waits, so that the stream it overlaps with is registered first. */
const CATCH_UP_DELAY_MS = 500;

const SUBSCRIPTION = `subscription Listen($types: [String!]) { events(types: $types) { id type timestamp livemode data } }`;

/** The default reconnect wait: 1 s, doubling up to 30 s. */
function backoff(retries: number): number {
  return Math.min(30_000, 1000 * 2 ** retries);
}

interface EventPage {
  data: EventResource[];
  hasMore: boolean;
}

/** GET `path` of the instance with the key; throws the API's message when it refuses. */
async function getJson<T>(options: ListenOptions, path: string): Promise<{ body: T; date: Date }> {
  return instanceFetch<T>(options, path, { key: options.key }).catch((e: Error) => {
    throw e instanceof InstanceRefusal ? new Error(`${new URL(options.baseUrl).origin} refused: ${e.message}`) : e;
  });
}

/** `path` of GET /v1/events: 100 events, newest first, after the one `after` names. */
function eventsPath(after: string | undefined): string {
  return `/v1/events?limit=100${after ? `&startingAfter=${encodeURIComponent(after)}` : ""}`;
}

/**
 * The events there when the run begins: where it begins (the instance's clock), the ids visible
 * back to CATCH_UP_MARGIN_MS before that, and the floor below which catch-ups never read (that
 * point, or the oldest event read when there were too many to read so far back).
 */
async function eventsBefore(options: ListenOptions): Promise<{ began: Date; floor: Date; ids: string[] }> {
  const first = await getJson<EventPage>(options, eventsPath(undefined));
  // The Date header has whole seconds: the run begins at the start of that second, on the instance's clock.
  const began = new Date(Math.floor(first.date.getTime() / 1000) * 1000);
  let floor = new Date(began.getTime() - CATCH_UP_MARGIN_MS);
  const ids: string[] = [];
  let page = first.body;
  for (let read = 1; ; read++) {
    ids.push(...page.data.map((e) => e.id));
    const oldest = page.data.at(-1);
    if (!page.hasMore || !oldest || new Date(oldest.timestamp) < floor) break;
    if (read === CATCH_UP_PAGES) {
      floor = new Date(oldest.timestamp);
      break;
    }
    page = (await getJson<EventPage>(options, eventsPath(oldest.id))).body;
  }
  return { began, floor, ids };
}

/**
 * Starts listening: checks the key against the instance (its clock marks where the run begins), then
 * streams and forwards. Rejects when the instance cannot be reached or refuses the key.
 */
export async function listen(options: ListenOptions): Promise<Listener> {
  const { began, floor, ids } = await eventsBefore(options);
  const secret = newWebhookSecret();
  const forwarder = new Forwarder(options, secret, began, floor);
  // What was there before the run is not new; an event that appears later, stamped as far back as
  // the floor, committed after the first read and is.
  forwarder.skip(ids);
  let stopping = false;
  let finish!: (error?: Error) => void;
  let onConnected!: () => void;
  const connected = new Promise<void>((resolve) => (onConnected = resolve));
  const done = new Promise<void>((resolve, reject) => (finish = (error) => (error ? reject(error) : resolve())));

  const client = createClient({
    url: underBaseUrl(options.baseUrl.replace(/^http/, "ws"), "/graphql"),
    webSocketImpl: WebSocket,
    connectionParams: { "X-API-Key": options.key },
    retryAttempts: Number.POSITIVE_INFINITY,
    retryWait: (retries) => new Promise((r) => setTimeout(r, (options.retryWaitMs ?? backoff)(retries))),
    // A refused key (4403) stays refused; any other drop, or an instance not up yet, is retried.
    shouldRetry: (e) => !(isClose(e) && e.code === CloseCode.Forbidden),
    on: {
      connected: (_socket, _payload, wasRetry) => {
        if (wasRetry) options.print("Reconnected: catching up on events missed meanwhile.");
        forwarder.catchUpSoon();
        onConnected();
      },
      closed: (e) => {
        if (!stopping && isClose(e) && e.code !== CloseCode.Forbidden) options.print(`Connection lost (${e.code}); reconnecting…`);
      },
    },
  });

  const follow = () =>
    client.subscribe<{ events: EventResource }>(
      { query: SUBSCRIPTION, variables: { types: options.types.length > 0 ? [...options.types] : null } },
      {
        next: (result: FormattedExecutionResult<{ events: EventResource }>) => {
          if (result.data) forwarder.take(result.data.events);
        },
        error: (e) => {
          if (stopping) return;
          // A stream the server ended because it fell behind: subscribe again and read back what it missed.
          if (isOverflow(e)) {
            forwarder.catchUpSoon();
            unsubscribe = follow();
            return;
          }
          void end(new Error(describe(e)));
        },
        complete: () => void end(new Error("The instance ended the event stream.")),
      },
    );
  let unsubscribe = follow();

  // Stopping lets the delivery under way finish and closes the connection; then `done` settles.
  async function end(error?: Error): Promise<void> {
    if (stopping) return;
    stopping = true;
    unsubscribe();
    await client.dispose();
    await forwarder.idle();
    finish(error);
  }
  // Listening once the first connection is up (or never, when the instance refuses first).
  await Promise.race([connected, done]);
  return { secret, done, stop: () => end() };
}

/** Takes events in, forwards each new one once, in order, and reads back what a dropped connection missed. */
class Forwarder {
  private readonly forwarded = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private latest: Date;

  constructor(
    private readonly options: ListenOptions,
    private readonly secret: string,
    began: Date,
    private readonly floor: Date,
  ) {
    this.latest = began;
  }

  /** Marks events as taken without forwarding them. */
  skip(ids: readonly string[]): void {
    for (const id of ids) this.forwarded.add(id);
  }

  /** Queues `event` for forwarding unless it was taken before or its type is not followed. */
  take(event: EventResource): void {
    const { types } = this.options;
    if (this.forwarded.has(event.id) || (types.length > 0 && !types.includes(event.type))) return;
    this.forwarded.add(event.id);
    if (this.forwarded.size > IDS_KEPT) this.forwarded.delete(this.forwarded.values().next().value!);
    const at = new Date(event.timestamp);
    if (at > this.latest) this.latest = at;
    this.queue = this.queue.then(async () => {
      try {
        const result = await forwardEvent(event, this.options.forwardTo, this.secret);
        this.options.print(deliveryLine(event, this.options.forwardTo, result));
      } catch (e) {
        this.say(`Forwarding ${event.type} ${event.id} failed: ${(e as Error).message}`);
      }
    });
  }

  /** Reads back, shortly, the events committed since the last one forwarded, and takes them oldest first. */
  catchUpSoon(): void {
    setTimeout(() => {
      const since = new Date(Math.max(this.floor.getTime(), this.latest.getTime() - CATCH_UP_MARGIN_MS));
      this.missedSince(since).then(
        (missed) => missed.forEach((e) => this.take(e)),
        (e: Error) => this.say(`Catching up failed: ${e.message}`),
      );
    }, CATCH_UP_DELAY_MS).unref();
  }

  /** Resolves once every queued delivery was made. */
  idle(): Promise<void> {
    return this.queue;
  }

  /** Prints a failure; a print that fails too (stdout closed) is dropped, as nothing else could show it. */
  private say(line: string): void {
    try {
      this.options.print(line);
    } catch {
      // Nowhere left to say it.
    }
  }

  /** The events committed at or after `since`, oldest first (GET /v1/events pages newest first). */
  private async missedSince(since: Date): Promise<EventResource[]> {
    const found: EventResource[] = [];
    let after: string | undefined;
    for (let page = 0; page < CATCH_UP_PAGES; page++) {
      const { body } = await getJson<EventPage>(this.options, eventsPath(after));
      for (const e of body.data) {
        if (new Date(e.timestamp) < since) return found.reverse();
        found.push(e);
      }
      if (!body.hasMore || body.data.length === 0) return found.reverse();
      after = body.data[body.data.length - 1]!.id;
    }
    this.say(`Catching up stopped at the ${found.length} newest events; older ones missed meanwhile are in GET /v1/events.`);
    return found.reverse();
  }
}

function isClose(e: unknown): e is { code: number; reason: string } {
  return typeof e === "object" && e !== null && "code" in e && typeof (e as { code: unknown }).code === "number";
}

function isOverflow(e: unknown): boolean {
  return Array.isArray(e) && e.some((x: { extensions?: { code?: unknown } }) => x.extensions?.code === "subscription_overflow");
}

/** A stream's failure in words: the close reason (the key refused) or the GraphQL errors' messages. */
function describe(e: unknown): string {
  if (isClose(e)) return `The instance closed the connection (${e.code}): ${e.reason}`;
  if (Array.isArray(e)) return e.map((x: { message?: string }) => x.message ?? String(x)).join("; ");
  return e instanceof Error ? e.message : String(e);
}
