// The demo merchant seeded on a first `npm start`, so a newcomer has a key to try at once.
// Its credentials are printed once, after the server listens. Invariant: until then they wait in
// DATA_DIR/demo-credentials.json (mode 0600, like the embedded database beside it, which holds the
// service's own secrets), so a first start that cannot listen (its port taken) loses nothing: the next
// start prints them, then deletes the file, and no start after prints them again.
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Config } from "./config.js";
import type { Prisma } from "./db/client.js";
import { OPERATOR } from "./domain/confirmation.js";
import { randomBase62 } from "./domain/ids.js";
import { createMerchant } from "./domain/merchants.js";
import { createUser } from "./domain/users.js";
import { writeFileAtomic } from "./lib/write-file-atomic.js";

/** The devnet's second default account: the demo merchant's test settlement wallet. */
const DEMO_TEST_WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** The demo merchant's dashboard user. */
const DEMO_EMAIL = "demo@example.com";

/** What the banner shows of the demo merchant: its test credentials and its dashboard user's password (shown once). */
export interface DemoCredentials {
  merchantId: string;
  merchantName: string;
  testKey: string;
  jwt: { kid: string; secret: string };
  user: { email: string; password: string };
}

/** The file the demo credentials wait in until the banner has shown them. */
export function demoCredentialsPath(dataDir: string): string {
  return join(resolve(dataDir), "demo-credentials.json");
}

/**
 * The demo credentials not shown yet: those of a demo merchant created now (the database has no merchant),
 * or those a previous start created but could not show (kept in DATA_DIR); null when there are none.
 * Call `demoShown` once they are printed.
 */
export async function seedDemoMerchant(prisma: Prisma, config: Config): Promise<DemoCredentials | null> {
  const path = demoCredentialsPath(config.dataDir);
  if ((await prisma.merchant.count()) > 0) {
    const kept = readKept(path);
    // Kept for another database (this one replaced since): its merchant is not here, so nothing to show.
    if (kept && (await prisma.merchant.count({ where: { id: kept.merchantId } })) === 1) {
      await ensureDemoUser(prisma, kept);
      return kept;
    }
    rmSync(path, { force: true });
    return null;
  }
  // Kept as soon as the merchant and its keys exist, before the user (its password hash takes a
  // while): a start interrupted after that loses nothing, and the next one creates the user it lacks.
  const password = randomBase62(16);
  const created = await createMerchant(prisma, { name: "Demo Store", testWallet: DEMO_TEST_WALLET }, { feeBps: config.feeBps });
  const credentials: DemoCredentials = {
    merchantId: created.merchant.id,
    merchantName: created.merchant.name,
    testKey: created.apiKeys.test.secret,
    jwt: { kid: created.jwtSecrets.test.id, secret: created.jwtSecrets.test.secret },
    user: { email: DEMO_EMAIL, password },
  };
  keep(path, credentials);
  await ensureDemoUser(prisma, credentials);
  return credentials;
}

/** Creates the demo merchant's dashboard user from its kept credentials, unless it exists. */
async function ensureDemoUser(prisma: Prisma, credentials: DemoCredentials): Promise<void> {
  const { merchantId, user } = credentials;
  if ((await prisma.user.count({ where: { merchantId, email: user.email } })) > 0) return;
  await createUser(prisma, merchantId, { email: user.email, password: user.password }, OPERATOR);
}

/** Forgets the kept credentials once the banner has printed them: no later start shows them again. */
export function demoShown(dataDir: string): void {
  rmSync(demoCredentialsPath(dataDir), { force: true });
}

/** Writes `credentials` readable by this user only; whole or not at all (written aside, then renamed). */
function keep(path: string, credentials: DemoCredentials): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomic(path, `${JSON.stringify(credentials)}\n`, { mode: 0o600 });
}

function readKept(path: string): DemoCredentials | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as DemoCredentials;
  } catch {
    return null;
  }
}

/** The lines `npm start` prints for a demo merchant whose credentials were not shown yet. */
export function demoBanner(created: DemoCredentials, publicUrl: string, devnet: boolean): string {
  const key = created.testKey;
  return [
    "",
    `Demo merchant created: ${created.merchantId} ("${created.merchantName}")`,
    `  Test API key (shown once, keep it): ${key}`,
    `  JWT secret for test mode: kid ${created.jwt.kid}, secret ${created.jwt.secret}`,
    `  Dashboard sign-in (shown once): ${created.user.email} / ${created.user.password}`,
    "",
    "Try it:",
    `  curl -s ${publicUrl}/v1/customers -H 'X-API-Key: ${key}' -H 'Content-Type: application/json' \\`,
    `    -d '{"email":"jane@example.com","name":"Jane Doe"}'`,
    "",
    ...(devnet
      ? [
          "Take a payment on the local devnet (chain 31337, test mode):",
          `  curl -s ${publicUrl}/v1/charges -H 'X-API-Key: ${key}' -H 'Content-Type: application/json' -d '{"orderId":"demo-1","amount":"25"}'`,
          "  open the charge's paymentUrl in a browser: pick Local devnet, then Pay with test wallet",
          "  or: npx stablegate devnet pay chrg_…        # pays from the same funded test wallet",
          "",
        ]
      : []),
    "Receive webhooks (signed events) at a URL of yours: stop the server, then",
    `  npx stablegate webhooks create ${created.merchantId} --mode test --url http://localhost:3000/hooks   # prints the whsec_ secret`,
    "",
    `GraphQL: ${publicUrl}/graphql    Settings: npx stablegate --help`,
    "",
  ].join("\n");
}
