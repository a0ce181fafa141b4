import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '@platform/testing';

/**
 * The supervisor of `npm start` (tools/dev/supervisor.mjs), run as it runs there — a real process
 * supervising real child processes (tools/dev/supervise.mjs) — against small scripts that exit, get
 * killed, or ignore SIGTERM.
 */
const SUPERVISE = path.resolve(__dirname, '../supervise.mjs');

/**
 * A child that counts its runs in a file and follows a plan per run: stay up `ms`, then exit with
 * `code` (or kill itself with `signal`); past the plan it stays up. It prints `run N pid P`, and
 * `term P` when it gets SIGTERM (then exits 0, unless IGNORE_TERM is set).
 */
const CHILD = `
const fs = require('fs');
const f = process.env.COUNT_FILE;
const n = fs.existsSync(f) ? Number(fs.readFileSync(f, 'utf8')) : 0;
fs.writeFileSync(f, String(n + 1));
console.log('run ' + (n + 1) + ' pid ' + process.pid);
process.on('SIGTERM', () => {
  console.log('term ' + process.pid);
  if (!process.env.IGNORE_TERM) process.exit(0);
});
const step = JSON.parse(process.env.PLAN || '[]')[n];
if (step) setTimeout(() => (step.signal ? process.kill(process.pid, step.signal) : process.exit(step.code)), step.ms);
else setInterval(() => {}, 60000);
`;

interface Step {
  ms: number;
  code?: number;
  signal?: string;
}

interface Run {
  proc: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  line(re: RegExp, ms?: number): Promise<string>;
}

const dirs: string[] = [];
const runs: Run[] = [];
afterAll(() => {
  for (const r of runs) if (r.proc.exitCode === null) r.proc.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function supervise(options: object, children: { label: string; plan?: Step[]; env?: Record<string, string> }[]): Run {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'supervisor-'));
  dirs.push(dir);
  const spec = {
    options,
    processes: children.map((c) => ({
      label: c.label,
      command: process.execPath,
      args: ['-e', CHILD],
      env: { COUNT_FILE: path.join(dir, `${c.label}.count`), PLAN: JSON.stringify(c.plan ?? []), ...c.env },
    })),
  };
  writeFileSync(path.join(dir, 'spec.json'), JSON.stringify(spec));
  const proc = spawn(process.execPath, [SUPERVISE, path.join(dir, 'spec.json')], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const collect = (d: Buffer) => lines.push(...d.toString().split('\n').filter(Boolean));
  proc.stdout!.on('data', collect);
  proc.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const run: Run = {
    proc,
    lines,
    exited,
    line: (re, ms = 15_000) => waitFor(() => lines.find((l) => re.test(l)), ms, `a line matching ${re}`, 20),
  };
  runs.push(run);
  return run;
}

const pidsOf = (lines: string[], label: string) => lines.flatMap((l) => l.match(new RegExp(`^\\[start\\] ${label} started \\(pid (\\d+)\\)$`))?.[1] ?? []).map(Number);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the npm start supervisor', () => {
  it('restarts a process that dies, with a doubling delay up to the cap, reset once it stayed up; leaves the others alone', async () => {
    const r = supervise({ initialDelayMs: 100, maxDelayMs: 400, resetAfterMs: 1500 }, [
      {
        label: 'flaky',
        plan: [{ ms: 0, code: 1 }, { ms: 0, code: 2 }, { ms: 0, signal: 'SIGKILL' }, { ms: 0, code: 1 }, { ms: 2000, code: 3 }],
      },
      { label: 'steady' },
    ]);
    await r.line(/flaky exited \(code 3\); restarting in 0\.1 s \(restart #5\)/);
    await r.line(/^run 6 pid \d+$/);

    const restarts = r.lines.filter((l) => l.includes('restarting'));
    expect(restarts).toEqual([
      '[start] flaky exited (code 1); restarting in 0.1 s (restart #1)',
      '[start] flaky exited (code 2); restarting in 0.2 s (restart #2)',
      '[start] flaky exited (signal SIGKILL); restarting in 0.4 s (restart #3)',
      '[start] flaky exited (code 1); restarting in 0.4 s (restart #4)',
      '[start] flaky exited (code 3); restarting in 0.1 s (restart #5)',
    ]);
    // Each restart is a new process; the steady one was started once and never touched.
    expect(new Set(pidsOf(r.lines, 'flaky')).size).toBe(6);
    const [steady] = pidsOf(r.lines, 'steady');
    expect(pidsOf(r.lines, 'steady')).toEqual([steady]);
    expect(r.lines.filter((l) => l.startsWith('run ') && l.endsWith(`pid ${steady}`))).toHaveLength(1);

    // SIGTERM (as Ctrl-C): every child is told to stop and does; nothing is restarted; exit 0.
    const children = [steady, pidsOf(r.lines, 'flaky')[5]];
    r.proc.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    const after = r.lines.slice(r.lines.indexOf('[start] stopping'));
    expect(after.filter((l) => l.includes('started') || l.includes('restarting'))).toEqual([]);
    for (const pid of children) {
      expect(r.lines).toContain(`term ${pid}`);
      expect(alive(pid)).toBe(false);
    }
  }, 30_000);

  it('Ctrl-C while a restart is pending restarts nothing; a child that ignores SIGTERM is killed', async () => {
    const r = supervise({ initialDelayMs: 60_000, maxDelayMs: 60_000, stopTimeoutMs: 500 }, [
      { label: 'dies', plan: [{ ms: 0, code: 1 }] },
      { label: 'stubborn', env: { IGNORE_TERM: '1' } },
    ]);
    await r.line(/dies exited \(code 1\); restarting in 60 s \(restart #1\)/);
    const [stubborn] = pidsOf(r.lines, 'stubborn');
    await r.line(new RegExp(`^run 1 pid ${stubborn}$`));
    r.proc.kill('SIGINT');
    expect(await r.exited).toBe(0);
    expect(r.lines).toContain(`term ${stubborn}`);
    expect(r.lines).toContain('[start] stubborn did not stop in 0.5 s; killing it');
    expect(alive(stubborn)).toBe(false);
    expect(pidsOf(r.lines, 'dies')).toHaveLength(1);
  }, 30_000);
});
