-- AlterTable
ALTER TABLE "project" ADD COLUMN     "users" TEXT[] DEFAULT ARRAY[]::TEXT[];
