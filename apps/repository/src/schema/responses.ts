import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { SchemaRow } from './repository';
import { SYNC_MODES } from './source';

type Struct = Record<string, unknown>;

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

/** A stored row as SchemaInfo. */
export function toSchemaInfo(r: SchemaRow) {
  return {
    schema_id: r.schema_id,
    name: r.name,
    sync_mode: r.sync_mode,
    sync_options: (r.sync_options ?? {}) as Struct,
    schema: (r.schema ?? {}) as Struct,
    labels: (r.labels ?? []) as unknown[],
    tags: (r.tags ?? {}) as Struct,
    remote_repository: (r.remote_repository ?? {}) as Struct,
    domain_id: r.domain_id,
    created_at: isoOrEmpty(r.created_at),
  };
}
