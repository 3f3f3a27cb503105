// The demo merchant seeded on a first `npm start`, so a newcomer has a key to try at once.
import type { Config } from "./config.js";
import type { Prisma } from "./db/client.js";
import { OPERATOR } from "./domain/confirmation.js";
import { randomBase62 } from "./domain/ids.js";
import { createMerchant, type MerchantCreated } from "./domain/merchants.js";
import { createUser } from "./domain/users.js";

/** The devnet's second default account: the demo merchant's test settlement wallet. */
const DEMO_TEST_WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** The demo merchant's dashboard user. */
const DEMO_EMAIL = "demo@example.com";

/** The demo merchant with its credentials, and its dashboard user's password (shown once). */
export interface DemoSeed extends MerchantCreated {
  user: { email: string; password: string };
}

/** Creates the demo merchant and its dashboard user when the database has no merchant yet; null otherwise. */
export async function seedDemoMerchant(prisma: Prisma, config: Config): Promise<DemoSeed | null> {
  if ((await prisma.merchant.count()) > 0) return null;
  const created = await createMerchant(prisma, { name: "Demo Store", testWallet: DEMO_TEST_WALLET }, { feeBps: config.feeBps });
  const password = randomBase62(16);
  await createUser(prisma, created.merchant.id, { email: DEMO_EMAIL, password }, OPERATOR);
  return { ...created, user: { email: DEMO_EMAIL, password } };
}

/** The lines `npm start` prints for a newly seeded demo merchant. */
export function demoBanner(created: DemoSeed, publicUrl: string, devnet: boolean): string {
  const key = created.apiKeys.test.secret;
  return [
    "",
    `Demo merchant created: ${created.merchant.id} ("${created.merchant.name}")`,
    `  Test API key (shown once, keep it): ${key}`,
    `  JWT secret for test mode: kid ${created.jwtSecrets.test.id}, secret ${created.jwtSecrets.test.secret}`,
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
    `  npx stablegate webhooks create ${created.merchant.id} --mode test --url http://localhost:3000/hooks   # prints the whsec_ secret`,
    "",
    `GraphQL: ${publicUrl}/graphql    Settings: npx stablegate --help`,
    "",
  ].join("\n");
}
