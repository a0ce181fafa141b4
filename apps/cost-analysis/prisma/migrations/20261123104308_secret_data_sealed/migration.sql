-- secret_data is stored sealed by the app (libs/secrets: AES-256-GCM with SECRET_ENCRYPTION_KEY, bound to
-- domain_id + data_source_id). SQL cannot seal with the app's key: rows written in plain text before this
-- version are sealed by the backfill, `admin.js secrets seal`, which tools/prisma/migrate.mjs runs after the
-- migrations (prisma/after-migrate.json). Until then the app reads them as they are.

-- AlterTable
ALTER TABLE "data_source" ALTER COLUMN "secret_data" DROP DEFAULT;

COMMENT ON COLUMN "data_source"."secret_data" IS 'sealed: {"sealed":"v1",key_id,iv,ciphertext,auth_tag} (libs/secrets), never answered by the API';
