import { z } from 'zod';
import { structOut, timestamp } from '@platform/http';

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
