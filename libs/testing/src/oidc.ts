import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload, type KeyLike } from 'jose';

/**
 * OpenID providers for the SSO tests (identity's specs and the end-to-end suite).
 *
 * `startOidcProvider`: the real thing (the npm package oidc-provider, ESM-only, so in a child process,
 * oidc-provider.mjs beside this file) and `login`, a real authorization-code login against it over HTTP:
 * GET /auth → the login form → the consent form → the redirect with the code → POST /token.
 *
 * `FakeProvider`: a tiny issuer whose keys the test holds, to make tokens no real provider would give
 * (expired, not yet valid, signed with another key or algorithm, rotated keys) and to fail on demand
 * (hang, 5xx). Each realm is an issuer of its own: `http://127.0.0.1:<port>/<realm>`.
 */

const REDIRECT_URI = 'http://127.0.0.1/callback';
const RESOURCE = 'urn:platform:api';

export interface ProviderTokens {
  access_token: string;
  id_token: string;
  token_type: string;
}

export interface RealProvider {
  issuer: string;
  clientId: string;
  /**
   * A full authorization-code login of `user`; with `jwt`, a JWT access token (aud = the client), else
   * an opaque one. With `client`, as one of the `otherClients` (tokens addressed to that client).
   */
  login(user: string, o?: LoginOptions): Promise<ProviderTokens>;
  stop(): Promise<void>;
}

export interface LoginOptions {
  jwt?: boolean;
  /** The client id to log in at (one of `otherClients`); the main client by default. */
  client?: string;
}

/**
 * A real OpenID provider with one client (`clientId`, `clientSecret`) and, with `otherClients`
 * (client id → secret), more: another application's client, whose tokens are not addressed to the main one.
 */
export async function startOidcProvider(clientId: string, clientSecret: string, otherClients: Record<string, string> = {}): Promise<RealProvider> {
  const script = path.join(__dirname, 'oidc-provider.mjs');
  const clients = { [clientId]: clientSecret, ...otherClients };
  const args = Object.entries(clients).flat();
  const child: ChildProcess = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += String(c)));
  const line = await new Promise<string>((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout! });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`oidc-provider exited (${code}): ${stderr}`)));
  });
  const { issuer } = JSON.parse(line) as { issuer: string };

  async function login(user: string, o: LoginOptions = {}): Promise<ProviderTokens> {
    const client = o.client ?? clientId;
    const secret = clients[client];
    if (secret === undefined) throw new Error(`no client ${client} at the provider`);
    // A browser of its own per login: no session of an earlier login is reused.
    const jar = new Map<string, string>();
    const go = async (url: URL, init: RequestInit = {}) => {
      const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie } });
      for (const c of res.headers.getSetCookie()) {
        const kv = c.split(';')[0];
        const i = kv.indexOf('=');
        jar.set(kv.slice(0, i), kv.slice(i + 1));
      }
      return res;
    };
    const params = new URLSearchParams({
      client_id: client,
      response_type: 'code',
      scope: o.jwt ? 'openid email api' : 'openid email',
      redirect_uri: REDIRECT_URI,
      state: 'state-1',
      nonce: 'nonce-1',
      ...(o.jwt && { resource: RESOURCE }),
    });
    let res = await go(new URL(`${issuer}/auth?${params}`));
    let next = new URL(res.headers.get('location') ?? '', issuer);
    for (let step = 0; !next.href.startsWith(REDIRECT_URI); step++) {
      if (step > 10) throw new Error(`login of ${user} did not come back: ${next.href}`);
      if (next.pathname.startsWith('/interaction/')) {
        const form = await (await go(next)).text();
        const prompt = /name="prompt" value="(\w+)"/.exec(form)?.[1];
        if (!prompt) throw new Error(`no form at ${next.href}: ${form.slice(0, 200)}`);
        const body = new URLSearchParams(prompt === 'login' ? { prompt, login: user, password: 'any' } : { prompt });
        res = await go(next, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      } else {
        res = await go(next);
      }
      next = new URL(res.headers.get('location') ?? '', issuer);
    }
    const code = next.searchParams.get('code');
    if (!code) throw new Error(`no code: ${next.href}`);
    const token = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client}:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }),
    });
    if (token.status !== 200) throw new Error(`token endpoint answered ${token.status}: ${await token.text()}`);
    return (await token.json()) as ProviderTokens;
  }

  return {
    issuer,
    clientId,
    login,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin!.end();
      await exited;
    },
  };
}

