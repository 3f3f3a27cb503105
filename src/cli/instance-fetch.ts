// How the CLI talks to a running instance over its API (devnet pay, refund and subscribe, listen): one
// place that joins paths onto the base URL (keeping a base path such as https://host/stablegate), sends
// the key, and words the failures, saying which setting chose the address when it does not answer as
// the service would (a merchant's shell often exports PORT for an app of their own).
import { join } from "node:path";
import type { Config } from "../config.js";
import { runningInstance } from "../instance.js";

/** An instance's base URL and, in words, what chose it (said when it cannot be reached). */
export interface InstanceAddress {
  baseUrl: string;
  chosenBy?: string | undefined;
}

/** What to send: the key (X-API-Key), and a JSON body (then the method defaults to POST). */
export interface InstanceRequest {
  key?: string | undefined;
  method?: string;
  body?: unknown;
}

/** The instance answered with an error: `message` is the API's message (or the status), as is. */
export class InstanceRefusal extends Error {}

/** The running instance's address and which setting chose it: PUBLIC_URL, PORT, DATA_DIR/instance.json, or the default. */
export function instanceAddress(config: Pick<Config, "publicUrl" | "publicUrlGiven" | "portGiven" | "dataDir">): InstanceAddress {
  const { url, source } = runningInstance(config);
  const record = join(config.dataDir, "instance.json");
  const chosenBy = {
    PUBLIC_URL: "PUBLIC_URL chose this address",
    PORT: `PORT=${new URL(url).port} in the environment chose this address; unset it if it is another app's, or pass the service's address`,
    record: `the running npm start recorded this address in ${record}`,
    default: `the default address: neither PUBLIC_URL nor PORT is set and ${record} names no running npm start`,
  }[source];
  return { baseUrl: url, chosenBy };
}

/** `path` (starting with /) under `baseUrl`, its path kept (new URL(path, base) would drop it). */
export function underBaseUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, "")}${path}`;
}

/** Calls `path` of the instance; the JSON answer and the instance's clock (its Date header). Throws InstanceRefusal when it refuses. */
export async function instanceFetch<T>(address: InstanceAddress, path: string, request: InstanceRequest = {}): Promise<{ body: T; date: Date }> {
  const url = underBaseUrl(address.baseUrl, path);
  const why = address.chosenBy === undefined ? "" : ` (${address.chosenBy})`;
  const headers: Record<string, string> = { accept: "application/json", ...(request.key && { "x-api-key": request.key }) };
  const init: RequestInit =
    request.body === undefined
      ? { method: request.method ?? "GET", headers }
      : { method: request.method ?? "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(request.body) };
  const res = await fetch(url, init).catch((e: Error) => {
    throw new Error(`Cannot reach the service at ${url} (${e.message}); is npm start running?${why}`);
  });
  const json = (await res.json().catch(() => null)) as (T & { message?: string }) | null;
  if (json === null) throw new InstanceRefusal(`HTTP ${res.status} from ${url}, not the service's JSON${why}`);
  if (!res.ok) throw new InstanceRefusal(json.message ?? `HTTP ${res.status} from ${url}${why}`);
  return { body: json, date: new Date(res.headers.get("date") ?? Date.now()) };
}
