-- AlterTable
ALTER TABLE "data_source" ADD COLUMN     "next_sync_at" TIMESTAMPTZ(3),
ADD COLUMN     "schedule_hours" INTEGER[] DEFAULT ARRAY[16]::INTEGER[],
ADD COLUMN     "schedule_state" TEXT NOT NULL DEFAULT 'ENABLED';

-- AlterTable
ALTER TABLE "job" ADD COLUMN     "scheduled_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "data_source_next_sync_at_idx" ON "data_source"("next_sync_at");

-- CreateIndex
CREATE UNIQUE INDEX "job_domain_id_data_source_id_scheduled_at_key" ON "job"("domain_id", "data_source_id", "scheduled_at");

-- Existing data sources get upstream's default schedule (the column defaults: ENABLED at 16:00 UTC);
-- the enabled ones are due at the next 16:00 UTC.
UPDATE "data_source" SET "next_sync_at" = CASE
    WHEN date_trunc('day', now() AT TIME ZONE 'UTC') + interval '16 hours' > now() AT TIME ZONE 'UTC'
      THEN (date_trunc('day', now() AT TIME ZONE 'UTC') + interval '16 hours') AT TIME ZONE 'UTC'
    ELSE (date_trunc('day', now() AT TIME ZONE 'UTC') + interval '40 hours') AT TIME ZONE 'UTC'
  END
WHERE "state" = 'ENABLED';
