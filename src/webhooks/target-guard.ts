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
  ["192.88.99.0", 24], // 6to4 relay anycast (deprecated): a tunnel entry, never a webhook receiver
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(net, bits, "ipv4");
}
// The tunnels and translators here (IPv4-translated, local-use NAT64, Teredo, 6to4) hand packets to a
// relay or gateway that forwards them to IPv4 hosts, private ones included, chosen by bits these
// rules do not judge; all are deprecated or operator-local, and no webhook receiver needs one.
for (const [net, bits] of [
  ["::", 96], // unspecified, loopback, IPv4-compatible
  ["::ffff:0:0:0", 96], // IPv4-translated (SIIT)
  ["64:ff9b:1::", 48], // local-use NAT64: where the IPv4 address sits depends on the operator's prefix
  ["100::", 64], // discard
  ["2001::", 32], // Teredo (2001:0000::/32 only: the rest of 2001::/16 is ordinary public space)
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(net, bits, "ipv6");
}

/**
 * IPv6 prefixes (the first six 16-bit groups) whose last 32 bits are an IPv4 address that the packet
 * is delivered to: such an address is exactly as public as that IPv4 address, so the IPv4 rules
 * judge it, and a public one stays usable (DNS64 gives IPv4-only hosts such addresses).
 */
const EMBEDDED_IPV4_PREFIXES = [
  [0, 0, 0, 0, 0, 0xffff], // IPv4-mapped ::ffff:0:0/96: the socket connects over IPv4
  [0x64, 0xff9b, 0, 0, 0, 0], // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052)
];

/** True when `address` is loopback, private, link-local or otherwise not a public unicast address. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, "ipv4");
  if (family !== 6) return true;
  const embedded = embeddedIpv4(ipv6Groups(address));
  if (embedded) return NON_PUBLIC.check(embedded, "ipv4");
  return NON_PUBLIC.check(address, "ipv6");
}

/** The IPv4 address that an address with one of EMBEDDED_IPV4_PREFIXES delivers to, else null. */
function embeddedIpv4(groups: number[]): string | null {
  if (!EMBEDDED_IPV4_PREFIXES.some((prefix) => prefix.every((g, i) => groups[i] === g))) return null;
  const [hi, lo] = [groups[6]!, groups[7]!];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** The eight 16-bit groups of a valid IPv6 address, in any of its spellings (`::`, a dotted IPv4 tail, a zone). */
function ipv6Groups(address: string): number[] {
  let text = address.split("%", 1)[0]!;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = (part: string | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const [head, tail] = text.split("::");
  if (tail === undefined) return groups(head);
  const [left, right] = [groups(head), groups(tail)];
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
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
