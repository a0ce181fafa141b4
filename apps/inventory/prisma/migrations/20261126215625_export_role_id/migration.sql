-- AlterTable
ALTER TABLE "cloud_service_export" ADD COLUMN     "role_id" TEXT NOT NULL DEFAULT '';
