import type { Platform } from '@platform/testing';
import { request, type Outcome } from './client';
import type { Auth, Case, Role, Target } from './gen';
import { serialize } from './json';
import type { Problem } from './oracle';
import { DOMAIN, OTHER_DOMAIN, WORKSPACE } from './vocab';

export const INGEST_TOKEN = 'fuzz-ingest-token';
/** The liveness probe must answer within this after every case. */
export const LIVENESS_MS = 1000;

export interface HarnessOptions {
  /** How long a case may take before it counts as a freeze. */
  timeoutMs: number;
}

/** An app's canary: a plain valid list it must keep answering 200 (a polluted or wedged process does not). */
interface Canary {
  path: string;
  body: Record<string, unknown>;
  role: Role;
}

/** Talks to the running platform: tokens, requests, the liveness probe, the canary, restarts. */
export class Harness {
  private readonly tokens = new Map<string, Promise<string>>();
  private readonly canaries = new Map<string, Canary>();
  /** Seq of the platform log line each process had at the last mark. */
  restarts = 0;

  constructor(
    readonly platform: Platform,
    readonly opts: HarnessOptions,
  ) {}

  setCanary(app: string, c: Canary) {
    this.canaries.set(app, c);
  }

  token(role: Role, o: { domainId?: string; ttlSeconds?: number; tokenType?: 'ACCESS_TOKEN' | 'REFRESH_TOKEN' } = {}): Promise<string> {
    const key = JSON.stringify([role, o]);
    let t = this.tokens.get(key);
    if (!t) {
      t = this.platform.mintToken({
        roleType: role,
        userId: 'admin',
        domainId: o.domainId ?? DOMAIN,
        workspaceId: WORKSPACE,
        ttlSeconds: o.ttlSeconds ?? 24 * 3600,
        tokenType: o.tokenType,
      });
      this.tokens.set(key, t);
    }
    return t;
  }

  async authorization(a: Auth): Promise<string | undefined> {
    switch (a.kind) {
      case 'none':
        return undefined;
      case 'role':
      case 'wrong-role':
        return `Bearer ${await this.token(a.role)}`;
      case 'other-domain':
        return `Bearer ${await this.token(a.role, { domainId: OTHER_DOMAIN })}`;
      case 'refresh-token':
        return `Bearer ${await this.token('DOMAIN_ADMIN', { tokenType: 'REFRESH_TOKEN' })}`;
      case 'expired':
        return `Bearer ${await this.token(a.role, { ttlSeconds: -60 })}`;
      case 'garbage':
        return a.header;
      case 'ingest':
        return `Bearer ${INGEST_TOKEN}`;
    }
  }

  /** Sends a case to its app (directly, no gateway). */
  async send(c: Case): Promise<Outcome> {
    const authorization = await this.authorization(c.auth);
    const headers: Record<string, string> = {};
    if (authorization !== undefined) headers.authorization = authorization;
    if (c.contentType) headers['content-type'] = c.contentType;
    return request(this.platform.portOf(c.target.app), {
      method: c.method,
      path: c.path,
      headers,
      body: c.body === undefined ? undefined : serialize(c.body),
      timeoutMs: this.opts.timeoutMs,
    });
  }

  /** A plain JSON POST (setup, canaries, follow-ups). */
  async call(app: string, path: string, body: unknown, auth: Auth = { kind: 'role', role: 'DOMAIN_ADMIN' }) {
    const target: Target = { app, kind: 'operation', path, roles: 'public', fields: [] };
    const o = await this.send({ target, method: 'POST', path, contentType: 'application/json', auth, body, notes: [] });
    let json: any;
    try {
      json = o.text ? JSON.parse(o.text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: o.status, body: json, outcome: o };
  }

  /** GET /healthz of an app, within the liveness deadline. */
  async probe(app: string): Promise<Problem | undefined> {
    const o = await request(this.platform.portOf(app), { method: 'GET', path: '/healthz', timeoutMs: LIVENESS_MS });
    if (o.status === 200) return undefined;
    return { kind: 'liveness', detail: `GET /healthz: ${o.error ?? `HTTP ${o.status}`} (${o.ms} ms)` };
  }

  /** The app still answers a plain valid request as before. */
  async canary(app: string): Promise<Problem | undefined> {
    const c = this.canaries.get(app);
    if (!c) return undefined;
    const r = await this.call(app, c.path, c.body, { kind: 'role', role: c.role });
    if (r.status === 200) return undefined;
    return { kind: 'poisoned', detail: `a valid ${c.path} now answers ${r.outcome.error ?? `HTTP ${r.status} ${r.outcome.text.slice(0, 200)}`}` };
  }

  /** Waits up to `ms` for a process of `app` to exit (a probe that failed may have seen it dying). */
  async settle(app: string, ms = 1000) {
    const end = Date.now() + ms;
    while (Date.now() < end && !this.platform.processes.some((p) => p.app === app && p.exited)) await new Promise((r) => setTimeout(r, 50));
  }

  /** Processes (of any app) that are down. */
  dead() {
    return this.platform.processes.filter((p) => p.exited);
  }

  /** Kills what is left of `app` and starts it again; waits until it is ready. */
  async restart(app: string) {
    this.restarts++;
    for (const p of this.platform.processes.filter((x) => x.app === app)) {
      if (!p.exited) {
        const exited = new Promise((r) => p.child.once('exit', r));
        p.child.kill('SIGKILL');
        await exited;
      }
    }
    await this.platform.restart(app);
  }
}
