// The written permission table (.docs/dashboard.md "Roles"): every mutation of the built schema has a
// rule and every rule a mutation, so a mutation added without one fails here (and the schema refuses
// to build); the guard wraps each mutation; `authorize` names the roles that may.
import { buildSchema, GraphQLObjectType, type GraphQLSchema } from "graphql";
import { describe, expect, it } from "vitest";
import { AppError } from "../../src/domain/errors.js";
import { authorize, CAPABILITIES, can, MUTATION_CAPABILITIES, parseRole, ROLE_DESCRIPTIONS, ROLES } from "../../src/domain/permissions.js";
import { guardMutations } from "../../src/graphql/permissions.js";
import { schema } from "../../src/graphql/schema.js";

describe("the permission table", () => {
  it("names every mutation of the built schema, and nothing else", () => {
    const mutations = Object.keys(schema.getMutationType()!.getFields()).sort();
    expect(Object.keys(MUTATION_CAPABILITIES).sort()).toEqual(mutations);
  });

  it("has a description for every role, and roles only the five", () => {
    expect(ROLES).toEqual(["owner", "admin", "developer", "support", "viewer"]);
    for (const role of ROLES) expect(ROLE_DESCRIPTIONS[role]).toMatch(/^[A-Z]/);
    for (const roles of Object.values(CAPABILITIES)) for (const role of roles) expect(ROLES).toContain(role);
  });

  it("gives owners everything, viewers their own account only", () => {
    for (const capability of Object.keys(CAPABILITIES) as (keyof typeof CAPABILITIES)[]) {
      expect(can("owner", capability), capability).toBe(true);
      expect(can("viewer", capability), capability).toBe(capability === "account");
    }
    expect(can("developer", "developers")).toBe(true);
    expect(can("developer", "money")).toBe(false);
    expect(can("support", "money")).toBe(true);
    expect(can("support", "developers")).toBe(false);
    expect(can("admin", "team")).toBe(true);
  });

  it("refuses with 403 permission_denied naming the role and the roles that may", () => {
    expect(() => authorize("admin", "team")).not.toThrow();
    let error: unknown;
    try {
      authorize("support", "team");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "permission_denied" });
    expect((error as Error).message).toBe("Your role (support) may not do this: only owners and admins may. Ask an owner or admin of your team.");
    expect(() => authorize("viewer", "developers")).toThrow("Your role (viewer) may not do this: only owners, admins and developers may.");
  });

  it("reads roles only from the five names", () => {
    expect(parseRole("admin")).toBe("admin");
    for (const value of ["ADMIN", "root", "", null, 1]) expect(parseRole(value)).toBeNull();
  });
});

describe("the schema's guard", () => {
  const withMutations = (names: string[]): GraphQLSchema => buildSchema(`type Query { a: Int } type Mutation { ${names.map((n) => `${n}: Int`).join(" ")} }`);
  const all = Object.keys(MUTATION_CAPABILITIES);

  it("refuses to build with a mutation the table does not name", () => {
    expect(() => guardMutations(withMutations([...all, "launchRockets"]))).toThrow(/Mutations without a rule in MUTATION_CAPABILITIES.*launchRockets/);
  });

  it("refuses to build with a rule for a mutation that does not exist", () => {
    expect(() => guardMutations(withMutations(all.filter((n) => n !== "deleteUser")))).toThrow(/names mutations the schema does not have: deleteUser/);
  });

  it("checks a session's role, not an API key's, and leaves the public steps alone", async () => {
    const guarded = guardMutations(withMutations(all));
    const field = (name: string) => (guarded.getMutationType() as GraphQLObjectType).getFields()[name]!;
    const run = (name: string, principal: unknown) => field(name).resolve!({ [name]: 7 }, {}, { principal } as never, { fieldName: name } as never);
    const session = (role: string) => ({ merchantId: "mer_1", livemode: false, credentialId: "ses_1", userId: "usr_1", role });
    expect(() => run("deleteUser", session("support"))).toThrow(/Your role \(support\) may not do this/);
    expect(run("deleteUser", session("admin"))).toBe(7);
    expect(run("deleteUser", { merchantId: "mer_1", livemode: false, credentialId: "key_1" })).toBe(7);
    expect(run("changePassword", session("viewer"))).toBe(7);
    // A session whose role is unknown has a viewer's power.
    expect(() => run("createCharge", { ...session("x"), role: undefined })).toThrow(/Your role \(viewer\)/);
    // The hosted page's steps keep their own resolvers, unwrapped.
    expect(field("selectPaymentChain").resolve).toBeUndefined();
  });
});
