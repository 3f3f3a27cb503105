-- Webhook endpoints are managed over the API too, where a merchant can say what each one is for.
ALTER TABLE "webhook_endpoints" ADD COLUMN "description" TEXT;
