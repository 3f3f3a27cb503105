// The JSON-RPC client every chain job uses: an ethers provider over one or more endpoints
// (CHAIN_<id>_RPC_URL, in order), that behaves well against hosted providers as they really are.
//
// Invariants:
// - Endpoints are used in the order given; one that fails (network error, timeout, HTTP error,
//   429, a response that does not answer the request) cools down and the next one is used, and it
//   is tried again once its cool-down is over. A 429's Retry-After is honoured to the second.
// - Every response is checked against its request before anyone sees it: one result per request,
//   a block of the number or hash that was asked for, a receipt of the transaction asked for, logs
//   inside the asked range, address and event. A response that fails is the endpoint's fault: it is
//   thrown away and asked elsewhere; nothing built on it can reach the database.
// - A batch goes to one endpoint, so blocks and logs read together come from one node's view.
// - An endpoint's URL carries the provider's key: it never appears in an error, a log line or the
//   database. Endpoints are named by their variable and position (`CHAIN_8453_RPC_URL #2`).
import { getBigInt, JsonRpcApiProvider, type JsonRpcError, type JsonRpcPayload, type JsonRpcResult, Network } from "ethers";

/** How long one HTTP request to an endpoint may take. */
const REQUEST_TIMEOUT_MS = 15_000;
/** Cool-down of a failing endpoint: doubles with each failure in a row, up to the maximum. */
const COOLDOWN_MS = 1_000;
const MAX_COOLDOWN_MS = 60_000;
/** Longest Retry-After honoured; beyond it the endpoint is simply cooled down this long. */
const MAX_RETRY_AFTER_MS = 300_000;
/** How long an endpoint that proved to be behind another is passed over. */
const LAGGING_COOLDOWN_MS = 5_000;

/** Why a request could not be answered; the message names endpoints, never their URLs. */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    message: string,
    /** True when asking again later may work (everything here but a malformed request). */
    readonly transient = true,
  ) {
    super(message);
  }
}

const TRANSIENT_CODES = new Set(["TIMEOUT", "NETWORK_ERROR", "SERVER_ERROR", "ECONNRESET", "ECONNREFUSED", "ETIMEDOUT", "EPIPE"]);
// What nodes say when they are busy or a block is still on its way to them.
const NODE_BUSY = /header not found|unknown block|timeout|timed out|busy|try again|temporarily/i;

/**
 * True for RPC failures worth retrying: the endpoints failed or were rate limited, the network
 * broke, or the node said it is busy. Judged from codes and the node's own error, never from the
 * request echoed in an ethers message (a hex string there can hold any digits).
 */
export function isTransientRpcError(e: unknown): boolean {
  if (e instanceof RpcError) return e.transient;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string" && TRANSIENT_CODES.has(code)) return true;
  const { error } = nodeErrorOf(e);
  return error !== null && (isRateLimit(error) || NODE_BUSY.test(String(error.message ?? "")));
}

/** A JSON-RPC error object as a node sent it. */
export interface NodeError {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

/**
 * The node's own error inside an ethers error, and the method it answered. Ethers keeps them in
 * `info` for the codes it recognises and at the top level for the rest ("could not coalesce error").
 */
export function nodeErrorOf(e: unknown): { method: string | null; error: NodeError | null } {
  const err = e as { info?: { payload?: { method?: unknown }; error?: NodeError }; payload?: { method?: unknown }; error?: NodeError };
  const method = err?.info?.payload?.method ?? err?.payload?.method;
  const error = err?.info?.error ?? err?.error;
  return { method: typeof method === "string" ? method : null, error: error && typeof error === "object" ? error : null };
}

/** Calls `fn`, retrying transient RPC errors with exponential backoff (up to `attempts` tries). */
export async function withRpcRetry<T>(fn: () => Promise<T>, attempts = 4, baseDelayMs = 200): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (i >= attempts || !isTransientRpcError(e)) throw e;
      await new Promise((r) => setTimeout(r, baseDelayMs * 2 ** (i - 1)));
    }
  }
}

const LOG_LIMIT = /range|too many|more than|exceed|limit|response size|block count/i;

/**
 * True when a node refused an eth_getLogs for its size: too many blocks, or too many logs in the
 * answer. Hosted providers each word it their own way (-32602 "range 5000 exceeds limit of 2000",
 * -32005 "query returned more than 10000 results", -32614 "eth_getLogs is limited to a 10,000
 * range", "Log response size exceeded…"); the remedy is always a smaller range.
 */
