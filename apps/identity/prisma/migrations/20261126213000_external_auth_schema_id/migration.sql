-- AlterTable: upstream's schema_id of an external auth plugin's secret_data, sent to its authorize
ALTER TABLE "external_auth" ADD COLUMN "schema_id" TEXT NOT NULL DEFAULT '';
