-- AlterTable
ALTER TABLE "installed_plugin" ADD COLUMN     "plugin_key" TEXT NOT NULL DEFAULT '';

-- Rows published before this migration
UPDATE "installed_plugin" SET "plugin_key" = "supervisor_id" || ' ' || "plugin_id" || ' ' || "version";
