// The SSRF guard: live-mode webhooks never reach loopback, private, link-local or other non-public
// addresses, decided before any connection is opened. Nothing here opens a socket or asks real DNS:
// the resolver is injected and socket connects are watched.
import net from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { checkWebhookTarget, isNonPublicAddress, type Resolver, WebhookTargetError } from "../../src/webhooks/target-guard.js";

const resolver = (table: Record<string, string[]>): Resolver & { asked: string[] } => {
  const asked: string[] = [];
  const fn = async (host: string) => {
    asked.push(host);
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: net.isIP(address) }));
  };
  return Object.assign(fn, { asked });
};

let connects: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  connects = vi.spyOn(net.Socket.prototype, "connect");
});
afterEach(() => {
  expect(connects).not.toHaveBeenCalled();
  connects.mockRestore();
});

describe("live mode", () => {
  const dns = resolver({
    "hooks.example.com": ["93.184.215.14"],
    "localtest.me": ["127.0.0.1"],
    "sneaky.example.com": ["93.184.215.14", "10.1.2.3"],
    "v6.example.com": ["2606:4700::6810:84e5"],
    "internal6.example.com": ["fd00::1"],
    "tunnel.example.com": ["2002:808:808::1"],
    "dns64.example.com": ["64:ff9b::5db8:d70e"],
  });

  it.each([
    ["https://127.0.0.1/hooks", "127.0.0.1"],
    ["https://10.0.0.1/hooks", "10.0.0.1"],
    ["https://[::1]/hooks", "::1"],
    ["https://169.254.169.254/latest/meta-data", "169.254.169.254"],
    ["https://192.168.1.10/", "192.168.1.10"],
    ["https://172.16.5.5/", "172.16.5.5"],
    ["https://100.64.0.1/", "100.64.0.1"],
    ["https://0.0.0.0/", "0.0.0.0"],
    ["https://[::ffff:127.0.0.1]/", "::ffff:7f00:1"],
    ["https://[fe80::1]/", "fe80::1"],
    ["https://localtest.me/hooks", "127.0.0.1"],
    ["https://sneaky.example.com/hooks", "10.1.2.3"],
    ["https://internal6.example.com/", "fd00::1"],
    ["https://[2002:a00:1::1]/", "2002:a00:1::1"],
    ["https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
    ["https://[::ffff:0:a00:1]/", "::ffff:0:a00:1"],
    ["https://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe"],
    ["https://192.88.99.1/", "192.88.99.1"],
    ["https://tunnel.example.com/", "2002:808:808::1"],
  ])("refuses %s (%s) with a clear error", async (url, address) => {
    const error = await checkWebhookTarget(url, true, dns).catch((e) => e);
    expect(error).toBeInstanceOf(WebhookTargetError);
    expect(error.message).toContain(address);
    expect(error.message).toMatch(/private, loopback or link-local/);
  });

  it("refuses plain http, as the redirect rules cannot make it safe", async () => {
    await expect(checkWebhookTarget("http://hooks.example.com/x", true, dns)).rejects.toThrow(/must use https/);
  });

  it("accepts a public address and returns it as the one to connect to", async () => {
    expect(await checkWebhookTarget("https://hooks.example.com/x", true, dns)).toMatchObject({ address: "93.184.215.14", family: 4 });
    expect(await checkWebhookTarget("https://v6.example.com/x", true, dns)).toMatchObject({ address: "2606:4700::6810:84e5", family: 6 });
    expect(await checkWebhookTarget("https://dns64.example.com/x", true, dns)).toMatchObject({ address: "64:ff9b::5db8:d70e", family: 6 });
  });

  it("reports a name that does not resolve", async () => {
    await expect(checkWebhookTarget("https://nowhere.invalid/x", true, dns)).rejects.toThrow(/could not be resolved \(ENOTFOUND\)/);
  });

  it("refuses URLs with credentials and non-http schemes", async () => {
    await expect(checkWebhookTarget("https://user:pw@hooks.example.com/", true, dns)).rejects.toThrow(/credentials/);
    await expect(checkWebhookTarget("ftp://hooks.example.com/", true, dns)).rejects.toThrow(/http\(s\)/);
    await expect(checkWebhookTarget("not a url", false, dns)).rejects.toThrow(/http\(s\)/);
  });
});

describe("test mode", () => {
  it("allows loopback and private addresses for local development", async () => {
    const dns = resolver({ localhost: ["127.0.0.1"] });
    expect(await checkWebhookTarget("http://localhost:3000/hooks", false, dns)).toMatchObject({ address: "127.0.0.1" });
    expect(await checkWebhookTarget("http://10.0.0.1/hooks", false, dns)).toMatchObject({ address: "10.0.0.1" });
  });
});

describe("isNonPublicAddress", () => {
  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "2606:4700::6810:84e5",
    "::ffff:8.8.8.8",
    "0:0:0:0:0:ffff:808:808",
    // NAT64 (well-known prefix) and IPv4-mapped addresses are judged by the IPv4 address they reach.
    "64:ff9b::8.8.8.8",
    "64:ff9b::808:808",
    // Only 2001:0000::/32 is Teredo: the rest of 2001::/16 is ordinary public space.
    "2001:4860:4860::8888",
    "2001:1::1",
    "2003::1",
  ])("%s is public", (a) => {
    expect(isNonPublicAddress(a)).toBe(false);
  });
  it.each([
    "127.0.0.2",
    "10.255.255.255",
    "172.31.0.1",
    "192.168.0.1",
    "169.254.0.1",
    "224.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fc00::1",
    "fe80::abcd",
    "::ffff:10.0.0.1",
    "::ffff:a00:1",
    "64:ff9b::a00:1",
    "64:ff9b::127.0.0.1",
    "64:ff9b::169.254.169.254",
    "64:ff9b:1::808:808", // local-use NAT64
    "::ffff:169.254.169.254",
    "::ffff:0:0",
    "::ffff:0:808:808", // IPv4-translated, even of a public address
    "::ffff:0:10.0.0.1",
    "2002:808:808::1", // 6to4, even of a public address
    "2002:7f00:1::1",
    "2001::1", // Teredo
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "192.88.99.1", // 6to4 relay anycast
    "fe80::1%eth0",
    "not-an-ip",
  ])("%s is not public", (a) => {
    expect(isNonPublicAddress(a)).toBe(true);
  });
});
