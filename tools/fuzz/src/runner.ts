import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { Outcome } from './client';
import { corpusOf, type CorpusCase } from './corpus';
import { caseArb, minimalBody, type Case, type GenEnv, type Role, type Target } from './gen';
import type { Harness } from './harness';
import { describe } from './json';
import { checkAnswer, checkTenancy, type Problem } from './oracle';
import type { JsonSchema } from './schema-arb';
import { DOMAIN, fieldsOf } from './vocab';

export interface FuzzOptions {
  seed: number;
  /** Cases per target. */
  runs: number;
  app?: string;
  /** Only targets whose path contains this. */
  op?: string;
  /** Only this case index (to reproduce one); the corpus is skipped then. */
  caseIndex?: number;
  /** Shrink attempts per distinct failure (0: no shrinking). */
  shrink: number;
  /** Print every case and its answer. */
  verbose?: boolean;
  /** Stop sending cases after this long (the cases left are counted as skipped). */
  budgetMs?: number;
  log: (line: string) => void;
}

export interface Failure {
  signature: string;
  target: string;
  app: string;
  /** The random case's index, or -1 for a corpus case. */
  caseIndex: number;
  /** The corpus case's name. */
  corpus?: string;
  problems: Problem[];
  request: string;
  answer: string;
  output: string;
  shrunk?: { request: string; answer: string; steps: number };
  /** The error the app printed for it (message and first frame in the project's code), when it printed one. */
  cause?: string;
  /** Cases that hit the same signature. */
  count: number;
}

export interface TargetStats {
  app: string;
  /** Corpus cases (the known attacks) sent. */
  corpus: number;
  cases: number;
  failures: number;
  statuses: Record<string, number>;
}

export interface FuzzReport {
  seed: number;
  runs: number;
  cases: number;
  shrinkRuns: number;
  /** Cases not sent because the time budget ran out. */
  skipped: number;
  ms: number;
  restarts: number;
  perTarget: Record<string, TargetStats>;
  failures: Failure[];
}

/** Every operation of every app (from its OpenAPI), and the routes that are not operations. */
export async function discoverTargets(h: Harness): Promise<Target[]> {
  const targets: Target[] = [];
  for (const app of h.platform.apps) {
    const r = await fetch(`${h.platform.urlOf(app)}/${app}/openapi.json`);
    if (!r.ok) throw new Error(`${app}/openapi.json answered ${r.status}`);
    const doc = (await r.json()) as {
      paths: Record<string, { post: { requestBody: { content: Record<string, { schema: JsonSchema }> }; 'x-role-types'?: Role[] } }>;
      components?: { schemas?: Record<string, JsonSchema> };
    };
    const lists: Target[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      const roles = item.post['x-role-types'] ?? 'public';
      // Shared definitions (recursive schemas) live in the document's components: the schema carries them along.
      const schema = { ...item.post.requestBody.content['application/json'].schema, $defs: doc.components?.schemas };
      const t: Target = { app, kind: 'operation', path, schema, roles, fields: fieldsOf(path) };
      targets.push(t);
      if (path.endsWith('/list') && roles !== 'public' && (t.schema!.required ?? []).every((k) => k === 'domain_id') && t.fields.length) lists.push(t);
    }
    // The canary: a list over a database table, with the first role allowed to call it.
    const canary = lists[0];
    if (canary && canary.roles !== 'public') {
      h.setCanary(app, { path: canary.path, body: canary.schema!.properties?.domain_id ? { domain_id: DOMAIN } : {}, role: canary.roles[0] });
    }
  }
  if (h.platform.apps.includes('monitoring')) targets.push({ app: 'monitoring', kind: 'webhook', path: '/monitoring/v1/webhook/{webhook_id}/{access_key}/events', roles: 'public', fields: [] });
  if (h.platform.apps.includes('opsflow')) targets.push({ app: 'opsflow', kind: 'ingest', path: '/opsflow/v1/event/create', roles: 'public', fields: fieldsOf('/opsflow/v1/event/list') });
  if (h.platform.apps.includes('inventory')) targets.push({ app: 'inventory', kind: 'download', path: '/inventory/v1/cloud-service/export/download', roles: 'public', fields: [] });
  return targets;
}

const PRIORITY = ['crash', 'liveness', 'poisoned', 'no-answer', '5xx', 'authz', 'disclosure', 'leak', 'csv-formula', 'envelope'];
const byPriority = (a: Problem, b: Problem) => PRIORITY.indexOf(a.kind) - PRIORITY.indexOf(b.kind);

/** A 32-bit seed per (run seed, target, case), so a case is reproduced alone with --op and --case. */
export function caseSeed(seed: number, target: string, index: number): number {
  return createHash('sha256').update(`${seed}:${target}:${index}`).digest().readInt32LE(0);
}

