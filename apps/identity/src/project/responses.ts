import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';

/** ProjectInfo (upstream identity v2). */
export const ProjectInfo = z
  .strictObject({
    project_id: z.string().describe('The project id (`project-…`, or the one the admin CLI was given).'),
    name: z.string().describe('Display name.'),
    project_type: z.enum(['PRIVATE', 'PUBLIC']).describe('PRIVATE: seen by its users and its groups\' users; PUBLIC: by every member of the workspace.'),
    tags: structOut.describe('Free-form labels.'),
    users: z.array(z.string()).describe('Workspace users who see the project and its resources in every module.'),
    created_by: z.string().describe('The user who created it (empty for the admin CLI).'),
    reference_id: z.string().describe('Id in a synced source (always empty: no sync is modelled).'),
    is_managed: z.boolean().describe('Managed by a trusted account sync (always false).'),
    domain_id: z.string().describe('The domain.'),
    workspace_id: z.string().describe('The workspace the project belongs to.'),
    project_group_id: z.string().describe('The project group it is in, or empty.'),
    trusted_account_id: z.string().describe('Trusted account of a synced project (always empty).'),
    created_at: timestamp.describe('When the project was created.'),
    last_synced_at: timestamp.describe('Last sync (always empty).'),
  })
  .meta({ id: 'ProjectInfo' });

export const ProjectsInfo = listOf(ProjectInfo).meta({ id: 'ProjectsInfo' });
