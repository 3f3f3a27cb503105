// @ts-check
// EIP-3009 on USDC: the EIP-712 types a wallet signs for `transferWithAuthorization`. Plain
// JavaScript importing nothing, so that the service (chain/authorizations.ts, which verifies and
// relays) and the hosted page (pay/assets/pay.js, served as /pay/assets/eip3009.js, which asks the
// wallet to sign) use one copy: a field out of order in either would make every signature invalid.

/** The fields of a token's EIP-712 domain, as `eth_signTypedData_v4` wants them listed. */
export const TOKEN_DOMAIN_FIELDS = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
];

/** The EIP-712 type of `transferWithAuthorization`'s message (without the domain's own type). */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
};
