import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { structOut, timestamp } from '@platform/http';
import type { PluginRow, SupervisorRow } from './repository';

export const PLUGIN_STATES = ['NONE', 'PROVISIONING', 'ACTIVE', 'RE_PROVISIONING', 'ERROR'] as const;

/** upstream's SupervisorInfo (plugin/v1/supervisor.proto); the secret_key is never part of it. */
export const SupervisorInfo = z
  .strictObject({
    supervisor_id: z.string().describe('The supervisor’s id, assigned at its first publish.'),
    name: z.string().describe('The name the supervisor published.'),
    hostname: z.string().describe('The host the supervisor runs on; one supervisor per hostname in a domain.'),
    state: z.enum(['ENABLED']).describe('Always ENABLED: a supervisor that stops is deregistered.'),
    is_public: z.boolean().describe('Whether its plugins serve every domain (published by the operator only).'),
    labels: z.array(z.string()).describe('The labels the supervisor published.'),
    tags: structOut.describe('The tags the supervisor published.'),
    domain_id: z.string().describe('The domain that published the supervisor.'),
    created_at: timestamp.describe('When the supervisor was first published (ISO 8601).'),
    updated_at: timestamp.describe('When the supervisor last published (ISO 8601).'),
  })
  .meta({ id: 'SupervisorInfo', description: 'A supervisor: what runs plugin containers and publishes where they answer.' });

/** libs/http's listOf, with its two fields described. */
const listOf = <T extends z.ZodType>(item: T, what: string) =>
  z.strictObject({
    results: z.array(item).describe(`The page of ${what}.`),
    total_count: z.number().int().min(0).describe(`How many ${what} match, across every page.`),
  });

export const SupervisorsInfo = listOf(SupervisorInfo, 'supervisors').meta({ id: 'SupervisorsInfo', description: 'A page of supervisors and the total count.' });

/** upstream's PluginInfo of supervisor.proto: one plugin version a supervisor runs. */
export const PluginInfo = z
  .strictObject({
    plugin_id: z.string().describe('The plugin’s id, as upstream’s repository names it.'),
    version: z.string().describe('The version of the plugin’s image.'),
    state: z.enum(PLUGIN_STATES).describe('ACTIVE when it answers at its endpoint; only ACTIVE versions are resolved.'),
    endpoint: z.string().describe('Where it answers: grpc://host:port or grpcs://host:port (empty while provisioning).'),
    endpoints: z.array(z.string()).describe('Every replica’s endpoint, when the supervisor published them.'),
    managed: z.boolean().describe('Always false: the platform does not run plugin containers itself.'),
    domain_id: z.string().describe('The domain of the supervisor that published it.'),
    supervisor_id: z.string().describe('The supervisor that published it.'),
    supervisor_name: z.string().describe('That supervisor’s name.'),
  })
  .meta({ id: 'PluginInfo', description: 'One plugin version a supervisor runs, and where it answers.' });

export const PluginsInfo = listOf(PluginInfo, 'published plugins').meta({ id: 'PluginsInfo', description: 'A page of published plugins and the total count.' });

export const PluginEndpoint = z
  .strictObject({
    endpoint: z.string().describe('Where the plugin answers: grpc://host:port or grpcs://host:port.'),
    updated_version: z.string().describe('The version that endpoint serves: with AUTO the newest published, with MANUAL the one asked for (as upstream answers).'),
  })
  .meta({ id: 'PluginEndpoint', description: 'Where a plugin version answers.' });

/** A stored supervisor as SupervisorInfo (never its secret digest). */
export function toSupervisorInfo(r: SupervisorRow) {
  return {
    supervisor_id: r.supervisor_id,
    name: r.name,
    hostname: r.hostname,
    state: 'ENABLED' as const,
    is_public: r.is_public,
    labels: (r.labels ?? []) as string[],
    tags: (r.tags ?? {}) as Record<string, unknown>,
    domain_id: r.domain_id,
    created_at: isoOrEmpty(r.created_at),
    updated_at: isoOrEmpty(r.updated_at),
  };
}

/** A stored plugin version as PluginInfo. */
export function toPluginInfo(r: PluginRow) {
  return {
    plugin_id: r.plugin_id,
    version: r.version,
    state: r.state,
    endpoint: r.endpoint,
    endpoints: (r.endpoints ?? []) as string[],
    managed: false,
    domain_id: r.domain_id,
    supervisor_id: r.supervisor_id,
    supervisor_name: r.supervisor_name,
  };
}
