import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { ARTIFACTS_FILE, compileContracts, serializeArtifacts } from "../../src/chain/contracts/compile.js";

it("the committed artifacts are exactly what the Solidity sources compile to (run `npm run contracts`)", () => {
  expect(readFileSync(ARTIFACTS_FILE, "utf8")).toBe(serializeArtifacts(compileContracts()));
}, 120_000);
