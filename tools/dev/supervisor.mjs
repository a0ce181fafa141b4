// The process supervisor of `npm start` (tools/dev/start-all.mjs): runs each app, worker and the gateway
// as a child process and restarts one that dies, with exponential backoff, instead of stopping
// everything. stop() (Ctrl-C, SIGTERM) stops them all, and nothing is restarted while stopping.
import { spawn } from 'node:child_process';

const seconds = (ms) => `${Math.round(ms / 100) / 10} s`;

/**
 * Options (all milliseconds):
 * - initialDelayMs (500): the wait before the first restart of a process; it doubles with each restart
 *   in a row, up to maxDelayMs (30 000);
 * - resetAfterMs (60 000): a process that stayed up this long counts as healthy: its next restart
 *   waits initialDelayMs again;
 * - stopTimeoutMs (12 000): how long stop() waits for a child after SIGTERM before it SIGKILLs it.
 * - log / warn: where `[start] ...` lines go (console.log / console.error).
 */
export function createSupervisor(options = {}) {
  const {
    initialDelayMs = 500,
    maxDelayMs = 30_000,
    resetAfterMs = 60_000,
    stopTimeoutMs = 12_000,
    log = (m) => console.log(`[start] ${m}`),
    warn = (m) => console.error(`[start] ${m}`),
  } = options;
  const procs = [];
  let stopping;

  function launch(p) {
    p.timer = undefined;
    p.startedAt = Date.now();
    // Its own process group: a terminal's Ctrl-C reaches the supervisor only, which stops the children
    // itself — a child never exits before the supervisor knows it is stopping.
    const child = spawn(p.command, p.args, { stdio: 'inherit', ...p.spawnOptions, detached: true });
    p.child = child;
    let settled = false;
    const exited = (code, signal, err) => {
      if (settled) return;
      settled = true;
      p.child = undefined;
      if (stopping) return;
      const uptime = Date.now() - p.startedAt;
      if (uptime >= resetAfterMs) p.streak = 0;
      const delay = Math.min(initialDelayMs * 2 ** p.streak, maxDelayMs);
      p.streak++;
      p.restarts++;
      const why = err ? `failed to start: ${err.message}` : `exited (${signal ? `signal ${signal}` : `code ${code}`})`;
      warn(`${p.label} ${why}; restarting in ${seconds(delay)} (restart #${p.restarts})`);
      p.timer = setTimeout(() => launch(p), delay);
    };
    child.on('error', (err) => exited(null, null, err));
    child.on('exit', (code, signal) => exited(code, signal));
    if (child.pid) log(`${p.label} started (pid ${child.pid})`);
  }

  return {
    /** Starts `command args` under supervision; `spawnOptions` go to child_process.spawn (env, cwd, stdio). */
    add(label, command, args = [], spawnOptions = {}) {
      if (stopping) return;
      const p = { label, command, args, spawnOptions, streak: 0, restarts: 0, child: undefined, timer: undefined, startedAt: 0 };
      procs.push(p);
      launch(p);
    },
    get stopping() {
      return Boolean(stopping);
    },
    /** Stops every child (SIGTERM, then SIGKILL after stopTimeoutMs) and restarts none; resolves once all are gone. */
    stop() {
      stopping ??= (async () => {
        log('stopping');
        for (const p of procs) clearTimeout(p.timer);
        await Promise.all(
          procs.map(async (p) => {
            const child = p.child;
            if (!child || child.exitCode !== null || child.signalCode !== null) return;
            const gone = new Promise((resolve) => child.once('exit', resolve));
            child.kill('SIGTERM');
            const force = setTimeout(() => {
              warn(`${p.label} did not stop in ${seconds(stopTimeoutMs)}; killing it`);
              child.kill('SIGKILL');
            }, stopTimeoutMs);
            await gone;
            clearTimeout(force);
          }),
        );
      })();
      return stopping;
    },
  };
}
