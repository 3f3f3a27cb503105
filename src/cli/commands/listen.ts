// `stablegate listen`: forwards a running instance's test events to a local URL, like `stripe
// listen`. It talks to the instance over its API with a key, never to the database (which the
// instance may hold, or which may be a hosted instance's).
import { EVENT_TYPES } from "../../domain/events.js";
import { isIP } from "node:net";
import { type Command, CommandError, required, UsageError } from "../command.js";
import { forwardTargetProblem } from "../forward.js";
import { type InstanceAddress, instanceAddress } from "../instance-fetch.js";
import { listen } from "../listen.js";

/** --events as a list of known types (empty: every type). */
function eventTypes(flag: string | undefined): string[] {
  const types = (flag ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  const unknown = types.find((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown !== undefined) throw new UsageError(`--events: unknown event type ${JSON.stringify(unknown)}; the types are ${EVENT_TYPES.join(", ")}.`);
  return types;
}

/** The test key of --api-key (or --key, as the devnet commands name it) or STABLEGATE_API_KEY; a live key is refused. */
function testKey(flag: string | undefined, fromEnvironment: string | undefined): string {
  const key = flag ?? fromEnvironment;
  if (!key) throw new UsageError("--api-key or --key (or STABLEGATE_API_KEY) is required: a test key, sk_test_….");
  if (key.startsWith("sk_live_")) {
    throw new CommandError("listen forwards test-mode events only: use a test key (sk_test_…). Live events go to your webhook endpoints, not to a laptop.");
  }
  if (!key.startsWith("sk_test_")) throw new UsageError("--api-key (or --key) must be a test secret key (sk_test_…).");
  return key;
}

/** Whether `hostname` (as URL spells it) is this machine: localhost, 127/8 or [::1]. */
function isLoopback(hostname: string): boolean {
  if (hostname === "localhost" || hostname.endsWith(".localhost") || hostname === "[::1]") return true;
  return isIP(hostname) === 4 && hostname.startsWith("127.");
}

/** The instance --url names (checked: http(s), and plain http only to this machine, as the key goes with every request), else the running one. */
function instance(flag: string | undefined, config: Parameters<typeof instanceAddress>[0]): InstanceAddress {
  if (flag === undefined) return instanceAddress(config);
  const url = URL.canParse(flag) ? new URL(flag) : null;
  if (!url || !/^https?:$/.test(url.protocol) || !url.hostname || url.username || url.password || url.search || url.hash) {
    throw new UsageError(`--url must be the instance's base URL, such as https://pay.example.com or http://localhost:4000 (got ${JSON.stringify(flag)}).`);
  }
  if (url.protocol === "http:" && !isLoopback(url.hostname)) {
    throw new UsageError(`--url: plain http to ${url.host} would send your key in clear; use https (http is for localhost only).`);
  }
  return { baseUrl: `${url.origin}${url.pathname.replace(/\/+$/, "")}`, chosenBy: "--url chose this address" };
}

export const listenCommands: Command[] = [
  {
    names: ["listen"],
    usage: `  listen --forward-to URL [--events type,…] [--api-key sk_test_…] [--url BASE]
      Forwards each new test event of the key's merchant (STABLEGATE_API_KEY by default) from the
      running instance (--url: another, e.g. a hosted one) to URL, signed with the whsec_… it prints;
      prints each delivery's status. Ctrl-C stops.`,
    async run({ config, flags }) {
      const forwardTo = required(flags["forward-to"], "--forward-to");
      const problem = forwardTargetProblem(forwardTo);
      if (problem) throw new UsageError(`--forward-to ${problem} (got ${JSON.stringify(forwardTo)}).`);
      const types = eventTypes(flags.events);
      const key = testKey(flags["api-key"] ?? flags.key, config.apiKey);
      const { baseUrl, chosenBy } = instance(flags.url, config);
      const listener = await listen({ baseUrl, chosenBy, key, forwardTo, types, print: (line) => console.log(line) }).catch((e: Error) => {
        throw new CommandError(e.message);
      });
      console.log(`Ready! Your webhook signing secret is ${listener.secret} (^C to quit)`);
      console.log(`Forwarding ${types.length > 0 ? types.join(", ") : "every"} test event from ${baseUrl} to ${forwardTo}`);
      const interrupt = () => void listener.stop();
      // Output piped to a reader that quit (| head): nobody reads the deliveries any more.
      const closed = (e: NodeJS.ErrnoException) => {
        if (e.code === "EPIPE") interrupt();
      };
      process.once("SIGINT", interrupt);
      process.once("SIGTERM", interrupt);
      process.stdout.on("error", closed);
      try {
        await listener.done.catch((e: Error) => {
          throw new CommandError(e.message);
        });
      } finally {
        process.off("SIGINT", interrupt);
        process.off("SIGTERM", interrupt);
        process.stdout.off("error", closed);
      }
    },
  },
];
