import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';
import { SYNC_MODES } from './source';

/** SchemaInfo (the contract): `sync_options` as stored (`{github: {...}}` / `{gitlab: {...}}`, `{}` with NONE). */
export const SchemaInfo = z
  .strictObject({
    schema_id: z.string(),
    name: z.string(),
    sync_mode: z.enum(SYNC_MODES),
    sync_options: structOut,
    schema: structOut,
    labels: z.array(z.unknown()),
    tags: structOut,
    remote_repository: structOut,
    domain_id: z.string(),
    created_at: timestamp,
  })
  .meta({ id: 'SchemaInfo' });

/** SchemasInfo: the list message. */
export const SchemasInfo = listOf(SchemaInfo).meta({ id: 'SchemasInfo' });
