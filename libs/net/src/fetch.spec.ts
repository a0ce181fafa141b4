import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchUrl, openUrl, urlForDisplay } from './fetch';
import { LOOPBACK_ONLY, NO_PRIVATE_DESTINATIONS, parseOutboundAllowList } from './policy';
import { OUTBOUND_REFUSED, OUTBOUND_REFUSED_MESSAGE, OutboundRefused } from './refusal';

const MARKER = 'MARKER-7d1c-outbound-body';
const METADATA_SPELLINGS = [
  '169.254.169.254', '0xa9fea9fe', '2852039166', '0251.0376.0251.0376', '169.254.43518', '[::ffff:a9fe:a9fe]', '[::ffff:169.254.169.254]',
  '[fd00:ec2::254]', '[fe80::1]', '0.0.0.0', '[::]', '0',
];

describe('guarded fetch', () => {
  let server: http.Server;
  let base: string;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((request, res) => {
      const url = new URL(request.url ?? '/', 'http://x');
      const req = { url: url.pathname };
      if (req.url === '/ok') return res.end('hello');
      if (req.url === '/big') return res.end('x'.repeat(5000));
      if (req.url === '/hop') return res.writeHead(302, { location: '/ok' }).end();
      if (req.url === '/elsewhere') return res.writeHead(302, { location: `http://second.invalid:${port}/ok` }).end();
      if (req.url === '/to') return res.writeHead(302, { location: url.searchParams.get('u') ?? '/' }).end(MARKER);
      if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
      if (req.url === '/slow') return setTimeout(() => res.end('late'), 2000);
      if (req.url === '/drip') {
        res.write('a');
        const t = setInterval(() => res.write('b'), 50);
        return setTimeout(() => (clearInterval(t), res.end('c')), 500);
      }
      if (req.url === '/reset') return request.socket.destroy();
      if (req.url === '/garbage') return request.socket.end(`${MARKER}\r\n\r\n`);
      res.writeHead(404).end(MARKER);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });
  afterAll(() => new Promise((r) => (server.closeAllConnections(), server.close(r))));
  const opts = { policy: LOOPBACK_ONLY, timeoutMs: 1000, maxBytes: 1000, key: 'url' };

  /** Every connection the fetch opens, through the connect seam. */
  const recorder = () => {
    const connected: string[] = [];
    return { connected, onConnect: (address: string, p: number) => void connected.push(`${address}:${p}`) };
  };

  it('fetches, follows redirects and answers the status', async () => {
    expect(await fetchUrl(`${base}/ok`, opts)).toMatchObject({ status: 200, url: `${base}/ok` });
    expect((await fetchUrl(`${base}/hop`, opts)).body.toString()).toBe('hello');
    expect((await fetchUrl(`${base}/missing`, opts)).status).toBe(404);
    const { response } = await openUrl(`${base}/ok`, opts);
    let text = '';
    for await (const c of response) text += c;
    expect(text).toBe('hello');
  });

  it('refuses private targets the allow-list does not name, before connecting', async () => {
    const rec = recorder();
    await expect(fetchUrl(`${base}/ok`, { ...opts, ...rec, policy: NO_PRIVATE_DESTINATIONS })).rejects.toMatchObject({ code: OUTBOUND_REFUSED, status: 400 });
    await expect(fetchUrl('http://localhost:1/x', { ...opts, ...rec, policy: NO_PRIVATE_DESTINATIONS })).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
    await expect(fetchUrl(`${base}/ok`, { ...opts, ...rec, policy: parseOutboundAllowList('10.0.0.0/8') })).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
    expect(rec.connected).toEqual([]);
  });

  it('refuses every URL spelling of loopback: decimal, hex, octal, [::1], [::ffff:127.0.0.1], IPv4-compatible, localhost', async () => {
    const rec = recorder();
    for (const host of ['2130706433', '0x7f.1', '0177.0.0.1', '127.1', '[::1]', '[::ffff:127.0.0.1]', '[::127.0.0.1]', '[::ffff:0:127.0.0.1]', 'localhost', 'LocalHost.']) {
      await expect(fetchUrl(`http://${host}:${port}/ok`, { ...opts, ...rec, policy: NO_PRIVATE_DESTINATIONS })).rejects.toMatchObject({ status: 400 });
    }
    expect(rec.connected).toEqual([]);
  });

  it('refuses a name the resolver answers with the metadata address, before connecting, whatever the allow-list', async () => {
    const rec = recorder();
    const resolve = async () => [{ address: '169.254.169.254', family: 4 }];
    const everything = parseOutboundAllowList('0.0.0.0/0,::/0,metadata.internal');
    for (const host of ['metadata.internal', 'public.example']) {
      await expect(fetchUrl(`http://${host}/latest/meta-data/`, { ...opts, ...rec, resolve, policy: everything })).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
    }
    expect(rec.connected).toEqual([]);
  });

  it.each(METADATA_SPELLINGS)('refuses a redirect hop to %s (a metadata, link-local or unspecified spelling) before connecting to it', async (host) => {
    const rec = recorder();
    const everything = parseOutboundAllowList('0.0.0.0/0,::/0');
    const target = `http://${host}/latest/meta-data/iam/security-credentials/`;
    const e = await fetchUrl(`${base}/to?u=${encodeURIComponent(target)}`, { ...opts, ...rec, policy: everything }).catch((err: Error) => err);
    expect(e).toBeInstanceOf(OutboundRefused);
    expect((e as Error).message).toBe(`${OUTBOUND_REFUSED_MESSAGE} (key = url)`);
    // one connection: the loopback server's; none to the redirect's target
    expect(rec.connected).toEqual([`127.0.0.1:${port}`]);
  });

  it('checks and pins every redirect hop: the target is resolved by the guard, and a refused one is not connected to', async () => {
    const asked: string[] = [];
    const rec = recorder();
    const resolve = async (host: string) => {
      asked.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    // names that do not exist in DNS: the connections go to the address the guard resolved (pinned)
    const hop = await fetchUrl(`http://first.invalid:${port}/elsewhere`, { ...opts, ...rec, resolve });
    expect(hop.body.toString()).toBe('hello');
    expect(asked).toEqual(['first.invalid', 'second.invalid']);
    expect(rec.connected).toEqual([`127.0.0.1:${port}`, `127.0.0.1:${port}`]);
    // only the first name listed: the second hop is refused before it connects
    const firstOnly = parseOutboundAllowList('first.invalid');
    const rec2 = recorder();
    await expect(fetchUrl(`http://first.invalid:${port}/elsewhere`, { ...opts, ...rec2, resolve, policy: firstOnly })).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
    expect(rec2.connected).toEqual([`127.0.0.1:${port}`]);
  });

  it('connects where the guard looked, and checks the connected peer: an IPv6 answer in any spelling reaches ::1', async () => {
    const v6 = http.createServer((_req, res) => res.end('over v6'));
    await new Promise<void>((r) => v6.listen(0, '::1', r));
    try {
      const p6 = (v6.address() as AddressInfo).port;
      const rec = recorder();
      const resolve = async () => [{ address: '0:0:0:0:0:0:0:1', family: 6 }];
      const res = await fetchUrl(`http://v6.invalid:${p6}/`, { ...opts, ...rec, resolve });
      expect(res.body.toString()).toBe('over v6');
      expect(rec.connected).toEqual([`0:0:0:0:0:0:0:1:${p6}`]);
      // the same answer where the allow-list names only IPv4 loopback: refused before connecting
      const rec2 = recorder();
      await expect(fetchUrl(`http://v6.invalid:${p6}/`, { ...opts, ...rec2, resolve, policy: parseOutboundAllowList('127.0.0.0/8') })).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
      expect(rec2.connected).toEqual([]);
    } finally {
      v6.closeAllConnections();
      await new Promise((r) => v6.close(r));
    }
  });

  it('bounds the redirect hops, whatever the caller asks', async () => {
    const rec = recorder();
    await expect(fetchUrl(`${base}/loop`, { ...opts, ...rec, maxRedirects: 1000 })).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
    expect(rec.connected).toHaveLength(11);
  });

  it('every failure is the same refusal: a refused address, a closed port, a reset, garbage, a timeout, too large, too many redirects', async () => {
    const failures = [
      () => fetchUrl(`${base}/ok`, { ...opts, policy: NO_PRIVATE_DESTINATIONS }),
      () => fetchUrl('http://127.0.0.1:1/x', opts),
      () => fetchUrl(`${base}/reset`, opts),
      () => fetchUrl(`${base}/garbage`, opts),
      () => fetchUrl(`${base}/slow`, { ...opts, timeoutMs: 100 }),
      () => fetchUrl(`${base}/big`, opts),
      () => fetchUrl(`${base}/loop`, { ...opts, maxRedirects: 2 }),
      () => fetchUrl('file:///etc/passwd', opts),
      () => fetchUrl(`http://u:p@127.0.0.1:${port}/`, opts),
      () => fetchUrl('http://nothing.invalid/', { ...opts, resolve: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENOTFOUND' })) }),
    ];
    const details: string[] = [];
    for (const f of failures) {
      const e = await f().then(() => undefined, (err: unknown) => err);
      expect(e).toBeInstanceOf(OutboundRefused);
      expect(e).toMatchObject({ status: 400, code: OUTBOUND_REFUSED, message: `${OUTBOUND_REFUSED_MESSAGE} (key = url)` });
      expect(JSON.stringify((e as OutboundRefused).toEnvelope())).not.toMatch(/ECONN|HPE_|127\.0\.0\.1|answered|resolves|MARKER/);
      details.push((e as OutboundRefused).detail);
    }
    // the log detail tells them apart
    expect(new Set(details).size).toBe(failures.length);
    expect(details.join('\n')).toMatch(/ECONNREFUSED/);
    expect(details.join('\n')).not.toContain(MARKER);
  });

  it('never puts a URL\'s credentials, query or fragment in a failure\'s log detail (pre-signed URLs, tokens)', async () => {
    const secret = 'SIG-s3cr3t-42';
    const failures = [
      () => fetchUrl(`http://127.0.0.1:1/x.csv?X-Amz-Signature=${secret}#${secret}`, opts),
      () => fetchUrl(`${base}/big?token=${secret}`, opts),
      () => fetchUrl(`${base}/slow?token=${secret}`, { ...opts, timeoutMs: 100 }),
      () => fetchUrl(`${base}/drip?token=${secret}`, { ...opts, timeoutMs: 100 }),
      () => fetchUrl(`http://user:${secret}@127.0.0.1:1/`, opts),
      () => fetchUrl(`http://[${secret}/`, opts),
    ];
    for (const f of failures) {
      const e = await f().then(() => undefined, (err: Error) => err);
      expect(e).toBeInstanceOf(OutboundRefused);
      expect(e!.message).not.toContain(secret);
      expect((e as OutboundRefused).detail).not.toContain(secret);
    }
    expect(urlForDisplay(`https://u:p@h.example:8443/a/b.csv?sig=${secret}#f`)).toBe('https://h.example:8443/a/b.csv?…');
    expect(urlForDisplay('not a url')).toBe('(not a URL)');
  });

  it('bounds size, redirects and time, and refuses other schemes and credentials (the detail says which)', async () => {
    const detail = (p: Promise<unknown>) => p.then(() => '', (e: OutboundRefused) => e.detail);
    expect(await detail(fetchUrl(`${base}/big`, opts))).toMatch(/larger than 1000 bytes/);
    expect(await detail(fetchUrl(`${base}/loop`, { ...opts, maxRedirects: 2 }))).toMatch(/more than 2 redirects/);
    expect(await detail(fetchUrl(`${base}/slow`, { ...opts, timeoutMs: 200 }))).toMatch(/within 200 ms/);
    expect(await detail(fetchUrl('file:///etc/passwd', opts))).toMatch(/not fetched/);
    expect(await detail(fetchUrl(`http://u:p@127.0.0.1:1/`, opts))).toMatch(/credentials/);
    expect(await detail(fetchUrl('http://127.0.0.1:1/', opts))).toMatch(/not reachable/);
  });

  it('streams a body for longer than the per-hop timeout, and a signal cancels it', async () => {
    const { response } = await openUrl(`${base}/drip`, { ...opts, timeoutMs: 200 });
    let text = '';
    for await (const c of response) text += c;
    expect(text).toMatch(/^ab+c$/);
    const ctl = new AbortController();
    const { response: r2 } = await openUrl(`${base}/drip`, { ...opts, signal: ctl.signal });
    setTimeout(() => ctl.abort(), 100);
    await expect((async () => {
      for await (const _ of r2) void _;
    })()).rejects.toMatchObject({ code: OUTBOUND_REFUSED, detail: expect.stringMatching(/cancelled/) });
  });
});
