-- AlterTable
ALTER TABLE "event" ADD COLUMN     "additional_info" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- Events recorded before: updated_at is their created_at (events never change).
UPDATE "event" SET "updated_at" = "created_at";
