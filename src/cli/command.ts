// What every CLI command is (its usage lines and what it runs) and what it runs with: the parsed
// flags, its arguments, and the service's pieces, opened only by the commands that use the database.
import type { ParseArgsConfig } from "node:util";
import { ChainSet } from "../chain/chains.js";
import { devnetChain, readDevnetInfo } from "../chain/devnet.js";
import type { Config } from "../config.js";
import { DatabaseLockedError } from "../db/embedded-lock.js";
import type { Services } from "../services.js";

/** Every flag any command takes. */
export const FLAGS = {
  name: { type: "string" },
  "fee-bps": { type: "string" },
  "payment-window-minutes": { type: "string" },
  "underpayment-tolerance-bps": { type: "string" },
  "test-wallet": { type: "string" },
  "live-wallet": { type: "string" },
  "test-webhook-url": { type: "string" },
  "live-webhook-url": { type: "string" },
  mode: { type: "string" },
  url: { type: "string" },
  "forward-to": { type: "string" },
  "api-key": { type: "string" },
  events: { type: "string" },
  "ip-allowlist": { type: "string" },
  email: { type: "string" },
  role: { type: "string" },
  "overlap-hours": { type: "string" },
  rpc: { type: "string" },
  out: { type: "string" },
  wait: { type: "string" },
  "if-present": { type: "boolean", default: false },
  key: { type: "string" },
  chain: { type: "string" },
  "unknown-since": { type: "string" },
  token: { type: "string" },
  detach: { type: "boolean", default: false },
  force: { type: "boolean", default: false },
  late: { type: "boolean", default: false },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const satisfies ParseArgsConfig["options"];

/** The flags as parsed: strings, and booleans with their defaults. */
export type Flags = {
  [K in keyof typeof FLAGS]: (typeof FLAGS)[K] extends { type: "boolean" } ? boolean : string | undefined;
};

/** A command used wrongly: the message, then a pointer to --help. */
export class UsageError extends Error {}
/** A command that could not be carried out; its message says why. */
export class CommandError extends Error {}

/** Rethrows a failure as a CommandError (its message shown as is), keeping a locked database's own error. */
export function commandError(e: Error): never {
  throw e instanceof DatabaseLockedError ? e : new CommandError(e.message);
}

/** What a command runs with. */
export interface CommandContext {
  /** The words the command was called by ("webhooks enable"). */
  name: string;
  config: Config;
  flags: Flags;
  /** The positional arguments after the command's words. */
  args: string[];
  /** The service's pieces on the migrated database (`migrate`: even with AUTO_MIGRATE off); opened once. */
  open(options?: { migrate?: boolean }): Promise<Services>;
  /** Prints `human`, or `data` as JSON with --json. */
  print(human: string, data: unknown): void;
  /** The first argument, named `what` in the error when it is missing. */
  need(what: string): string;
  /** --mode as livemode. */
  mode(): boolean;
}

/** One command: its lines in `stablegate --help` and what it does. */
export interface Command {
  /** The words calling it (several when they share a usage line). */
  names: string[];
  usage: string;
  run(ctx: CommandContext): Promise<void>;
}

/** A flag's value, or a usage error naming it. */
export function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required.`);
  return value;
}

/** --overlap-hours as a request carries it, for the command to parse: the flag's text read as a query parameter is (absent: its default). */
export function overlap(flags: Flags): { overlapHours?: number | string } {
  const text = flags["overlap-hours"];
  if (text === undefined) return {};
  // Digits become the number; anything else goes on as text for the schema to refuse in its words.
  return { overlapHours: /^-?\d+$/.test(text) ? Number(text) : text };
}

/** The chains this service takes payments on, as its configuration (and a running devnet) say. */
export function enabledChains(config: Config): ChainSet {
  return ChainSet.configured(config.chains, config.devnet ? [devnetChain(readDevnetInfo(config.dataDir))] : []);
}
