-- Whether a provider has a verified domain (src/trust/domain.store.ts keeps it in step), so that
-- lists read it with the row; set for the providers already verified.
ALTER TABLE "providers" ADD COLUMN "publisherVerified" BOOLEAN NOT NULL DEFAULT false;
UPDATE "providers" SET "publisherVerified" = true
WHERE EXISTS (SELECT 1 FROM "domain_verifications" AS dv WHERE dv."providerId" = "providers"."id" AND dv."state" = 'VERIFIED');