export function isLogRangeError(e: unknown): boolean {
  const { method, error } = nodeErrorOf(e);
  return method === "eth_getLogs" && error !== null && LOG_LIMIT.test(`${String(error.message ?? "")} ${JSON.stringify(error.data ?? "")}`);
}

interface Endpoint {
  url: string;
  label: string;
  /** Passed over for healthy endpoints before this time (epoch ms); still asked when it is the only hope. */
  coolUntil: number;
  /** Never asked before this time: the endpoint said so (429, Retry-After). */
  blockedUntil: number;
  /** Failures in a row. */
  failures: number;
  lastProblem: string | null;
}

/** How an endpoint is doing, for logs and readiness (no URL). */
export interface EndpointHealth {
  endpoint: string;
  healthy: boolean;
  failures: number;
  lastProblem: string | null;
}

export interface ChainRpcOptions {
  /** Called when an endpoint starts or stops failing (for the logs). */
  onHealthChange?: (health: EndpointHealth) => void;
  timeoutMs?: number;
  now?: () => number;
}

type RpcResponse = JsonRpcResult | JsonRpcError;

/** An ethers provider over the endpoints of one chain; see the file comment for what it guarantees. */
export class ChainRpc extends JsonRpcApiProvider {
  private readonly endpoints: Endpoint[];
  /** The endpoint that answered the last request. */
  private current: Endpoint | null = null;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(
    readonly chainId: number,
    urls: readonly string[],
    private readonly options: ChainRpcOptions = {},
  ) {
    super(Network.from(chainId), { staticNetwork: Network.from(chainId), cacheTimeout: -1 });
    if (urls.length === 0) throw new RpcError(`CHAIN_${chainId}_RPC_URL: no endpoint`, false);
    this.endpoints = urls.map((url, i) => ({
      url,
      label: urls.length === 1 ? `CHAIN_${chainId}_RPC_URL` : `CHAIN_${chainId}_RPC_URL #${i + 1}`,
      coolUntil: 0,
      blockedUntil: 0,
      failures: 0,
      lastProblem: null,
    }));
    this.timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
  }

  override async send(method: string, params: unknown[] | Record<string, unknown>): Promise<unknown> {
    await this._start();
    return super.send(method, params);
  }

  /** The endpoints and how each is doing. */
  health(): EndpointHealth[] {
    const now = this.now();
    return this.endpoints.map((e) => ({ endpoint: e.label, healthy: e.coolUntil <= now, failures: e.failures, lastProblem: e.lastProblem }));
  }

  /** Passes over the endpoint that answered last for a moment: it showed a chain behind what we already read. */
  lagging(): void {
    if (this.current && this.endpoints.length > 1) {
      this.current.coolUntil = this.now() + LAGGING_COOLDOWN_MS;
      this.current.lastProblem = "behind another endpoint";
    }
  }

  override async _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<RpcResponse[]> {
    const requests = Array.isArray(payload) ? payload : [payload];
    const body = JSON.stringify(payload);
    const tried = new Set<Endpoint>();
    const problems: string[] = [];
    for (;;) {
      const endpoint = this.pick(tried);
      if (!endpoint) break;
      tried.add(endpoint);
      const outcome = await this.ask(endpoint, requests, body);
      if (Array.isArray(outcome)) {
        this.current = endpoint;
        if (endpoint.failures > 0) this.recovered(endpoint);
        return outcome;
      }
      problems.push(`${endpoint.label}: ${outcome.problem}`);
      this.coolDown(endpoint, outcome.problem, outcome.rateLimited ? (outcome.retryAfterMs ?? null) : undefined);
    }
    const methods = [...new Set(requests.map((r) => r.method))].join(", ");
    const waiting = this.endpoints
      .filter((e) => e.blockedUntil > this.now())
      .map((e) => `${e.label}: rate limited for ${Math.ceil((e.blockedUntil - this.now()) / 1000)} s`);
    throw new RpcError(`no RPC endpoint answered ${methods} (${[...problems, ...waiting].join("; ")})`);
  }

