// The facilitator's verify (x402 v2, scheme `exact` on EVM): whether a payment would settle now, to
// this merchant, for exactly what the route asks. Settle runs the same checks before it spends gas.
//
// Invariants:
// - only the merchant's own x402 address for the key's mode is ever paid (`payTo` and the signed
//   `to` both), on a chain enabled for that mode, in that chain's USDC under its own EIP-712 domain;
// - the signed value is exactly the requirement's amount, and at least X402_MIN_AMOUNT (by default
//   the chain's payout minimum): nobody has the relayer spend its gas on dust;
// - a nonce this service has settled, or the token has used, is refused here, before any gas.
import { getAddress } from "ethers";
import { authorizationSigner, type TokenDomain, type TransferAuthorization, type UsdcAuthorizations } from "../../chain/authorizations.js";
import type { ChainSet, EnabledChain } from "../../chain/chains.js";
import type { Prisma } from "../../db/client.js";
import type { AuthorizationReaders } from "../authorizations.js";
import { formatAmount } from "../money.js";
import { modeName, type Scope } from "../scope.js";
import { type X402Anchor, x402Anchor } from "./anchors.js";
import type { FacilitatorRequest, X402Refusal } from "./requests.js";

/** Seconds an authorization must still be valid for when checked: the time to send it and have it mined (the reference facilitator's margin). */
const VALID_BEFORE_MARGIN_SECONDS = 6n;

/** What the facilitator is bound by: the enabled chains and their tokens, the factory of the x402 addresses, and X402_MIN_AMOUNT. */
export interface X402Deps {
  prisma: Prisma;
  chains: ChainSet;
  readers: AuthorizationReaders;
  factory: string | null | undefined;
  /** X402_MIN_AMOUNT (base units); unset: each chain's payout minimum. */
  minAmount: bigint | null | undefined;
}

/** A payment that passed every check: what settle sends. */
export interface CheckedPayment {
  chain: EnabledChain;
  reader: UsdcAuthorizations;
  anchor: X402Anchor;
  authorization: TransferAuthorization;
  payer: string;
  /** The gas the simulation took: what the day's budget counts until the receipt is known. */
  gasEstimate: bigint;
}

/** The chain a CAIP-2 network names, if it is `eip155:<id>` of a chain enabled for the mode. */
export function chainOfNetwork(chains: ChainSet, livemode: boolean, network: string): EnabledChain | null {
  const id = /^eip155:([1-9]\d{0,9})$/.exec(network)?.[1];
  return (id && chains.forMode(livemode).find((c) => c.chainId === Number(id))) || null;
}

/** The CAIP-2 id of `chainId`. */
export function networkOf(chainId: number): string {
  return `eip155:${chainId}`;
}

/** The least a chain settles: X402_MIN_AMOUNT, else the chain's payout minimum. */
export function x402Minimum(deps: Pick<X402Deps, "minAmount">, chain: EnabledChain): bigint {
  return deps.minAmount ?? chain.payoutMinAmount;
}

const refuse = (reason: X402Refusal["reason"], message: string): X402Refusal => ({ reason, message });

/** Checks `request` for the scope's merchant: the payment, or the first refusal (with the payer when known). */
export async function checkPayment(
  deps: X402Deps,
  scope: Scope,
  request: FacilitatorRequest,
  now = new Date(),
): Promise<{ payment: CheckedPayment } | { refusal: X402Refusal; payer?: string }> {
  const terms = await checkTerms(deps, scope, request);
  if ("refusal" in terms) return terms;
  const { chain, reader, anchor } = terms;
  const { signature, authorization: signed } = request.paymentPayload.payload;
  const payer = signed.from;
  const refused = (refusal: X402Refusal) => ({ refusal, payer });
  const a: TransferAuthorization = { ...signed, signature };
  if (a.to !== anchor.address) {
    return refused(refuse("invalid_exact_evm_payload_recipient_mismatch", `paymentPayload.payload.authorization.to ${a.to} is not payTo ${anchor.address}`));
  }
  if (a.value !== request.paymentRequirements.amount) {
    const message = `paymentPayload.payload.authorization.value ${a.value} is not the required amount ${request.paymentRequirements.amount}`;
    return refused(refuse("invalid_exact_evm_payload_authorization_value_mismatch", message));
  }
  const seconds = BigInt(Math.floor(now.getTime() / 1000));
  if (a.validBefore < seconds + VALID_BEFORE_MARGIN_SECONDS) {
    const message = `paymentPayload.payload.authorization.validBefore ${a.validBefore} has passed, or is less than ${VALID_BEFORE_MARGIN_SECONDS} s away`;
    return refused(refuse("invalid_exact_evm_payload_authorization_valid_before", message));
  }
  if (a.validAfter > seconds) {
    return refused(
      refuse("invalid_exact_evm_payload_authorization_valid_after", `paymentPayload.payload.authorization.validAfter ${a.validAfter} is in the future`),
    );
  }
  const onChain = await checkOnChain(deps, chain, reader, a);
  return "refusal" in onChain ? refused(onChain.refusal) : { payment: { chain, reader, anchor, authorization: a, payer, gasEstimate: onChain.gas } };
}

