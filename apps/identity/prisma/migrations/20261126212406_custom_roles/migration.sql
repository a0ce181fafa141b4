-- CreateTable
CREATE TABLE "role" (
    "role_id" TEXT NOT NULL,
    "domain_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role_type" TEXT NOT NULL,
    "permissions" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "page_access" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "tags" JSONB NOT NULL DEFAULT '{}',
    "state" TEXT NOT NULL DEFAULT 'ENABLED',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "role_pkey" PRIMARY KEY ("role_id")
);

-- CreateIndex
CREATE INDEX "role_domain_id_role_type_idx" ON "role"("domain_id", "role_type");

-- CreateIndex
CREATE UNIQUE INDEX "role_domain_id_name_key" ON "role"("domain_id", "name");

-- CreateIndex
CREATE INDEX "role_binding_domain_id_role_id_idx" ON "role_binding"("domain_id", "role_id");

-- Every role of a domain as the API answers it (role/list, stat): the three managed roles, built in
-- (apps/identity/src/token/roles.ts; the same values, checked by role.spec.ts), for every domain,
-- then the domain's custom roles. Written by hand: Prisma's schema has no views.
CREATE VIEW "role_view" AS
SELECT m.role_id, d.domain_id, m.name, m.role_type, ARRAY['*']::TEXT[] AS permissions, ARRAY['*']::TEXT[] AS page_access,
       '{}'::JSONB AS tags, 'ENABLED'::TEXT AS state, TRUE AS is_managed,
       NULL::TIMESTAMPTZ(3) AS created_at, NULL::TIMESTAMPTZ(3) AS updated_at
FROM "domain" d
CROSS JOIN (VALUES ('managed-domain-admin', 'Domain Admin', 'DOMAIN_ADMIN', 0),
                   ('managed-workspace-owner', 'Workspace Owner', 'WORKSPACE_OWNER', 1),
                   ('managed-workspace-member', 'Workspace Member', 'WORKSPACE_MEMBER', 2)) AS m(role_id, name, role_type, ord)
UNION ALL
SELECT r.role_id, r.domain_id, r.name, r.role_type, r.permissions, r.page_access, r.tags, r.state, FALSE AS is_managed, r.created_at, r.updated_at
FROM "role" r;
