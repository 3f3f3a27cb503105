// `stablegate keys create|roll|revoke` and `stablegate jwt create|revoke`: a merchant's credentials.
import { rollSchema } from "../../domain/api-key-requests.js";
import { createApiKey, revokeApiKey, rollApiKey } from "../../domain/api-keys.js";
import { OPERATOR } from "../../domain/confirmation.js";
import { OPERATOR_ACTOR } from "../../domain/security-events.js";
import { parseInput } from "../../domain/validation.js";
import { createJwtSecret, describeMerchant, revokeJwtSecret } from "../../domain/merchants.js";
import { type Command, overlap, UsageError } from "../command.js";

export const keyCommands: Command[] = [
  {
    names: ["keys create"],
    usage: `  keys create MERCHANT_ID --mode test|live [--name NAME] [--ip-allowlist IP,CIDR…] [--json]
      A new API key (shown once), named NAME (at most 100 characters) when given; with --ip-allowlist
      it works only from those addresses, e.g. --ip-allowlist 203.0.113.7,198.51.100.0/24,2001:db8::/32.`,
    async run({ flags, open, print, need, mode }) {
      const { prisma } = await open();
      const allowlist = flags["ip-allowlist"]?.split(",").filter((entry) => entry.trim() !== "") ?? [];
      const key = await createApiKey(
        prisma,
        (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id,
        mode(),
        allowlist,
        OPERATOR,
        OPERATOR_ACTOR,
        flags.name,
      );
      const only = key.ipAllowlist.length ? `; only from ${key.ipAllowlist.join(", ")}` : "";
      const named = key.name ? ` "${key.name}"` : "";
      print(`${key.secret}   (${key.id}${named}${only}; shown once)`, key);
    },
  },
  {
    names: ["keys roll"],
    usage: `  keys roll KEY_ID [--overlap-hours H]                   A new key like KEY_ID (shown once); KEY_ID keeps
                                                         working for H hours (default 24; 0 = stop now).`,
    async run({ flags, open, print, need }) {
      const { prisma } = await open();
      const id = need("KEY_ID");
      const rolled = await rollApiKey(prisma, id, parseInput(rollSchema, overlap(flags)), OPERATOR, { actor: OPERATOR_ACTOR });
      const until = rolled.previous.expiresAt.toISOString();
      print(`${rolled.key.secret}   (${rolled.key.id}; shown once)\n${id} stops working at ${until}.`, rolled);
    },
  },
  {
    names: ["keys revoke"],
    usage: "  keys revoke KEY_ID                                     Revokes an API key.",
    async run({ open, print, need }) {
      const { prisma } = await open();
      const id = need("KEY_ID");
      if (!(await revokeApiKey(prisma, id, { actor: OPERATOR_ACTOR }))) throw new UsageError(`No active API key ${id}.`);
      print(`Revoked ${id}. Running servers stop accepting it within a few seconds.`, { id, revoked: true });
    },
  },
];

export const jwtCommands: Command[] = [
  {
    names: ["jwt create"],
    usage: "  jwt create MERCHANT_ID --mode test|live [--json]      A new JWT secret for POST /v1/customers/jwt.",
    async run({ open, print, need, mode }) {
      const { prisma } = await open();
      const secret = await createJwtSecret(prisma, (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id, mode());
      print(`kid ${secret.id}  secret ${secret.secret}   (shown once)`, secret);
    },
  },
  {
    names: ["jwt revoke"],
    usage: "  jwt revoke JWK_ID                                      Revokes a JWT secret.",
    async run({ open, print, need }) {
      const { prisma } = await open();
      const id = need("JWK_ID");
      await revokeJwtSecret(prisma, id);
      print(`Revoked ${id}.`, { id, revoked: true });
    },
  },
];
