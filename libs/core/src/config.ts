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

/** The seven modules, their default ports and path prefixes: the one route table of the platform. */
export const MODULES = {
  identity: { port: 8101, versions: ['v1', 'v2'], worker: false },
  'cost-analysis': { port: 8102, versions: ['v1'], worker: true },
  statistics: { port: 8103, versions: ['v1'], worker: false },
  repository: { port: 8104, versions: ['v2'], worker: false },
  monitoring: { port: 8105, versions: ['v1'], worker: true },
  inventory: { port: 8106, versions: ['v1'], worker: false },
  opsflow: { port: 8107, versions: ['v1'], worker: false },
} as const;
export type ModuleName = keyof typeof MODULES;

/** Default database URL of a module: platform_<module> with dashes as underscores. */
export function defaultDatabaseUrl(module: string): string {
  return `postgresql://postgres@127.0.0.1:5432/platform_${module.replace(/-/g, '_')}`;
}

export function defaultRedisUrl(): string {
  return 'redis://127.0.0.1:6379';
}
