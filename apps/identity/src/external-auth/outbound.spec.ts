import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import request from 'supertest';
import { createLogger } from '@platform/core';
import { LOOPBACK_ONLY, parseOutboundAllowList } from '@platform/net';
import { bearer } from '@platform/testing';
import { createTestIdentity, seedDomain } from '../test-support';

const MARKER = 'MARKER-idp-5e0a91';

/**
 * issue #27: external-auth/set is no oracle. Whatever the issuer's URL reaches (a closed port, a reset,
 * a 403, a 404, a document naming another issuer, bytes that are not HTTP, a redirect to the metadata
 * address), the caller reads the same refusal, which quotes nothing the target sent; the log says
 * what happened.
 */
describe('external-auth/set: outbound refusals are uniform', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let trap: http.Server;
  let base: string;
  let admin: string;
  const log: string[] = [];

  beforeAll(async () => {
    trap = http.createServer((req, res) => {
      const path = (req.url ?? '').replace('/.well-known/openid-configuration', '');
      if (path === '/forbidden') return res.writeHead(403).end(MARKER);
      if (path === '/other-issuer') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: MARKER, jwks_uri: `${base}/jwks` }));
      if (path === '/reset') return req.socket.destroy();
      if (path === '/garbage') return req.socket.end(`${MARKER}\r\n\r\n`);
      if (path === '/metadata') return res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(MARKER);
      if (path === '/metadata-hex') return res.writeHead(302, { location: 'http://0xa9fea9fe/latest/meta-data/' }).end(MARKER);
      res.writeHead(404).end(MARKER);
    });
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
    const sink = new Writable({ write: (c, _e, cb) => (log.push(String(c)), cb()) });
    t = await createTestIdentity(
      { externalAuth: { outbound: LOOPBACK_ONLY, timeoutMs: 1000, cacheSeconds: 600, jwksCooldownSeconds: 1, clockSkewSeconds: 30 } },
      { logger: createLogger('identity', 'info', sink) },
    );
    await seedDomain(t.admin, 'd1');
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  });
  afterAll(async () => {
    trap.closeAllConnections();
    await Promise.all([t.close(), new Promise((r) => trap.close(r))]);
  });

  const set = (issuer: string) =>
    request(t.app)
      .post('/identity/v2/external-auth/set')
      .set('Authorization', admin)
      .send({ plugin_info: { plugin_id: 'plugin-oidc-identity-auth', options: { issuer, client_id: 'platform' } } });

  it('a closed port, a reset, 403, 404, another issuer, garbage and a redirect to metadata all answer the same', async () => {
    const issuers = ['http://127.0.0.1:1', `${base}/reset`, `${base}/forbidden`, `${base}/missing`, `${base}/other-issuer`, `${base}/garbage`, `${base}/metadata`, `${base}/metadata-hex`];
    const answers: string[] = [];
    for (const issuer of issuers) {
      const res = await set(issuer);
      expect([issuer, res.status, res.body.error?.code]).toEqual([issuer, 400, 'ERROR_OUTBOUND_REFUSED']);
      answers.push(JSON.stringify(res.body));
      expect(res.text).not.toMatch(new RegExp(`${MARKER}|ECONN|HPE_|403|404|169\\.254|answered|resolves|127\\.0\\.0\\.1|${new URL(base).port}`));
    }
    expect(new Set(answers).size).toBe(1);
    // the log tells them apart, for the operator
    const details = log
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string; outbound?: string })
      .filter((l) => l.msg === 'outbound call refused')
      .map((l) => l.outbound ?? '');
    expect(details.some((d) => /ECONNREFUSED/.test(d))).toBe(true);
    expect(details.some((d) => /answered 403/.test(d))).toBe(true);
    expect(details.some((d) => /169\.254\.169\.254.*not allowed/.test(d))).toBe(true);
  });

  it('requires an https issuer unless its host is on the allow-list', async () => {
    t.deps.config.externalAuth.outbound = parseOutboundAllowList('10.0.0.0/8');
    try {
      const res = await set(`${base}/missing`);
      expect([res.status, res.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
      expect(res.body.error.message).toMatch(/https/);
      // https to a private address off the list: refused by the guard, before any connection
      const off = await set(`https://127.0.0.1:${new URL(base).port}/realm`);
      expect([off.status, off.body.error.code]).toEqual([400, 'ERROR_OUTBOUND_REFUSED']);
    } finally {
      t.deps.config.externalAuth.outbound = LOOPBACK_ONLY;
    }
  });
});