export function describeCase(c: Case): string {
  const auth = c.auth.kind === 'role' || c.auth.kind === 'wrong-role' || c.auth.kind === 'other-domain' || c.auth.kind === 'expired' ? `${c.auth.kind} ${c.auth.role}` : c.auth.kind === 'garbage' ? `garbage ${JSON.stringify(c.auth.header.slice(0, 40))}` : c.auth.kind;
  const lines = [`${c.method} ${c.path.length > 200 ? `${c.path.slice(0, 200)}…` : c.path}  (auth: ${auth}${c.contentType ? `, ${c.contentType}` : ''})`];
  if (c.body !== undefined) lines.push(`body: ${describe(c.body)}`);
  if (c.notes.length) lines.push(`mutations: ${c.notes.join('; ')}`);
  return lines.join('\n');
}

const describeAnswer = (o: Outcome) => (o.status === undefined ? (o.error ?? 'no answer') : `HTTP ${o.status} ${o.text.slice(0, 500)}`);

interface Result {
  problems: Problem[];
  outcome: Outcome;
  output: string;
}

/** Runs the fuzz cases and answers what it found. */
export async function fuzz(h: Harness, env: GenEnv, targets: Target[], o: FuzzOptions): Promise<FuzzReport> {
  const start = Date.now();
  const chosen = targets.filter((t) => (!o.app || t.app === o.app) && (!o.op || t.path.includes(o.op)));
  if (!chosen.length) throw new Error(`no target matches --app ${o.app ?? '*'} --op ${o.op ?? '*'}`);
  const arbs = new Map(chosen.map((t) => [t.path, caseArb(t, env)]));
  const perTarget: Record<string, TargetStats> = Object.fromEntries(chosen.map((t) => [t.path, { app: t.app, corpus: 0, cases: 0, failures: 0, statuses: {} }]));
  const failures = new Map<string, Failure>();
  let cases = 0;
  let shrinkRuns = 0;
  let skipped = 0;
  const deadline = o.budgetMs ? start + o.budgetMs : Infinity;

  const runCase = async (c: Case): Promise<Result> => {
    const app = c.target.app;
    const mark = h.platform.outputMark();
    const outcome = await h.send(c);
    const problems = [...checkAnswer(outcome, c.method), ...checkTenancy(c, outcome, env.pools)];
    // An export's download URL runs the stored query: follow it.
    if (outcome.status === 200 && c.target.path.endsWith('/cloud-service/export')) {
      const url = safeJson(outcome.text)?.download_url;
      if (typeof url === 'string') {
        const follow = await h.send({ ...c, method: 'GET', path: new URL(url).pathname, auth: { kind: 'none' }, body: undefined, contentType: undefined });
        for (const p of checkAnswer(follow, 'GET')) problems.push({ ...p, detail: `following the download_url: ${p.detail}` });
      }
    }
    let live = await h.probe(app);
    if (live) {
      // Dying or frozen? A process that dies is a crash, not a slow probe.
      await h.settle(app);
      if (h.dead().some((p) => p.app === app)) live = undefined;
      else problems.push(live);
    }
    const dead = h.dead();
    if (dead.length) problems.push({ kind: 'crash', detail: dead.map((p) => `${p.label} exited (code ${p.exited!.code}, signal ${p.exited!.signal})`).join('; ') });
    if (!live && !dead.length) {
      const poisoned = await h.canary(app);
      if (poisoned) problems.push(poisoned);
    }
    problems.sort(byPriority);
    // A dying process's last words (its stack) may still be in the pipe.
    if (problems.length) await new Promise((r) => setTimeout(r, 200));
    const labels = new Set([app, `${app}-worker`, ...dead.map((p) => p.label)]);
    const output = [...labels].map((l) => h.platform.outputSince(mark, l)).join('');
    // Recovery: a process that died is started again; a frozen or poisoned one is killed first.
    for (const a of new Set(dead.map((p) => p.app))) await h.restart(a);
    if (!dead.length && problems.some((p) => p.kind === 'liveness' || p.kind === 'poisoned')) await h.restart(app);
    return { problems, outcome, output };
  };

  const signature = (c: Case, r: Result) => {
    const p = r.problems[0];
    return `${c.target.path} | ${p.kind}${p.status ? ` ${p.status}` : ''}${p.code ? ` ${p.code}` : ''}`;
  };

  const count = (t: Target, r: Result) => {
    const stats = perTarget[t.path];
    const key = r.outcome.status === undefined ? 'none' : String(r.outcome.status);
    stats.statuses[key] = (stats.statuses[key] ?? 0) + 1;
    if (r.problems.length) stats.failures++;
  };

  /** One corpus case (a known attack). */
  const corpusCase = async (t: Target, k: CorpusCase) => {
    const r = await runCase(k.case);
    cases++;
    perTarget[t.path].corpus++;
    count(t, r);
    if (o.verbose) o.log(`corpus ${k.name}: ${describeCase(k.case)}\n  -> ${describeAnswer(r.outcome).slice(0, 300)}`);
    if (!r.problems.length) return;
    const sig = signature(k.case, r);
    const seen = failures.get(sig);
    if (seen) {
      seen.count++;
      return;
    }
    failures.set(sig, {
      signature: sig,
      target: t.path,
      app: t.app,
      caseIndex: -1,
      corpus: k.name,
      problems: r.problems,
      request: describeCase(k.case),
      answer: describeAnswer(r.outcome),
      output: r.output.trim().slice(0, 3000),
      cause: causeOf(r.output),
      count: 1,
    });
    o.log(`FAILURE ${sig} (corpus: ${k.name})`);
  };

  /** Random case `i` of a target, shrunk by fast-check when it fails in a way not seen before. */
  const randomCase = async (t: Target, i: number) => {
    let first: { c: Case; r: Result; sig: string } | undefined;
    let best: { c: Case; r: Result } | undefined;
    let steps = 0;
    let attempts = 0;
    let budget = 0;
    let fatal: unknown;
    const prop = fc.asyncProperty(arbs.get(t.path)!, async (c) => {
      if (fatal) return true;
      try {
        return await step(c);
      } catch (e) {
        fatal = e;
        return true;
      }
    });
    const step = async (c: Case) => {
      if (!first) {
        const r = await runCase(c);
        cases++;
        perTarget[t.path].cases++;
        count(t, r);
        if (o.verbose) o.log(`case ${i} ${describeCase(c)}\n  -> ${describeAnswer(r.outcome).slice(0, 300)}${r.problems.length ? `\n  !! ${r.problems.map((p) => p.kind).join(', ')}` : ''}`);
        if (!r.problems.length) return true;
        first = { c, r, sig: signature(c, r) };
        const seen = failures.get(first.sig);
        if (seen) seen.count++;
        budget = seen ? 0 : o.shrink;
        return false;
      }
      if (attempts >= budget) return true;
      attempts++;
      shrinkRuns++;
      const r = await runCase(c);
      if (r.problems.length && signature(c, r) === first.sig) {
        best = { c, r };
        steps++;
        return false;
      }
      return true;
    };
    await fc.check(prop, { seed: caseSeed(o.seed, t.path, i), numRuns: 1 });
    if (fatal) throw fatal;
    if (first && !failures.has(first.sig)) {
      const f: Failure = {
        signature: first.sig,
        target: t.path,
        app: t.app,
        caseIndex: i,
        problems: first.r.problems,
        request: describeCase(first.c),
        answer: describeAnswer(first.r.outcome),
        output: first.r.output.trim().slice(0, 3000),
        cause: causeOf(first.r.output),
        count: 1,
        ...(best && { shrunk: { request: describeCase(best.c), answer: describeAnswer(best.r.outcome), steps } }),
      };
      failures.set(first.sig, f);
      o.log(`FAILURE ${f.signature} (case ${i})`);
    }
  };

  // Rounds: in round i every target gets its corpus case i (while it has one) and its random case i,
  // so a run cut short by the time budget still tried a bit of everything.
  const corpora = new Map(chosen.map((t) => [t.path, o.caseIndex === undefined ? corpusOf(t, minimalBody(t, env)) : []]));
  const indices = o.caseIndex !== undefined ? [o.caseIndex] : Array.from({ length: o.runs }, (_, i) => i);
  const rounds = Math.max(indices.length, ...[...corpora.values()].map((c) => c.length));
  let lastLog = Date.now();
  for (let round = 0; round < rounds; round++) {
    for (const t of chosen) {
      const work: (() => Promise<void>)[] = [];
      const k = corpora.get(t.path)![round];
      if (k) work.push(() => corpusCase(t, k));
      if (round < indices.length) work.push(() => randomCase(t, indices[round]));
      for (const w of work) {
        if (Date.now() > deadline) skipped++;
        else await w();
      }
      if (Date.now() - lastLog > 15_000) {
        lastLog = Date.now();
        o.log(`… ${cases} cases, ${failures.size} distinct failures, ${Math.round((Date.now() - start) / 1000)} s`);
      }
    }
  }
  return { seed: o.seed, runs: o.runs, cases, shrinkRuns, skipped, ms: Date.now() - start, restarts: h.restarts, perTarget, failures: [...failures.values()] };
}

