// Server-side request forgery guard: a live-mode webhook may only reach the public internet, never
// the operator's own network (databases, cloud metadata at 169.254.169.254, admin ports). The check
// runs on the resolved addresses, and the request then connects to exactly the address checked, so
// a hostname that resolves differently a moment later (DNS rebinding) cannot slip through. Test mode
// allows any address: merchants develop against localhost.
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/** Resolves a hostname to its addresses (injectable: tests never touch real DNS). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** The system resolver (getaddrinfo, like any client would use). */
export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** A webhook URL that may not be called, with the reason. */
export class WebhookTargetError extends Error {}

/** A checked URL and the address a request to it must connect to. */
export interface WebhookTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

const NON_PUBLIC = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8], // "this" network
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(net, bits, "ipv4");
}
for (const [net, bits] of [
  ["::", 96], // unspecified, loopback, IPv4-compatible
  ["64:ff9b::", 96], // NAT64: reaches IPv4 addresses through a gateway
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard
  ["2001:db8::", 32], // documentation
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(net, bits, "ipv6");
}

/** True when `address` is loopback, private, link-local or otherwise not a public unicast address. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, "ipv4");
  if (family !== 6) return true;
  const mapped = mappedIpv4(address);
  if (mapped) return NON_PUBLIC.check(mapped, "ipv4");
  return NON_PUBLIC.check(address, "ipv6");
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d or ::ffff:xxxx:xxxx). */
function mappedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1]!;
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return null;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * Checks that `rawUrl` is an http(s) URL a webhook may be sent to in this mode and returns the
 * address to connect to. Live mode refuses https-less URLs and any that resolve (even partly) to a
 * non-public address; nothing is connected to here.
 */
export async function checkWebhookTarget(rawUrl: string, livemode: boolean, resolve: Resolver = systemResolver): Promise<WebhookTarget> {
  const url = URL.canParse(rawUrl) ? new URL(rawUrl) : null;
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || !url.hostname) {
    throw new WebhookTargetError(`${rawUrl} is not an absolute http(s) URL`);
  }
  if (livemode && url.protocol !== "https:") throw new WebhookTargetError(`${rawUrl}: live-mode webhooks must use https`);
  if (url.username || url.password)
    throw new WebhookTargetError(`${rawUrl}: credentials in the URL are not allowed (they would be sent in clear to logs); use the signature instead`);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  let addresses: { address: string; family: number }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    addresses = await resolve(host).catch((e: Error) => {
      throw new WebhookTargetError(`${url.hostname} could not be resolved (${(e as { code?: string }).code ?? e.message})`);
    });
    if (addresses.length === 0) throw new WebhookTargetError(`${url.hostname} has no addresses`);
  }
  if (livemode) {
    const blocked = addresses.find((a) => isNonPublicAddress(a.address));
    if (blocked) {
      throw new WebhookTargetError(
        `${url.hostname} resolves to ${blocked.address}, a private, loopback or link-local address: live-mode webhooks must reach a public address`,
      );
    }
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
