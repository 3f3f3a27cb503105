// Compiles the Solidity sources beside this file with the `solc` npm package (WebAssembly, offline).
// `npm run contracts` writes the result to artifacts.json, which is committed; a test recompiles and
// fails when the two differ.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export const CONTRACTS_DIR = fileURLToPath(new URL("../../../src/chain/contracts/", import.meta.url));

/** ABI and creation bytecode of one contract. */
export interface Artifact {
  abi: unknown[];
  bytecode: string;
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

/** Compiles every `.sol` file in the contracts directory; throws on any error or warning. */
export function compileContracts(): Record<string, Artifact> {
  // solc is a development dependency: only this build step loads it.
  const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string };
  const sources = Object.fromEntries(
    readdirSync(CONTRACTS_DIR)
      .filter((f) => f.endsWith(".sol"))
      .sort()
      .map((f) => [f, { content: readFileSync(CONTRACTS_DIR + f, "utf8") }]),
  );
  const input = {
    language: "Solidity",
    sources,
    settings: {
      // Cancun runs on every chain in the registry; flushes run often, so optimise for runtime gas.
      evmVersion: "cancun",
      optimizer: { enabled: true, runs: 1_000_000 },
      // No metadata hash: the bytecode depends on the code alone, so the artifact check is exact.
      metadata: { bytecodeHash: "none", appendCBOR: false },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const problems = (output.errors ?? []).filter((e) => e.severity === "error" || e.severity === "warning");
  if (problems.length > 0) throw new Error(`solc:\n${problems.map((e) => e.formattedMessage).join("\n")}`);
  const artifacts: Record<string, Artifact> = {};
  for (const file of Object.keys(output.contracts).sort()) {
    for (const [name, c] of Object.entries(output.contracts[file]!)) {
      // Interfaces have no code and need no artifact.
      if (c.evm.bytecode.object) artifacts[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
    }
  }
  return artifacts;
}

/** Where the committed artifacts live. */
export const ARTIFACTS_FILE = `${CONTRACTS_DIR}artifacts.json`;

/** The artifacts as committed: one JSON document, stable formatting. */
export function serializeArtifacts(artifacts: Record<string, Artifact>): string {
  return `${JSON.stringify(artifacts, null, 2)}\n`;
}

/** Compiles and writes the committed artifacts file; returns the contract names. */
export function writeArtifacts(): string[] {
  const artifacts = compileContracts();
  writeFileSync(ARTIFACTS_FILE, serializeArtifacts(artifacts));
  return Object.keys(artifacts);
}
