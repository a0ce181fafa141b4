// The apps as production runs them: built with the production build (tools/build/build-app.mjs) and
// run by the supervisor of `npm start` (tools/dev/supervise.mjs), which restarts a process that dies.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@platform/testing';
import { freePort } from './dependencies';

export const ROOT = path.resolve(__dirname, '../../..');

export function buildApp(app: string): void {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'tools/build/build-app.mjs'), app], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build of ${app} failed: ${r.stderr || r.stdout}`);
}

/** Applies an app's migrations with the project's migration tool (it creates the database). */
export function migrate(app: string, databaseUrl: string): void {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'tools/prisma/migrate.mjs'), '--app', app, '--database-url', databaseUrl], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`migrations of ${app} failed: ${r.stderr || r.stdout}`);
}

export interface ProcessSpec {
  label: string;
  /** dist/apps/<app>/<file>.js */
  app: string;
  file: 'main' | 'worker';
  env: Record<string, string>;
}

/**
 * Runs the processes under the supervisor, its output (and theirs) appended to `logFile`. Reads the
 * supervisor's `[start] <label> started (pid N)` and `[start] <label> exited (...)` lines.
 */
export function supervise(processes: ProcessSpec[], dir: string, logFile: string, baseEnv: Record<string, string>) {
  const specFile = path.join(dir, 'supervise.json');
  writeFileSync(
    specFile,
    JSON.stringify({
      options: { initialDelayMs: 500 },
      processes: processes.map((p) => ({
        label: p.label,
        command: process.execPath,
        args: ['--enable-source-maps', path.join(ROOT, 'dist/apps', p.app, `${p.file}.js`)],
        env: p.env,
        cwd: ROOT,
      })),
    }),
  );
  const env = { ...baseEnv };
  delete env.JEST_WORKER_ID; // the apps' loggers would be silent
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'tools/dev/supervise.mjs'), specFile], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  const collect = (d: Buffer) => {
    appendFileSync(logFile, d);
    const text = partial + d.toString();
    const parts = text.split('\n');
    partial = parts.pop() ?? '';
    for (const l of parts) if (l.startsWith('[start] ')) lines.push(l);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const pids = (label: string) => lines.flatMap((l) => (l.startsWith(`[start] ${label} started (pid `) ? [Number(l.slice(`[start] ${label} started (pid `.length, -1))] : []));
  return {
    /** The supervisor's own lines, in order. */
    lines,
    /** Every pid `label` has had, in order: one per start. */
    pids,
    pid: (label: string) => pids(label).at(-1),
    /** The `exited` lines of `label`. */
    exits: (label: string) => lines.filter((l) => l.startsWith(`[start] ${label} exited `)),
    /** SIGKILLs the process and waits for the supervisor to start it again; answers the new pid. */
    async killAndAwaitRestart(label: string): Promise<number> {
      const before = pids(label).length;
      const pid = pids(label).at(-1)!;
      process.kill(pid, 'SIGKILL');
      await waitFor(() => pids(label).length > before, 30_000, `${label} restarted by the supervisor`, 50);
      return pids(label).at(-1)!;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
export type Supervised = ReturnType<typeof supervise>;

/** The apps of config/modules.json that have a worker. */
const MODULES = JSON.parse(readFileSync(path.join(ROOT, 'config/modules.json'), 'utf8')) as Record<string, { worker: boolean; nodeOptions?: string }>;

export interface RunningApps {
  sup: Supervised;
  /** `http://127.0.0.1:<port>` of each app. */
  url: Record<string, string>;
  dbUrl: Record<string, string>;
  /** The supervisor labels: `<app>` and `<app> worker`. */
  labels: string[];
}

/**
 * Builds `apps`, gives each a database on the private cluster (migrated), and runs each app and its
 * worker under the supervisor with the private Redis, a port in the test's range, and `env` (plus
 * `appEnv[app]`); resolves once every app's /readyz answers 200.
 */
export async function startApps(o: {
  apps: string[];
  pg: { url(database: string): string };
  redisUrl: string;
  dir: string;
  logFile: string;
  env: Record<string, string>;
  appEnv?: Record<string, Record<string, string>>;
}): Promise<RunningApps> {
  for (const app of o.apps) buildApp(app);
  const dbUrl: Record<string, string> = {};
  for (const app of o.apps) {
    dbUrl[app] = o.pg.url(`platform_${app.replace(/-/g, '_')}`);
    migrate(app, dbUrl[app]);
  }
  // The plugin module's endpoint table, which monitoring reads (platform_plugin on its own server) to
  // find published plugins: migrated even when the plugin module does not run (nothing published).
  if (!o.apps.includes('plugin')) migrate('plugin', o.pg.url('platform_plugin'));
  const url: Record<string, string> = {};
  const specs: ProcessSpec[] = [];
  for (const app of o.apps) {
    const port = await freePort();
    url[app] = `http://127.0.0.1:${port}`;
    const env = {
      REDIS_URL: o.redisUrl,
      LOG_LEVEL: 'warn',
      LOG_SYNC: 'true',
      ...o.env,
      PORT: String(port),
      DATABASE_URL: dbUrl[app],
      ...(MODULES[app]?.nodeOptions && { NODE_OPTIONS: MODULES[app].nodeOptions }),
      ...o.appEnv?.[app],
    };
    specs.push({ label: app, app, file: 'main', env });
    // A worker's /metrics on a free port (METRICS_PORT 0): its default, the app's port + 1000, may be another suite's.
    if (existsSync(path.join(ROOT, 'dist/apps', app, 'worker.js'))) specs.push({ label: `${app} worker`, app, file: 'worker', env: { ...env, METRICS_PORT: '0' } });
  }
  const sup = supervise(specs, o.dir, o.logFile, process.env as Record<string, string>);
  try {
    for (const app of o.apps) await waitFor(() => fetch(`${url[app]}/readyz`).then((x) => x.ok, () => false), 60_000, `${app} /readyz`, 100);
  } catch (e) {
    await sup.stop();
    throw new Error(`${(e as Error).message}\n${readFileSync(o.logFile, 'utf8').slice(-4000)}`);
  }
  return { sup, url, dbUrl, labels: specs.map((s) => s.label) };
}
