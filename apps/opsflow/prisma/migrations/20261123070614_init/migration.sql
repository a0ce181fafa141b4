-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "event" (
    "domain_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "event_key" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "user_type" TEXT NOT NULL DEFAULT 'USER',
    "user_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_pkey" PRIMARY KEY ("domain_id","event_id")
);

-- CreateIndex
CREATE INDEX "event_domain_id_task_id_created_at_idx" ON "event"("domain_id", "task_id", "created_at");

-- CreateIndex
CREATE INDEX "event_domain_id_workspace_id_created_at_idx" ON "event"("domain_id", "workspace_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "event_domain_id_event_key_key" ON "event"("domain_id", "event_key");
