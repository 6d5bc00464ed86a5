-- The signature check of the agent card a provider was imported from, and that card as signed.
ALTER TABLE "providers" ADD COLUMN "cardSignature" JSONB;
ALTER TABLE "providers" ADD COLUMN "signedCard" JSONB;