  /**
   * The first endpoint in order that is neither cooling down nor tried yet. When all that may be
   * asked are cooling down, the one that recovers soonest, as this request's first try only. An
   * endpoint that asked us to wait (429) is never asked before its time.
   */
  private pick(tried: Set<Endpoint>): Endpoint | null {
    const now = this.now();
    const allowed = this.endpoints.filter((e) => !tried.has(e) && e.blockedUntil <= now);
    const ready = allowed.find((e) => e.coolUntil <= now);
    if (ready) return ready;
    if (tried.size > 0 || allowed.length === 0) return null;
    return allowed.reduce((a, b) => (b.coolUntil < a.coolUntil ? b : a));
  }

  /** One HTTP exchange with one endpoint: the checked responses, or what went wrong. */
  private async ask(
    endpoint: Endpoint,
    requests: JsonRpcPayload[],
    body: string,
  ): Promise<RpcResponse[] | { problem: string; rateLimited?: boolean; retryAfterMs?: number | null }> {
    let res: Response;
    try {
      res = await fetch(endpoint.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        redirect: "error",
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      return { problem: describeFetchError(e, this.timeoutMs) };
    }
    if (res.status === 429) {
      await res.body?.cancel();
      return { problem: "rate limited (HTTP 429)", rateLimited: true, retryAfterMs: retryAfterMs(res.headers.get("retry-after"), this.now()) };
    }
    let parsed: unknown;
    try {
      parsed = await res.json();
    } catch {
      return { problem: `HTTP ${res.status} without a JSON-RPC answer` };
    }
    const responses = (Array.isArray(parsed) ? parsed : [parsed]) as RpcResponse[];
    // An error for the request as a whole (id null): the endpoint turned the batch away.
    const whole = responses.length === 1 && responses[0]!.id == null && "error" in responses[0]! ? responses[0] : null;
    if (whole && "error" in whole) {
      const rateLimited = isRateLimit(whole.error);
      return rateLimited ? { problem: "rate limited", rateLimited } : { problem: `refused the request (${String(whole.error.message).slice(0, 120)})` };
    }
    if (!res.ok) return { problem: `HTTP ${res.status}` };
    const limited = responses.find((r) => "error" in r && isRateLimit(r.error));
    if (limited && this.endpoints.length > 1) return { problem: "rate limited", rateLimited: true };
    const mismatch = checkResponses(requests, responses, this.chainId);
    if (mismatch) return { problem: `bad response: ${mismatch}` };
    return responses;
  }

  /**
   * Cools an endpoint down after `problem`. `rateLimit` is set for a 429: the endpoint is blocked
   * for its Retry-After (a number) or for the backoff (null) rather than merely passed over.
   */
  private coolDown(endpoint: Endpoint, problem: string, rateLimit?: number | null): void {
    const wasHealthy = endpoint.failures === 0;
    endpoint.failures++;
    const backoff = Math.min(MAX_COOLDOWN_MS, COOLDOWN_MS * 2 ** Math.max(0, endpoint.failures - 1));
    const now = this.now();
    endpoint.coolUntil = now + backoff;
    if (rateLimit !== undefined) endpoint.blockedUntil = now + (rateLimit === null ? backoff : Math.min(rateLimit, MAX_RETRY_AFTER_MS));
    endpoint.coolUntil = Math.max(endpoint.coolUntil, endpoint.blockedUntil);
    endpoint.lastProblem = problem;
    if (wasHealthy) this.options.onHealthChange?.({ endpoint: endpoint.label, healthy: false, failures: endpoint.failures, lastProblem: problem });
  }

  private recovered(endpoint: Endpoint): void {
    endpoint.failures = 0;
    endpoint.coolUntil = 0;
    endpoint.blockedUntil = 0;
    this.options.onHealthChange?.({ endpoint: endpoint.label, healthy: true, failures: 0, lastProblem: endpoint.lastProblem });
  }
}

// Infura: "project ID request rate exceeded"; Alchemy: "Your app has exceeded its compute units per
// second capacity"; most: "rate limit", "Too Many Requests".
const RATE_LIMIT = /rate.?limit|too many requests|rate exceeded|exceeded .{0,40}(quota|credits|capacity)|(quota|credits|capacity) (exceeded|reached)/i;

function isRateLimit(error: { code?: unknown; message?: unknown }): boolean {
  return error.code === 429 || RATE_LIMIT.test(String(error.message ?? ""));
}

/** A fetch failure in words that carry no URL (undici's causes name only the address). */
function describeFetchError(e: unknown, timeoutMs: number): string {
  const err = e as { name?: string; cause?: { code?: string } };
  if (err.name === "TimeoutError" || err.name === "AbortError") return `no answer within ${timeoutMs / 1000} s`;
  return `connection failed (${err.cause?.code ?? err.name ?? "error"})`;
}

/** Retry-After in milliseconds from now: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

const QUANTITY = /^0x[0-9a-fA-F]+$/;
const sameHex = (a: unknown, b: unknown) => typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();

/**
 * What is wrong with `responses` as answers to `requests`, or null when each answers its request:
 * every id once, and results that match what was asked (block number or hash, receipt hash, logs
 * within the range, address and first topic, the chain id).
 */
export function checkResponses(requests: JsonRpcPayload[], responses: RpcResponse[], chainId: number): string | null {
  const byId = new Map<unknown, RpcResponse>();
  for (const r of responses) {
    if (!r || typeof r !== "object" || byId.has(r.id)) return "a response id is missing or repeated";
    byId.set(r.id, r);
  }
  for (const request of requests) {
    const response = byId.get(request.id);
    if (!response) return `no answer to ${request.method}`;
    if (!("result" in response)) continue;
    const problem = checkResult(request.method, request.params as unknown[], response.result, chainId);
    if (problem) return `${request.method}: ${problem}`;
  }
  return null;
}

function checkResult(method: string, params: unknown[], result: unknown, chainId: number): string | null {
  switch (method) {
    case "eth_chainId":
      return getBigInt(result as string) === BigInt(chainId) ? null : `chain ${String(result)}, not ${chainId}`;
    case "eth_getBlockByNumber": {
      if (result === null) return null;
      const block = result as { number?: string; hash?: string; parentHash?: string };
      if (!block.hash || !block.parentHash || !block.number) return "a block without number or hashes";
      const asked = params[0];
      if (typeof asked === "string" && QUANTITY.test(asked) && getBigInt(block.number) !== getBigInt(asked)) {
        return `block ${getBigInt(block.number)} returned for block ${getBigInt(asked)}`;
      }
      return null;
    }
    case "eth_getBlockByHash":
      if (result === null) return null;
      return sameHex((result as { hash?: string }).hash, params[0]) ? null : "a block other than the one asked for";
    case "eth_getTransactionReceipt":
      if (result === null) return null;
      return sameHex((result as { transactionHash?: string }).transactionHash, params[0]) ? null : "a receipt of another transaction";
    case "eth_getLogs":
      return checkLogs(params[0] as LogFilter, result);
  }
  return null;
}

interface LogFilter {
  fromBlock?: string;
  toBlock?: string;
  blockHash?: string;
  address?: string | string[];
  topics?: (string | string[] | null)[];
}

function checkLogs(filter: LogFilter, result: unknown): string | null {
  if (!Array.isArray(result)) return "logs that are not a list";
  const from = filter.fromBlock && QUANTITY.test(filter.fromBlock) ? getBigInt(filter.fromBlock) : null;
  const to = filter.toBlock && QUANTITY.test(filter.toBlock) ? getBigInt(filter.toBlock) : null;
  const addresses = filter.address === undefined ? null : (Array.isArray(filter.address) ? filter.address : [filter.address]).map((a) => a.toLowerCase());
  const topic0 = filter.topics?.[0];
  const topics0 = topic0 == null ? null : (Array.isArray(topic0) ? topic0 : [topic0]).map((t) => t.toLowerCase());
  for (const log of result as { blockNumber?: string; blockHash?: string; address?: string; topics?: string[] }[]) {
    if (!log?.blockNumber || !log.blockHash || !log.address) return "a log without block or address";
    const n = getBigInt(log.blockNumber);
    if ((from !== null && n < from) || (to !== null && n > to)) return `a log of block ${n}, outside the range asked for`;
    if (filter.blockHash && !sameHex(log.blockHash, filter.blockHash)) return "a log of another block";
    if (addresses && !addresses.includes(log.address.toLowerCase())) return "a log of another contract";
    if (topics0 && !topics0.includes(String(log.topics?.[0]).toLowerCase())) return "a log of another event";
  }
  return null;
}
