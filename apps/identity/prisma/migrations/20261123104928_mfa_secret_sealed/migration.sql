-- mfa_secret is stored sealed by the app (libs/secrets: AES-256-GCM with SECRET_ENCRYPTION_KEY, bound to
-- domain_id + user_id), as sealed:v1:<key_id>:<iv>:<ciphertext>:<auth_tag>. SQL cannot seal with the app's
-- key: secrets written in plain text before this version are sealed by the backfill, `admin.js secrets
-- seal`, which tools/prisma/migrate.mjs runs after the migrations (prisma/after-migrate.json). Until then
-- the app reads them as they are. No schema change.
COMMENT ON COLUMN "user"."mfa_secret" IS 'sealed: sealed:v1:key_id:iv:ciphertext:auth_tag (libs/secrets), never answered by the API';
