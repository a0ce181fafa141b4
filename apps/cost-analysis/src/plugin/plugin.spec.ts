import { PassThrough, Readable } from 'node:stream';
import { serveFiles } from '../test-support';
import { CsvParser, readCsv } from './csv-reader';
import { guardBody, type BodyLimits } from './fetch-guard';
import { httpFilePlugin } from './http-file';
import { LOOPBACK_ONLY, NO_PRIVATE_DESTINATIONS, OUTBOUND_REFUSED, OUTBOUND_REFUSED_MESSAGE, parseOutboundAllowList } from '@platform/net';
import { checkUrl, fetchStream, isBlockedAddress } from './safe-url';
import { PluginError, type DataPage } from './types';

async function collect(text: string | string[]) {
  const out: { records: string[][]; lines: number[] } = { records: [], lines: [] };
  for await (const b of readCsv(Readable.from(Array.isArray(text) ? text : [text]))) {
    out.records.push(...b.records);
    out.lines.push(...b.lines);
  }
  return out;
}

describe('csv reader', () => {
  it('reads quoted fields, CRLF, BOM and blank lines with their line numbers, in any chunking', async () => {
    const text = '\ufeffa,b\r\n1,"x, ""y"""\r\n\r\n2,"multi\nline"\n3,z';
    const whole = await collect(text);
    expect(whole.records).toEqual([['a', 'b'], ['1', 'x, "y"'], ['2', 'multi\nline'], ['3', 'z']]);
    expect(whole.lines).toEqual([1, 2, 4, 6]);
    for (let size = 1; size < text.length; size += 3) {
      const chunks = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      expect(await collect(chunks)).toEqual(whole);
    }
  });

  it('refuses an unterminated quote', async () => {
    await expect(collect('a,b\n1,"open\n')).rejects.toThrow(/line 2/);
  });

  it('reads doubled quotes, quotes closing at a chunk end, CR inside quotes and "" records alike in any chunking', async () => {
    const text = 'a,b\n"",x\n"q""",""""\n"in\r"\r\n"x"y,"a\n\nb"\n\n,\nlast,"q"';
    const whole = await collect(text);
    expect(whole.records).toEqual([['a', 'b'], ['', 'x'], ['q"', '"'], ['in\r'], ['xy', 'a\n\nb'], ['', ''], ['last', 'q']]);
    expect(whole.lines).toEqual([1, 2, 3, 4, 5, 9, 10]);
    for (let size = 1; size < text.length; size++) {
      const chunks = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      expect(await collect(chunks)).toEqual(whole);
    }
  });

  // issue #32: every field, record and quoted section is bounded; the error says which bound and quotes nothing
  it('fails at once on a field, a quoted section, a record or a column count past its bound', async () => {
    const limits = { maxFieldChars: 100, maxRecordChars: 1000, maxColumns: 20 };
    const run = async (chunks: string[]) => {
      for await (const _ of readCsv(Readable.from(chunks), limits)) void _;
    };
    const cases: [string[], RegExp][] = [
      [['a,b\n', 'x'.repeat(60), 'y'.repeat(60)], /line 2: a field is longer than 100 characters/],
      [['a,b\n', 'x'.repeat(101) + '\n'], /line 2: a field is longer than 100 characters/],
      [['a\n1,"', 'SECRET\n'.repeat(20)], /line 2: a quoted field is longer than 100 characters/],
      [['a\n', 'x,'.repeat(21) + '\n'], /line 2: a record has more than 20 fields/],
      [['a\n', 'x,'.repeat(15), 'y,'.repeat(15)], /line 2: a record has more than 20 fields/],
      [['a\n', ('x'.repeat(90) + ',').repeat(12) + '\n'], /line 2: a line is longer than 1000 characters/],
      [['a\n"', 'q",' + ('x'.repeat(90) + ',').repeat(11), '\n'], /line 2: a record is longer than 1000 characters/],
    ];
    for (const [chunks, message] of cases) {
      const e = await run(chunks).then(() => undefined, (err: PluginError) => err);
      expect(e).toBeInstanceOf(PluginError);
      expect(e).toMatchObject({ code: 'ERROR_CSV_LIMIT', message: expect.stringMatching(message) });
      expect(e!.message).not.toMatch(/SECRET|xxx|yyy/);
    }
  });

  it('reads each character once: a long record cut into many chunks costs no more than the same text whole', async () => {
    // A 1 MB quoted field in 1-character chunks: a reader that scans its unparsed text again on each chunk does ~5e11 steps here.
    const parser = new CsvParser({ maxFieldChars: 1 << 20, maxRecordChars: 2 << 20, maxColumns: 10 });
    let records = parser.push('"').records.length;
    for (let i = 0; i < 1 << 20; i++) records += parser.push('x').records.length;
    records += parser.push('",y\n').records.length;
    expect(records).toBe(1);
  });
});

