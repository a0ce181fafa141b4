-- AlterTable
ALTER TABLE "data_source" ADD COLUMN     "warehouse_info" JSONB,
ALTER COLUMN "plugin_info" DROP NOT NULL,
ALTER COLUMN "plugin_info" DROP DEFAULT;