/** The route's requirements: a chain of the mode, its USDC and domain, the merchant's address, the amount. */
async function checkTerms(
  deps: X402Deps,
  scope: Scope,
  { paymentPayload, paymentRequirements: req }: FacilitatorRequest,
): Promise<{ chain: EnabledChain; reader: UsdcAuthorizations; anchor: X402Anchor } | { refusal: X402Refusal }> {
  if (req.scheme !== "exact") return { refusal: refuse("unsupported_scheme", `paymentRequirements.scheme "${req.scheme}" is not supported: only "exact"`) };
  const accepted = paymentPayload.accepted;
  for (const field of ["scheme", "network", "amount", "asset", "payTo"] as const) {
    if (String(accepted[field]) !== String(req[field])) {
      return { refusal: refuse("invalid_payment_requirements", `paymentPayload.accepted.${field} differs from paymentRequirements.${field}`) };
    }
  }
  const chain = chainOfNetwork(deps.chains, scope.livemode, req.network);
  const reader = chain && deps.readers(chain.chainId);
  if (!chain || !reader) {
    const enabled = deps.chains.forMode(scope.livemode).map((c) => networkOf(c.chainId));
    const message = `paymentRequirements.network "${req.network}" is not enabled for ${modeName(scope.livemode)} mode here (enabled: ${enabled.join(", ") || "none"})`;
    return { refusal: refuse("invalid_network", message) };
  }
  if (req.asset !== getAddress(chain.usdc)) {
    return {
      refusal: refuse("invalid_payment_requirements", `paymentRequirements.asset ${req.asset} is not USDC on ${req.network} (${getAddress(chain.usdc)})`),
    };
  }
  const domain = await reader.domain();
  const domainRefusal = checkDomain(req.extra, domain);
  if (domainRefusal) return { refusal: domainRefusal };
  const minimum = x402Minimum(deps, chain);
  if (req.amount < minimum) {
    const message = `paymentRequirements.amount ${req.amount} is below the least this service settles on ${req.network}, ${minimum} (${formatAmount(minimum)} USDC; X402_MIN_AMOUNT)`;
    return { refusal: refuse("invalid_payment_requirements", message) };
  }
  const anchor = await x402Anchor(deps.prisma, scope, deps.factory);
  if (req.payTo !== anchor.address) {
    const message = `paymentRequirements.payTo ${req.payTo} is not this merchant's ${modeName(scope.livemode)}-mode x402 address ${anchor.address} (GET /v1/x402)`;
    return { refusal: refuse("invalid_exact_evm_payload_recipient_mismatch", message) };
  }
  return { chain, reader, anchor };
}

/** The EIP-712 domain the client signs under must be the token's own (`extra.name`, `extra.version`). */
function checkDomain(extra: FacilitatorRequest["paymentRequirements"]["extra"], domain: TokenDomain): X402Refusal | null {
  for (const field of ["name", "version"] as const) {
    if (extra?.[field] !== domain[field]) {
      const message = `paymentRequirements.extra.${field} must be the token's EIP-712 ${field}, "${domain[field]}" (got ${JSON.stringify(extra?.[field] ?? null)})`;
      return refuse("invalid_payment_requirements", message);
    }
  }
  return null;
}

/** The signature, then what only the database and the chain know: a nonce not settled or used, the balance, a simulation. */
async function checkOnChain(
  deps: X402Deps,
  chain: EnabledChain,
  reader: UsdcAuthorizations,
  a: TransferAuthorization,
): Promise<{ refusal: X402Refusal } | { gas: bigint }> {
  let signer: string | null;
  try {
    signer = authorizationSigner(await reader.domain(), a);
  } catch {
    signer = null;
  }
  if (signer !== a.from) {
    const message = `paymentPayload.payload.signature is not ${a.from}'s for these fields (wrong signer, amount, recipient, nonce, token or chain)`;
    return { refusal: refuse("invalid_exact_evm_payload_signature", message) };
  }
  const [stored, used, balance, simulated] = await Promise.all([
    deps.prisma.x402Payment.findUnique({
      where: { chainId_fromAddress_nonce: { chainId: chain.chainId, fromAddress: a.from, nonce: a.nonce } },
      select: { id: true },
    }),
    reader.used(a.from, a.nonce),
    reader.balance(a.from),
    // The simulation settle needs the gas of too: verify and settle make one call.
    reader.simulate(a),
  ]);
  if (stored || used) {
    const message = `paymentPayload.payload.authorization.nonce has already been ${stored ? "settled" : "used or cancelled"}`;
    return { refusal: refuse("invalid_exact_evm_nonce_already_used", message) };
  }
  if (balance < a.value) return { refusal: refuse("insufficient_funds", `${a.from} holds ${formatAmount(balance)} USDC, less than ${formatAmount(a.value)}`) };
  if ("refusal" in simulated) return { refusal: refuse("invalid_transaction_state", `the token would refuse it now: ${simulated.refusal}`) };
  return simulated;
}
