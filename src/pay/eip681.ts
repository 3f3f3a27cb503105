// EIP-681 payment requests: what a wallet reads from the hosted page's QR code.

/** The EIP-681 URI of a USDC `transfer(to, units)` on `chainId`: ethereum:<token>@<chain>/transfer?address=<to>&uint256=<units>. */
export function usdcTransferUri(token: string, chainId: number, to: string, units: bigint): string {
  return `ethereum:${token}@${chainId}/transfer?address=${to}&uint256=${units}`;
}