describe('SSRF guard', () => {
  it('blocks private, loopback and link-local addresses unless allowed', async () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '192.168.0.1', '172.16.5.5', '169.254.169.254', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '0.0.0.0']) {
      expect(isBlockedAddress(a)).toBe(true);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) expect(isBlockedAddress(a)).toBe(false);
    const everything = parseOutboundAllowList('0.0.0.0/0,::/0');
    for (const url of ['http://169.254.169.254/latest/meta-data', 'http://0xa9fea9fe/', 'http://2852039166/', 'http://[::ffff:a9fe:a9fe]/', 'http://[fd00:ec2::254]/']) {
      expect(() => checkUrl(url, everything)).toThrow(expect.objectContaining({ code: OUTBOUND_REFUSED }));
    }
    expect(() => checkUrl('http://127.0.0.1:1/x', NO_PRIVATE_DESTINATIONS)).toThrow(expect.objectContaining({ code: OUTBOUND_REFUSED }));
    expect(() => checkUrl('file:///etc/passwd', LOOPBACK_ONLY)).toThrow(/http/);
    expect(() => checkUrl('http://user:pw@example.com/', LOOPBACK_ONLY)).toThrow(/credentials/);
    expect(checkUrl('http://127.0.0.1:1/x', LOOPBACK_ONLY).hostname).toBe('127.0.0.1');
  });

  it('refuses a host name that resolves to loopback, and a redirect to one', async () => {
    const files = await serveFiles({ '/x.csv': 'cost\n1\n' });
    try {
      const port = new URL(files.url('/')).port;
      await expect(fetchStream(`http://localhost:${port}/x.csv`, { policy: NO_PRIVATE_DESTINATIONS })).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
      const ok = await fetchStream(`http://localhost:${port}/x.csv`, { policy: parseOutboundAllowList('localhost') });
      ok.destroy();
      files.files['/redirect'] = (res) => {
        res.statusCode = 302;
        res.setHeader('location', 'http://127.0.0.1:1/internal');
        res.end();
      };
      // Allowed here only to reach the test server; the redirect target is checked again (and refused when not allowed).
      await expect(fetchStream(files.url('/redirect'), { policy: LOOPBACK_ONLY })).rejects.toMatchObject({
        code: OUTBOUND_REFUSED,
        message: `${OUTBOUND_REFUSED_MESSAGE} (key = options.base_url)`,
      });
      files.files['/metadata'] = (res) => {
        res.statusCode = 302;
        res.setHeader('location', 'http://0xa9fea9fe/latest/meta-data/');
        res.end();
      };
      await expect(fetchStream(files.url('/metadata'), { policy: parseOutboundAllowList('0.0.0.0/0') })).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
    } finally {
      await files.close();
    }
  });
});