/**
 * The error a process printed: `Type: message @ file:line` with the first frame in apps/ or libs/
 * (from a JSON log line's `err`, or from the plain text of an uncaught exception).
 */
export function causeOf(output: string): string | undefined {
  const frame = (stack: string) => /\b((?:apps|libs)\/[\w./-]+:\d+)/.exec(stack)?.[1] ?? /\b(node_modules\/[\w@./-]+:\d+)/.exec(stack)?.[1] ?? '?';
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    const err = safeJson(line)?.err;
    if (err && (err.message || err.stack)) return `${err.type ?? 'Error'}: ${String(err.message ?? '').trim().split('\n')[0].slice(0, 160)} @ ${frame(String(err.stack ?? ''))}`;
  }
  const m = /^(\w*Error\b[^\n]*)$/m.exec(output);
  if (m) return `${m[1].slice(0, 160)} @ ${frame(output.slice(m.index))}`;
  return undefined;
}

/** A cause with its variable parts (quoted names, numbers, parameter numbers) blanked, for grouping. */
const causeKey = (c: string) => c.replace(/"[^"]*"|'[^']*'/g, '"…"').replace(/\$\d+/g, '$n').replace(/\b\d+\b(?!$)/g, 'N');

function safeJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The report as text: counts per app and per target, then every distinct failure with how to reproduce it. */
export function formatReport(r: FuzzReport, reproduce: (f: Failure) => string): string {
  const lines: string[] = [];
  const apps: Record<string, { cases: number; failures: number; targets: number }> = {};
  for (const s of Object.values(r.perTarget)) {
    const a = (apps[s.app] ??= { cases: 0, failures: 0, targets: 0 });
    a.cases += s.cases + s.corpus;
    a.failures += s.failures;
    a.targets++;
  }
  const corpus = Object.values(r.perTarget).reduce((n, s) => n + s.corpus, 0);
  lines.push(`fuzz: seed ${r.seed}, ${r.runs} runs per target, ${Object.keys(r.perTarget).length} targets, ${r.cases} cases (${corpus} corpus + ${r.cases - corpus} random; +${r.shrinkRuns} shrink runs) in ${(r.ms / 1000).toFixed(1)} s, ${r.restarts} restarts`);
  if (r.skipped) lines.push(`STOPPED at the time budget: ${r.skipped} cases not sent`);
  lines.push('', 'per app:');
  for (const [app, a] of Object.entries(apps)) lines.push(`  ${app.padEnd(14)} ${String(a.targets).padStart(3)} targets ${String(a.cases).padStart(6)} cases ${String(a.failures).padStart(5)} failing`);
  lines.push('', 'per target (corpus cases, random cases, failing cases, answers by status):');
  for (const [path, s] of Object.entries(r.perTarget)) {
    const st = Object.entries(s.statuses)
      .sort()
      .map(([k, v]) => `${k}:${v}`)
      .join(' ');
    lines.push(`  ${path.padEnd(58)} ${String(s.corpus).padStart(3)} ${String(s.cases).padStart(5)} ${String(s.failures).padStart(5)}  ${st}`);
  }
  const causes = new Map<string, Failure[]>();
  for (const f of r.failures) if (f.cause) causes.set(causeKey(f.cause), [...(causes.get(causeKey(f.cause)) ?? []), f]);
  if (causes.size) {
    lines.push('', 'failures by the error the app printed:');
    for (const fs of causes.values()) lines.push(`  ${fs[0].cause}`, ...fs.map((f) => `      [${r.failures.indexOf(f) + 1}] ${f.signature}`));
  }
  lines.push('', r.failures.length ? `${r.failures.length} distinct failures:` : 'no failures');
  r.failures.forEach((f, n) => {
    lines.push('', `[${n + 1}] ${f.signature}   (${f.count} case${f.count > 1 ? 's' : ''})${f.corpus ? `   corpus: ${f.corpus}` : ''}`);
    lines.push(`    reproduce: ${reproduce(f)}`);
    for (const p of f.problems) lines.push(`    ${p.kind}: ${p.detail}`);
    if (f.cause) lines.push(`    cause: ${f.cause}`);
    lines.push(...indent(`request: ${f.request}`), ...indent(`answer: ${f.answer}`));
    if (f.shrunk) lines.push(...indent(`shrunk (${f.shrunk.steps} steps): ${f.shrunk.request}`), ...indent(`shrunk answer: ${f.shrunk.answer}`));
    if (f.output) lines.push(...indent(`process output:\n${f.output}`));
  });
  return lines.join('\n');
}

const indent = (s: string) => s.split('\n').map((l) => `    ${l}`);
