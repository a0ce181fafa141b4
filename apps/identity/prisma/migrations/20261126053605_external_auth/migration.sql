-- CreateTable
CREATE TABLE "external_auth" (
    "domain_id" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'ENABLED',
    "plugin_id" TEXT NOT NULL,
    "version" TEXT NOT NULL DEFAULT '',
    "upgrade_mode" TEXT NOT NULL DEFAULT 'AUTO',
    "options" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "secret_data" JSONB,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "external_auth_pkey" PRIMARY KEY ("domain_id")
);