describe('http-file plugin', () => {
  it('maps fields and default vars, one task per URL, bad rows with lines', async () => {
    const files = await serveFiles({
      '/c.csv': 'Cost,currency,billed_date,tags.env,additional_info.Type,product\n1.5,USD,2024-02-03,prod,t2,EC2\nx,USD,2024-02-03,,,EC2\n2,ABC,2024-02-30,,,EC2\n',
    });
    try {
      const plugin = httpFilePlugin({ outbound: LOOPBACK_ONLY });
      const options = { base_url: [files.url('/c.csv'), files.url('/c.csv')], field_mapper: { cost: 'Cost' }, default_vars: { provider: 'csv' } };
      expect((await plugin.getTasks({ options, secret_data: {} })).tasks).toHaveLength(2);
      const pages: DataPage[] = [];
      for await (const p of plugin.getData({ options, secret_data: {}, task_options: { base_url: files.url('/c.csv') }, signal: new AbortController().signal })) pages.push(p);
      const results = pages.flatMap((p) => p.results);
      const errors = pages.flatMap((p) => p.errors);
      expect(results).toEqual([
        expect.objectContaining({ cost: 1.5, currency: 'USD', billed_date: '2024-02-03', provider: 'csv', product: 'EC2', tags: { env: 'prod' }, additional_info: { Type: 't2' }, line: 2 }),
      ]);
      expect(errors).toEqual([
        { line: 3, message: 'cost is not a number' },
        { line: 4, message: 'currency is not an ISO 4217 code' },
      ]);
      await expect(plugin.verify({ options: { base_url: 'ftp://x' }, secret_data: {} })).rejects.toThrow(PluginError);
      const many = Array.from({ length: 101 }, (_, i) => files.url(`/${i}.csv`));
      await expect(plugin.verify({ options: { base_url: many }, secret_data: {} })).rejects.toThrow(/more than 100 URLs/);
      await expect(plugin.verify({ options: { base_url: many.slice(1) }, secret_data: {} })).resolves.toBeUndefined();
    } finally {
      await files.close();
    }
  });

  it('keeps tag and info columns called __proto__ or constructor as data, and touches no prototype', async () => {
    const files = await serveFiles({
      '/p.csv': 'cost,currency,billed_date,tags.__proto__,tags.constructor,additional_info.__proto__,tags\n1,USD,2024-02-03,a,b,c,"{""__proto__"": {""polluted"": 1}, ""x"": ""y""}"\n',
    });
    try {
      const plugin = httpFilePlugin({ outbound: LOOPBACK_ONLY });
      const pages: DataPage[] = [];
      for await (const p of plugin.getData({ options: { base_url: files.url('/p.csv') }, secret_data: {}, task_options: { base_url: files.url('/p.csv') }, signal: new AbortController().signal })) pages.push(p);
      const [rec] = pages.flatMap((p) => p.results);
      expect(JSON.parse(JSON.stringify(rec.tags))).toEqual(JSON.parse('{"__proto__": {"polluted": 1}, "constructor": "b", "x": "y"}'));
      expect(Object.getPrototypeOf(rec.tags)).toBe(Object.prototype);
      expect(Object.keys(rec.additional_info)).toEqual(['__proto__']);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    } finally {
      await files.close();
    }
  });
});

// issue #32: a fetched body has a total deadline, a minimum rate and a size bound
describe('fetch guard', () => {
  /** A body that sends `bytes` every `everyMs` until destroyed. */
  const dripping = (bytes: number, everyMs: number) => {
    const body = new PassThrough();
    const timer = setInterval(() => body.write(Buffer.alloc(bytes, 120)), everyMs);
    body.on('close', () => clearInterval(timer));
    return body;
  };
  const drain = async (body: Readable, limits: BodyLimits, consumerMs = 0) => {
    let n = 0;
    for await (const c of guardBody(body, limits)) {
      n += c.length;
      if (consumerMs) await new Promise((r) => setTimeout(r, consumerMs));
    }
    return n;
  };
  const limits: BodyLimits = { timeoutMs: 60_000, minBytesPerSecond: 1000, rateWindowMs: 200, maxBytes: 1 << 30 };

  it('fails a source slower than the minimum rate over a window, and destroys its body', async () => {
    const body = dripping(10, 50);
    await expect(drain(body, limits)).rejects.toMatchObject({ code: 'ERROR_FETCH_TOO_SLOW', message: expect.stringMatching(/slower than 1000 bytes\/s/) });
    expect(body.destroyed).toBe(true);
  });

  it('counts only the time spent waiting for the source: a slow consumer never fails a fast source', async () => {
    const body = Readable.from((function* () {
      for (let i = 0; i < 8; i++) yield Buffer.alloc(1000, 120);
    })());
    // 100 ms of work per chunk: 8 chunks over 800 ms, 4 windows of 200 ms, at 10 kB/s as the consumer sees it.
    expect(await drain(body, { ...limits, minBytesPerSecond: 1_000_000 }, 100)).toBe(8000);
  });

  it('fails a body past its total deadline, even at a good rate, and one past its size bound', async () => {
    await expect(drain(dripping(1000, 20), { ...limits, timeoutMs: 300 })).rejects.toMatchObject({ code: 'ERROR_FETCH_TOO_SLOW', message: expect.stringMatching(/did not arrive within 0.3 s/) });
    await expect(drain(dripping(1000, 5), { ...limits, maxBytes: 5000 })).rejects.toMatchObject({ code: 'ERROR_COLLECT_LIMIT', message: 'The file is larger than 5000 bytes (COLLECT_MAX_BYTES).' });
  });
});
