import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { waitFor } from '@platform/testing';
import { LineBuffer, createLogger, requestLineWriter, type RequestLine } from './index';

const until = (check: () => boolean) => waitFor(check, 5000, 'the lines', 5);

describe('LineBuffer (the logs destination)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'linebuffer-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes nothing until minLength is gathered or flush is called, then every line in order', async () => {
    const file = path.join(dir, 'out');
    const fd = openSync(file, 'w');
    const b = new LineBuffer(fd, { minLength: 1000 });
    for (let i = 0; i < 5; i++) b.write(`line ${i}\n`);
    await new Promise((r) => setTimeout(r, 20));
    expect(readFileSync(file, 'utf8')).toBe('');
    b.flush();
    await until(() => readFileSync(file, 'utf8').length === 35);
    for (let i = 5; i < 500; i++) b.write(`line ${i}\n`); // past minLength: written without a flush
    await until(() => readFileSync(file, 'utf8').split('\n').length > 400);
    b.flushSync();
    closeSync(fd);
    expect(readFileSync(file, 'utf8')).toBe(Array.from({ length: 500 }, (_, i) => `line ${i}\n`).join(''));
  });

  it('flushSync writes what is gathered, including multi-byte text, at once', () => {
    const file = path.join(dir, 'out');
    const fd = openSync(file, 'w');
    const b = new LineBuffer(fd);
    b.write('héllo ✓\n');
    b.write('second\n');
    b.flushSync();
    closeSync(fd);
    expect(readFileSync(file, 'utf8')).toBe('héllo ✓\nsecond\n');
  });

  it('a stuck reader: waits on EAGAIN, drops past maxBuffered and says how many, loses nothing else', async () => {
    // A FIFO with a reader that does not read yet: the pipe fills (64 KiB), writes answer EAGAIN.
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const b = new LineBuffer(writer, { minLength: 1024, maxBuffered: 200_000, retryMs: 10 });
    const line = (i: number) => `${JSON.stringify({ i, pad: 'x'.repeat(80) })}\n`;
    let accepted = 0;
    for (let i = 0; i < 5000; i++) if (b.write(line(i))) accepted++;
    expect(accepted).toBeLessThan(5000); // ~460 KB offered, 64 KiB in the pipe + 200 KB buffered
    let text = '';
    const chunk = Buffer.alloc(65536);
    const drain = () => {
      for (;;) {
        let n = 0;
        try {
          n = readSync(reader, chunk);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return;
          throw e;
        }
        if (n === 0) return;
        text += chunk.subarray(0, n).toString('utf8');
      }
    };
    await until(() => {
      drain();
      b.flush();
      return text.includes('log lines dropped');
    });
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    const dropped = lines.find((l) => l.msg === 'log lines dropped: the output was not read');
    expect(dropped.dropped).toBe(5000 - accepted);
    const kept = lines.filter((l) => typeof l.i === 'number').map((l) => l.i);
    expect(kept).toHaveLength(accepted);
    expect(kept).toEqual([...kept].sort((x, y) => x - y)); // in order, none twice
    closeSync(writer);
    closeSync(reader);
  });

  it('an output that fails (no reader: EPIPE) drops what it could not write and carries on', async () => {
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    closeSync(reader);
    const b = new LineBuffer(writer, { minLength: 10 });
    expect(b.write('one line that cannot be written\n')).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(b.write('another\n')).toBe(true); // no throw, no crash (SIGPIPE is ignored by node)
    b.flushSync();
    closeSync(writer);
  });
});

describe('requestLineWriter', () => {
  const sink = () => {
    const lines: string[] = [];
    return { lines, stream: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }) };
  };

  it('writes the bytes pino writes for the same fields (the time aside)', async () => {
    const a = sink();
    const b = sink();
    const ours = requestLineWriter(createLogger('svc', 'info', a.stream))!;
    const theirs = createLogger('svc', 'info', b.stream);
    const cases: RequestLine[] = [
      { req_id: 'r-1', domain_id: 'd1', user_id: 'u"1\\', method: 'POST', path: '/x/v1/y/get', status: 200, duration_ms: 1.23 },
      { req_id: 'r-2', method: 'GET', path: '/weird/\u2028\u0000é', status: 404, duration_ms: 0 },
      { req_id: 'r-3', path: '/p', status: 500, duration_ms: 12, trace_id: 't'.repeat(32), span_id: 's'.repeat(16) },
    ];
    for (const c of cases) {
      ours(c);
      theirs.info({ ...c }, 'request');
    }
    await new Promise((r) => setImmediate(r));
    const strip = (l: string) => l.replace(/"time":"[^"]+"/, '"time":""');
    expect(a.lines.map(strip)).toEqual(b.lines.map(strip));
    expect(a.lines.every((l) => JSON.parse(l).msg === 'request')).toBe(true);
  });

  it('is undefined when the logger does not log at info', () => {
    expect(requestLineWriter(createLogger('svc', 'warn', sink().stream))).toBeUndefined();
    expect(requestLineWriter(pino({ level: 'silent' }))).toBeUndefined();
  });
});
