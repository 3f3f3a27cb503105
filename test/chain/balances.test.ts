// The hand-made aggregate3 codec of chain/balances.ts against ethers' generic ABI coder: the same
// calldata byte for byte, and the same reading of answers (failures, reverts with data, words that
// are not one uint256), so that speed costs nothing in meaning.
import { Interface, Wallet } from "ethers";
import { expect, it } from "vitest";
import { Multicall3Artifact } from "../../src/chain/artifacts.js";
import { type BalanceQuery, decodeAggregate3, encodeAggregate3 } from "../../src/chain/balances.js";
import { MULTICALL3 } from "../../src/chain/clones.js";

const multicall = new Interface(Multicall3Artifact.abi);
const erc20 = new Interface(["function balanceOf(address) view returns (uint256)"]);
const random = () => Wallet.createRandom().address;

it("encodes aggregate3 exactly as the ABI coder does, for tokens and the native coin", () => {
  const token = random();
  const queries: BalanceQuery[] = Array.from({ length: 7 }, (_, i) => ({ token: i % 3 === 0 ? "native" : token, holder: random() }));
  const calls = queries.map((q) =>
    q.token === "native"
      ? { target: MULTICALL3, allowFailure: true, callData: multicall.encodeFunctionData("getEthBalance", [q.holder]) }
      : { target: q.token, allowFailure: true, callData: erc20.encodeFunctionData("balanceOf", [q.holder]) },
  );
  expect(encodeAggregate3(queries)).toBe(multicall.encodeFunctionData("aggregate3", [calls]));
  expect(encodeAggregate3([])).toBe(multicall.encodeFunctionData("aggregate3", [[]]));
});

it("decodes an answer as the ABI coder reads it: a balance, or null for a failure or anything but one word", () => {
  const results = [
    { success: true, returnData: `0x${123456789n.toString(16).padStart(64, "0")}` },
    { success: false, returnData: "0x" },
    { success: false, returnData: new Interface(["error Error(string)"]).encodeErrorResult("Error", ["nope"]) },
    { success: true, returnData: "0x" },
    { success: true, returnData: `0x${"ff".repeat(64)}` },
    { success: true, returnData: `0x${"ff".repeat(32)}` },
  ];
  const data = multicall.encodeFunctionResult("aggregate3", [results]);
  const expected = (multicall.decodeFunctionResult("aggregate3", data)[0] as { success: boolean; returnData: string }[]).map((r) =>
    r.success && r.returnData.length === 66 ? BigInt(r.returnData) : null,
  );
  expect(decodeAggregate3(data, results.length)).toEqual(expected);
  expect(expected).toEqual([123456789n, null, null, null, null, 2n ** 256n - 1n]);
  expect(() => decodeAggregate3(data, results.length + 1)).toThrow(/answered 6 results for 7 calls/);
});
