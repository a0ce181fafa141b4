import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { ProjectRow } from './repository';

export type ProjectType = 'PRIVATE' | 'PUBLIC';

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

/** A stored row as ProjectInfo (upstream's fields the platform does not keep answered empty). */
export function toProjectInfo(p: ProjectRow) {
  return {
    project_id: p.project_id,
    name: p.name,
    project_type: (p.project_type === 'PUBLIC' ? 'PUBLIC' : 'PRIVATE') as ProjectType,
    tags: (p.tags ?? {}) as Record<string, unknown>,
    users: p.users ?? [],
    created_by: p.created_by ?? '',
    reference_id: '',
    is_managed: false,
    domain_id: p.domain_id,
    workspace_id: p.workspace_id,
    project_group_id: p.project_group_id,
    trusted_account_id: '',
    created_at: isoOrEmpty(p.created_at),
    last_synced_at: '',
  };
}
