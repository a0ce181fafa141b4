-- AlterTable
ALTER TABLE "user" ADD COLUMN     "refresh_valid_after" TIMESTAMPTZ(3);
