-- SubscriptionsV1 seen from each chain: whether its code is there (checkout offers only chains
-- that have it), and the relayer's delegations of old keys' permissions to its current key.
ALTER TYPE "RelayerTxKind" ADD VALUE 'DELEGATE';

ALTER TABLE "chain_status" ADD COLUMN "subscriptions_deployed" BOOLEAN;
