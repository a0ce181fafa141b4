import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FetchFailure, fetchUrl, openUrl, urlForDisplay } from './fetch';

describe('guarded fetch', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((request, res) => {
      const req = { url: (request.url ?? '').split('?')[0] };
      if (req.url === '/ok') return res.end('hello');
      if (req.url === '/big') return res.end('x'.repeat(5000));
      if (req.url === '/hop') return res.writeHead(302, { location: '/ok' }).end();
      if (req.url === '/elsewhere') return res.writeHead(302, { location: `http://second.invalid:${(server.address() as AddressInfo).port}/ok` }).end();
      if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
      if (req.url === '/slow') return setTimeout(() => res.end('late'), 2000);
      if (req.url === '/drip') {
        res.write('a');
        const t = setInterval(() => res.write('b'), 50);
        return setTimeout(() => (clearInterval(t), res.end('c')), 500);
      }
      res.writeHead(404).end('nope');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));
  const opts = { allowPrivate: true, timeoutMs: 1000, maxBytes: 1000, key: 'url' };

  it('fetches, follows redirects and answers the status', async () => {
    expect(await fetchUrl(`${base}/ok`, opts)).toMatchObject({ status: 200, url: `${base}/ok` });
    expect((await fetchUrl(`${base}/hop`, opts)).body.toString()).toBe('hello');
    expect((await fetchUrl(`${base}/missing`, opts)).status).toBe(404);
    const { response } = await openUrl(`${base}/ok`, opts);
    let text = '';
    for await (const c of response) text += c;
    expect(text).toBe('hello');
  });

  it('refuses private targets unless allowed, before connecting', async () => {
    await expect(fetchUrl(`${base}/ok`, { ...opts, allowPrivate: false })).rejects.toMatchObject({ code: 'ERROR_ADDRESS_NOT_ALLOWED', status: 400 });
    await expect(fetchUrl('http://localhost:1/x', { ...opts, allowPrivate: false })).rejects.toMatchObject({ code: 'ERROR_ADDRESS_NOT_ALLOWED' });
  });

  it('refuses every URL spelling of loopback: decimal, hex, octal, [::1], [::ffff:127.0.0.1], IPv4-compatible, localhost', async () => {
    const port = new URL(base).port;
    for (const host of ['2130706433', '0x7f.1', '0177.0.0.1', '127.1', '[::1]', '[::ffff:127.0.0.1]', '[::127.0.0.1]', '[::ffff:0:127.0.0.1]', 'localhost', 'LocalHost.']) {
      await expect(fetchUrl(`http://${host}:${port}/ok`, { ...opts, allowPrivate: false })).rejects.toMatchObject({ status: 400 });
    }
  });

  it('checks and pins every redirect hop: the target is resolved by the guard, and a private one is refused', async () => {
    const asked: string[] = [];
    const resolve = async (host: string) => {
      asked.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    // names that do not exist in DNS: the connections go to the address the guard resolved (pinned)
    const port = new URL(base).port;
    const hop = await fetchUrl(`http://first.invalid:${port}/elsewhere`, { ...opts, resolve });
    expect(hop.body.toString()).toBe('hello');
    expect(asked).toEqual(['first.invalid', 'second.invalid']);
    // the same redirect with private addresses refused: the first hop already is
    await expect(fetchUrl(`http://first.invalid:${port}/hop`, { ...opts, allowPrivate: false, resolve })).rejects.toMatchObject({ code: 'ERROR_ADDRESS_NOT_ALLOWED' });
  });

  it('never puts a URL\'s credentials, query or fragment in a failure message (pre-signed URLs, tokens)', async () => {
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
      expect(e).toBeInstanceOf(FetchFailure);
      expect(e!.message).not.toContain(secret);
    }
    expect(urlForDisplay(`https://u:p@h.example:8443/a/b.csv?sig=${secret}#f`)).toBe('https://h.example:8443/a/b.csv?…');
    expect(urlForDisplay('not a url')).toBe('(not a URL)');
  });

  it('bounds size, redirects and time, and refuses other schemes and credentials', async () => {
    await expect(fetchUrl(`${base}/big`, opts)).rejects.toThrow(/larger than 1000 bytes/);
    await expect(fetchUrl(`${base}/loop`, { ...opts, maxRedirects: 2 })).rejects.toThrow(/more than 2 redirects/);
    await expect(fetchUrl(`${base}/slow`, { ...opts, timeoutMs: 200 })).rejects.toThrow(FetchFailure);
    await expect(fetchUrl('file:///etc/passwd', opts)).rejects.toThrow(/not fetched/);
    await expect(fetchUrl(`http://u:p@127.0.0.1:1/`, opts)).rejects.toThrow(/credentials/);
    await expect(fetchUrl('http://127.0.0.1:1/', opts)).rejects.toThrow(/not reachable/);
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
    })()).rejects.toThrow(/cancelled/);
  });
});
