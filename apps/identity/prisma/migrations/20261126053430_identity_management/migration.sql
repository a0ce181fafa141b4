-- AlterTable
ALTER TABLE "workspace" ADD COLUMN     "changed_at" TIMESTAMPTZ(3),
ADD COLUMN     "created_by" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "is_managed" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "user" ADD COLUMN     "language" TEXT NOT NULL DEFAULT 'en',
ADD COLUMN     "tags" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "timezone" TEXT NOT NULL DEFAULT 'UTC';

-- AlterTable
ALTER TABLE "project" ADD COLUMN     "created_by" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "project_type" TEXT NOT NULL DEFAULT 'PRIVATE';

-- CreateIndex
CREATE INDEX "role_binding_domain_id_role_type_idx" ON "role_binding"("domain_id", "role_type");

-- CreateIndex
CREATE INDEX "project_domain_id_workspace_id_name_idx" ON "project"("domain_id", "workspace_id", "name");
