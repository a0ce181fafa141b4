// The route table lives at the repository root so the gateway and deployment generators read it too.
// eslint-disable-next-line @nx/enforce-module-boundaries
import modulesJson from '../../../config/modules.json';

/** Reads configuration from the environment; every variable has a documented default or is required. */
export function env(name: string, fallback?: string): string {
  const value = process.env[name];
  if (value !== undefined && value !== '') return value;
  if (fallback !== undefined) return fallback;
  throw new Error(`missing required environment variable ${name}`);
}

export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new Error(`environment variable ${name} must be an integer, got ${raw}`);
  return n;
}

export function envBool(name: string, fallback: boolean): boolean {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  return ['1', 'true', 'yes', 'on'].includes(raw.toLowerCase());
}

/**
 * The eight modules, their default ports and versions: the platform's one route table
 * (config/modules.json), read by the apps, the local gateway and the deployment generators.
 */
export const MODULES = modulesJson as Record<
  'identity' | 'cost-analysis' | 'statistics' | 'repository' | 'monitoring' | 'inventory' | 'opsflow' | 'plugin',
  {
    port: number;
    versions: string[];
    worker: boolean;
    nodeOptions?: string;
    /** Paths that carry a secret (`*` a segment, `:secret` the hidden one): hidden in every log, the app's and the gateway's. */
    secretPaths?: string[];
  }
>;
export type ModuleName = keyof typeof MODULES;

/** Default database URL of a module: platform_<module> with dashes as underscores. */
export function defaultDatabaseUrl(module: string): string {
  return `postgresql://postgres@127.0.0.1:5432/platform_${module.replace(/-/g, '_')}`;
}

export function defaultRedisUrl(): string {
  return 'redis://127.0.0.1:6379';
}
