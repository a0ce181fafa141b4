// CPU used by the processes of a bench, for "CPU per event" breakdowns: a child from /proc, Redis from
// INFO cpu, the Postgres backends serving given databases (the shared WAL writer and checkpointer not
// counted), and the whole machine's busy share from /proc/stat (which also counts other sessions).
import { readFileSync } from 'node:fs';
import { cpuSeconds } from './setup.mjs';

/** Redis's CPU seconds so far (user + sys), from INFO cpu. */
export async function redisCpu(redis) {
  const info = await redis.info('cpu');
  const get = (k) => Number(new RegExp(`${k}:([0-9.]+)`).exec(info)[1]);
  return get('used_cpu_user') + get('used_cpu_sys');
}

/** The pids of the Postgres backends connected to `dbNames` (read once the pools are open). */
export async function pgBackends(pool, dbNames) {
  const { rows } = await pool.query('SELECT pid FROM pg_stat_activity WHERE datname = ANY($1) AND pid <> pg_backend_pid()', [dbNames]);
  return rows.map((r) => r.pid);
}

/** The CPU seconds of those backends so far (a backend that ended counts nothing). */
export function pgCpu(pids) {
  return pids.reduce((sum, pid) => {
    try {
      return sum + cpuSeconds(pid);
    } catch {
      return sum;
    }
  }, 0);
}

/** This process's own CPU seconds so far (the load generator's). */
export function selfCpu() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** The machine's CPU ticks so far, busy and all (first line of /proc/stat). */
export function machineTicks() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + (f[4] || 0); // idle + iowait
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** The busy share of the machine between two machineTicks() readings (0..1 of all its cores). */
export const busyShare = (t0, t1) => (t1.busy - t0.busy) / Math.max(1, t1.total - t0.total);
