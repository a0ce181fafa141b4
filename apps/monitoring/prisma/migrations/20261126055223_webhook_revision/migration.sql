-- AlterTable
ALTER TABLE "webhook" ADD COLUMN     "revision" BIGINT NOT NULL DEFAULT 0;
