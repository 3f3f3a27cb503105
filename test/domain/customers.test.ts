import { afterAll, expect, it } from "vitest";
import { createSchema } from "../../src/domain/customer-requests.js";
import { createCustomer, getCustomer } from "../../src/domain/customers.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { parseInput } from "../../src/domain/validation.js";
import { freshDatabase } from "../helpers/harness.js";

const fresh = await freshDatabase();
afterAll(() => fresh.drop());

it("getCustomer's SQL returns exactly what the Prisma model does, field for field", async () => {
  const { prisma } = fresh.db;
  const { merchant } = await createMerchant(prisma, { name: "Shop" }, { feeBps: 100 });
  const scope = { merchantId: merchant.id, livemode: false };
  const created = await createCustomer(
    prisma,
    scope,
    parseInput(createSchema, {
      email: "Ada@Example.com",
      name: "Ada",
      phone: "+44 20 7946 0000",
      address: { line1: "1 Road", country: "gb" },
      companyName: "Engines Ltd",
      taxId: "GB123",
      description: "first",
      metadata: { tier: "gold", n: "1" },
    }),
  );
  const viaModel = await prisma.customer.findUniqueOrThrow({ where: { id: created.id } });
  expect(await getCustomer(prisma, scope, created.id)).toStrictEqual(viaModel);
  await expect(getCustomer(prisma, { ...scope, livemode: true }, created.id)).rejects.toMatchObject({ code: "resource_missing" });
});