type Mode = 'ok' | 'hang' | 'error' | 'redirect';

interface SigningKey {
  kid: string;
  privateKey: KeyLike;
  publicJwk: Record<string, unknown>;
}

async function newKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export class FakeRealm {
  mode: Mode = 'ok';
  /** Which document fails in `hang`/`error` mode (all by default). */
  failing: 'all' | 'userinfo' = 'all';
  jwksFetches = 0;
  /** Authorization headers that reached `/steal` (where `redirect` mode sends userinfo requests). */
  readonly stolen: string[] = [];
  discoveryFetches = 0;
  keys: SigningKey[] = [];
  /** Opaque tokens userinfo knows, with the claims it answers for each. */
  readonly opaque = new Map<string, Record<string, unknown>>();

  constructor(
    readonly name: string,
    readonly issuer: string,
  ) {}

  async init() {
    this.keys = [await newKey(`${this.name}-k1`)];
    return this;
  }

  /** A new signing key replaces the old one in the JWKS (a provider's key rotation). */
  async rotate() {
    this.keys = [await newKey(`${this.name}-k${this.keys.length + 1}-${Date.now()}`)];
  }

  /** A JWT signed by this realm's current key: iss and a one-hour exp unless `claims` say otherwise. */
  async sign(claims: JWTPayload, o: { key?: SigningKey; kid?: string } = {}) {
    const key = o.key ?? this.keys[0];
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: this.issuer, iat: now, exp: now + 3600, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: o.kid ?? key.kid })
      .sign(key.privateKey);
  }

  handle(rest: string, req: http.IncomingMessage, res: http.ServerResponse) {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const failing = this.failing === 'all' || rest === '/userinfo';
    if (this.mode === 'hang' && failing) return; // never answers
    if (this.mode === 'error' && failing) return json(502, { error: 'bad gateway' });
    if (rest === '/steal') {
      this.stolen.push(req.headers.authorization ?? '');
      return json(200, { sub: 'stolen' });
    }
    if (this.mode === 'redirect' && failing) {
      res.writeHead(302, { location: `${this.issuer}/steal` });
      return res.end();
    }
    if (rest === '/.well-known/openid-configuration') {
      this.discoveryFetches++;
      return json(200, {
        issuer: this.issuer,
        jwks_uri: `${this.issuer}/jwks`,
        userinfo_endpoint: `${this.issuer}/userinfo`,
        authorization_endpoint: `${this.issuer}/auth`,
        token_endpoint: `${this.issuer}/token`,
      });
    }
    if (rest === '/jwks') {
      this.jwksFetches++;
      return json(200, { keys: this.keys.map((k) => k.publicJwk) });
    }
    if (rest === '/userinfo') {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const claims = token && this.opaque.get(token);
      return claims ? json(200, claims) : json(401, { error: 'invalid_token' });
    }
    json(404, { error: 'not found' });
  }
}

export class FakeProvider {
  private readonly realms = new Map<string, FakeRealm>();
  private readonly sockets = new Set<import('node:net').Socket>();
  private server?: http.Server;
  base = '';

  async start() {
    this.server = http.createServer((req, res) => {
      const m = /^\/([a-z0-9-]+)(\/.*)$/.exec(req.url ?? '');
      const realm = m && this.realms.get(m[1]);
      if (!realm) {
        res.writeHead(404).end();
        return;
      }
      realm.handle(m[2], req, res);
    });
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async realm(name: string) {
    const r = await new FakeRealm(name, `${this.base}/${name}`).init();
    this.realms.set(name, r);
    return r;
  }

  async stop() {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server?.close(r));
  }
}

/** A key no realm publishes: signs tokens that must not verify. */
export const strangerKey = () => newKey('stranger');
