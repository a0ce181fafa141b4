-- Ids that differ only in case ('Admin' beside 'admin') are one id (issue #27): the services refuse a
-- case variant of an existing id, and these indexes settle two creates at once. Written by hand:
-- Prisma's schema language has no expression indexes (schema.prisma is unchanged). A database that
-- already holds case variants fails here, naming the pair: rename or delete one, then migrate again.
CREATE UNIQUE INDEX "user_domain_id_lower_user_id_key" ON "user" ("domain_id", lower("user_id"));
CREATE UNIQUE INDEX "workspace_domain_id_lower_workspace_id_key" ON "workspace" ("domain_id", lower("workspace_id"));
CREATE UNIQUE INDEX "project_domain_id_lower_project_id_key" ON "project" ("domain_id", lower("project_id"));
CREATE UNIQUE INDEX "domain_lower_domain_id_key" ON "domain" (lower("domain_id"));
