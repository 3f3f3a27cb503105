#!/usr/bin/env node
// `stablegate`: the settings area. Manages merchants, API keys, JWT secrets, webhook endpoints and
// dashboard users directly in the database (never over the API), applies migrations, and lets an
// operator reconcile the ledger with the chains, sweep stray assets and mark charges reviewed.
// Each command is a module of commands/ ({ usage, run }); this file finds the one called and runs it.
import { parseArgs } from "node:util";
import { pino } from "pino";
import { ConfigError, loadConfig } from "../config.js";
import { DatabaseConnectionError } from "../db/client.js";
import { DatabaseLockedError } from "../db/embedded-lock.js";
import { DatabaseMarkerError } from "../db/marker.js";
import { MigrationError } from "../db/migrate.js";
import { AppError } from "../domain/errors.js";
import { buildServices, type Services } from "../services.js";
import { type Command, CommandError, type CommandContext, FLAGS, type Flags, UsageError } from "./command.js";
import { COMMANDS } from "./commands/index.js";

const USAGE = [
  "Usage: stablegate <command> [options]",
  "",
  "Commands:",
  ...COMMANDS.map((c) => c.usage),
  "",
  "The database is DATABASE_URL when set, else the embedded one in DATA_DIR (default ./.data).",
].join("\n");

/** The CLI prints what it did itself: the service's log lines (a migration applied) would mix into --json output. */
const SILENT = pino({ level: "silent" });

/** The command `positionals` call (its words first), with the arguments after them. */
function findCommand(positionals: string[]): { command: Command; name: string; args: string[] } {
  for (const words of [2, 1]) {
    const name = positionals.slice(0, words).join(" ");
    const command = words <= positionals.length ? COMMANDS.find((c) => c.names.includes(name)) : undefined;
    if (command) return { command, name, args: positionals.slice(words) };
  }
  const name = positionals.join(" ");
  return { command: unknownCommand(name, positionals[0]!), name, args: [] };
}

/**
 * An unknown command opens the database first, as the database's commands do: a database refused at
 * open (locked, lost, behind on migrations) is what it reports, whatever was mistyped after it.
 */
function unknownCommand(name: string, group: string): Command {
  const known = COMMANDS.flatMap((c) => c.names).filter((n) => n.startsWith(`${group} `));
  return {
    names: [],
    usage: "",
    async run({ open }) {
      await open();
      throw new UsageError(`Unknown command: ${name}${known.length ? ` (${known.join(", ")})` : ""}`);
    },
  };
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true });
  if (values.help || positionals.length === 0) return void console.log(USAGE);
  const config = loadConfig();
  const { command, name, args } = findCommand(positionals);
  const flags = values as Flags;
  let services: Promise<Services> | undefined;
  const ctx: CommandContext = {
    name,
    config,
    flags,
    args,
    // Other commands migrate too unless AUTO_MIGRATE is off (then `migrate` is the only migrator).
    open: ({ migrate = false } = {}) => (services ??= buildServices(config, { role: "cli", logger: SILENT, migrate })),
    // Bytes (a merchant's logo) as base64, not as an object with a key per byte.
    print: (human, data) => console.log(flags.json ? JSON.stringify(data, base64Bytes, 2) : human),
    need(what) {
      if (!args[0]) throw new UsageError(`Missing ${what}.`);
      return args[0];
    },
    mode() {
      if (flags.mode !== "test" && flags.mode !== "live") throw new UsageError("--mode must be test or live.");
      return flags.mode === "live";
    },
  };
  try {
    await command.run(ctx);
  } finally {
    // A database that failed to open has nothing to close.
    await (await services?.catch(() => undefined))?.close();
  }
}

function base64Bytes(_key: string, v: unknown): unknown {
  return v instanceof Uint8Array ? Buffer.from(v).toString("base64") : v;
}

const FLAG_OF_PARAM: Record<string, string> = {
  url: "--url",
  events: "--events",
  overlapHours: "--overlap-hours",
  name: "--name",
  feeBps: "--fee-bps",
  paymentWindowMinutes: "--payment-window-minutes",
  underpaymentToleranceBps: "--underpayment-tolerance-bps",
  testWallet: "--test-wallet",
  liveWallet: "--live-wallet",
  testWebhookUrl: "--test-webhook-url",
  liveWebhookUrl: "--live-webhook-url",
  ipAllowlist: "--ip-allowlist",
  email: "--email",
  role: "--role",
  password: "the password on standard input",
  token: "--token",
  chainId: "--chain",
};

main(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof AppError) {
    // A list item's param (events.0) belongs to the list's flag.
    const flag = e.param ? FLAG_OF_PARAM[e.param.split(/[.[]/)[0]!] : undefined;
    console.error(`Error: ${e.message}${flag ? ` (${flag})` : ""}`);
  } else if (
    e instanceof UsageError ||
    e instanceof CommandError ||
    e instanceof ConfigError ||
    e instanceof DatabaseLockedError ||
    e instanceof DatabaseConnectionError ||
    e instanceof DatabaseMarkerError ||
    e instanceof MigrationError
  ) {
    console.error(`Error: ${e.message}`);
    if (e instanceof UsageError) console.error("Run 'stablegate --help' for usage.");
  } else if (e instanceof TypeError && (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    console.error(`Error: ${e.message}\nRun 'stablegate --help' for usage.`);
  } else {
    console.error(e);
  }
  process.exitCode = 1;
});
