import type { ClientBase, Connection } from 'pg';
import { rowInto, writeRow } from './csv-scan';
import { SCAN_NONE } from './scan-kinds';

/**
 * `COPY (query) TO STDOUT` with bind parameters, and its rows as raw bytes.
 *
 * COPY takes no bind parameters, and no value is ever spliced into SQL text. Instead each parameter
 * is bound, as usual, to `set_config('inventory_export.p<n>', $n::<type>::text, true)` (transaction
 * local), and in the query each `$n` becomes `(SELECT current_setting('inventory_export.p<n>')::<type>)`:
 * the value round-trips through its type's text form within the same session, and the scalar
 * subquery is computed once per query (an InitPlan, usable in index conditions). The types are the
 * ones PostgreSQL infers for the statement (PREPARE, then pg_prepared_statements).
 */

const GUC = 'inventory_export.p';
const STATEMENT = 'inventory_export_copy';
const TYPE = /^[a-z_][a-z0-9_ ]*(\[\])*$/;

/**
 * `sql` with each parameter placeholder `$n` replaced by `replace(n)`. Placeholders are found by
 * PostgreSQL's lexical rules for what our statements contain: string literals ('' doubled, E'' with
 * backslash escapes) and quoted identifiers are skipped; dollar quotes and comments are refused.
 */
export function replacePlaceholders(sql: string, replace: (n: number) => string): string {
  let out = '';
  let i = 0;
  const identChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_$]/.test(c);
  while (i < sql.length) {
    const ch = sql[i];
    if (ch === "'" || ch === '"') {
      const escapes = ch === "'" && (sql[i - 1] === 'E' || sql[i - 1] === 'e') && !identChar(sql[i - 2]);
      let j = i + 1;
      for (;;) {
        if (j >= sql.length) throw new Error('unterminated quote in SQL');
        if (escapes && sql[j] === '\\') j += 2;
        else if (sql[j] === ch && sql[j + 1] === ch) j += 2;
        else if (sql[j] === ch) break;
        else j += 1;
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (ch === '$') {
      const m = /^\$([0-9]+)/.exec(sql.slice(i, i + 12));
      if (!m || identChar(sql[i - 1])) throw new Error('unexpected $ in SQL');
      out += replace(Number(m[1]));
      i += m[0].length;
    } else if ((ch === '-' && sql[i + 1] === '-') || (ch === '/' && sql[i + 1] === '*')) {
      throw new Error('unexpected comment in SQL');
    } else {
      out += ch;
      i += 1;
    }
  }
  return out;
}

/** `text` (with `$n` placeholders for `values`) as a statement without parameters, for COPY. */
export async function bindForCopy(client: ClientBase, text: string, values: unknown[]): Promise<string> {
  if (values.length === 0) return text;
  await client.query(`PREPARE ${STATEMENT} AS ${text}`);
  let types: string[];
  try {
    const r = await client.query(`SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = $1`, [STATEMENT]);
    types = r.rows[0].types;
  } finally {
    await client.query(`DEALLOCATE ${STATEMENT}`);
  }
  if (types.length !== values.length || !types.every((t) => TYPE.test(t))) throw new Error(`unexpected parameter types ${types.join(', ')}`);
  const sets: string[] = [];
  const bound: unknown[] = [];
  values.forEach((v, i) => {
    if (v === null || v === undefined) return;
    bound.push(v);
    sets.push(`set_config('${GUC}${i + 1}', $${bound.length}::${types[i]}::text, true)`);
  });
  if (sets.length > 0) await client.query(`SELECT ${sets.join(', ')}`, bound);
  return replacePlaceholders(text, (n) => {
    if (n < 1 || n > values.length) throw new Error(`no value for $${n}`);
    const v = values[n - 1];
    if (v === null || v === undefined) return `NULL::${types[n - 1]}`;
    // The scalar subquery is cast again so that `x = ANY($n)` stays an array expression: a bare
    // `ANY((SELECT ...))` would read as `ANY (subquery)` and compare x with the whole array.
    return `(SELECT current_setting('${GUC}${n}')::${types[n - 1]})::${types[n - 1]}`;
  });
}

type DataListener = (chunk: Buffer) => void;

/**
 * A `COPY ... TO STDOUT` run on a pg client: `onRow` gets each row's bytes (`buf` from `start` to
 * `end`; PostgreSQL sends one CopyData message per row), synchronously and only for the call (copy
 * what you keep). `pause` and `resume` stop and restart reading from the server (which then waits:
 * backpressure); `abort` ends the connection (the caller must then discard the client).
 *
 * While rows stream, this reads the socket itself (pg would make an object of every message): it
 * takes the connection's `data` listeners and gives them back, with the rest of the stream, at the
 * first message that is not a row (CopyDone, an error, a notice), which pg then handles as usual.
 */
export class CopyOut {
  private connection?: Connection;
  private settle?: { resolve: () => void; reject: (e: unknown) => void };
  private error?: unknown;
  private pgListeners?: DataListener[];
  private rest?: Buffer;
  readonly done: Promise<void>;

  constructor(
    private readonly text: string,
    private readonly onRow: (buf: Buffer, start: number, end: number) => void,
  ) {
    this.done = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  submit(connection: Connection) {
    this.connection = connection;
    connection.query(this.text);
    // pg has consumed everything up to its last ReadyForQuery: what arrives now is this COPY's answer.
    const stream = connection.stream;
    this.pgListeners = stream.listeners('data') as DataListener[];
    stream.removeAllListeners('data');
    stream.on('data', this.onData);
  }

  private readonly onData = (chunk: Buffer) => {
    let off = 0;
    if (this.rest) {
      // Complete the message split across reads (copying only it, not the whole read).
      const head = Buffer.concat([this.rest, chunk.subarray(0, Math.max(0, 5 - this.rest.length))]);
      if (head.length < 5) {
        this.rest = head;
        return;
      }
      if (head[0] !== 0x64 && head[0] !== 0x48) return this.handBack(Buffer.concat([this.rest, chunk]));
      const total = 1 + head.readUInt32BE(1);
      const need = total - this.rest.length;
      if (chunk.length < need) {
        this.rest = Buffer.concat([this.rest, chunk]);
        return;
      }
      const msg = Buffer.concat([this.rest, chunk.subarray(0, need)]);
      this.rest = undefined;
      off = need;
      if (msg[0] === 0x64) this.row(msg, 5, total);
    }
    while (chunk.length - off >= 5) {
      const code = chunk[off];
      if (code !== 0x64 && code !== 0x48) return this.handBack(chunk.subarray(off)); // not CopyData / CopyOutResponse
      const end = off + 1 + chunk.readUInt32BE(off + 1);
      if (end > chunk.length) break;
      if (code === 0x64) this.row(chunk, off + 5, end);
      off = end;
    }
    if (off < chunk.length) this.rest = Buffer.from(chunk.subarray(off));
  };

  private handBack(rest: Buffer) {
    const stream = this.connection!.stream;
    stream.off('data', this.onData);
    for (const l of this.pgListeners!) stream.on('data', l);
    for (const l of this.pgListeners!) l(rest);
  }

  private row(buf: Buffer, start: number, end: number) {
    if (this.error !== undefined) return;
    try {
      this.onRow(buf, start, end);
    } catch (e) {
      this.abort(e);
    }
  }

  /** A row that reached pg's parser (after a notice). */
  handleCopyData(msg: { chunk: Buffer }) {
    this.row(msg.chunk, 0, msg.chunk.length);
  }

  handleError(err: unknown) {
    this.settle?.reject(this.error ?? err);
    this.settle = undefined;
  }

  handleReadyForQuery() {
    if (this.error !== undefined) this.settle?.reject(this.error);
    else this.settle?.resolve();
    this.settle = undefined;
  }

  handleCommandComplete() {}
  handleRowDescription() {}
  handleDataRow() {}
  handleEmptyQuery() {}
  handlePortalSuspended() {}

  pause() {
    this.connection?.stream.pause();
  }

  resume() {
    this.connection?.stream.resume();
  }

  get aborted() {
    return this.error !== undefined;
  }

  /** Stops the COPY by closing the connection; `done` rejects with `reason`. */
  abort(reason: unknown) {
    this.error ??= reason;
    this.connection?.stream.destroy();
  }
}

const BATCH_BYTES = 256 * 1024;

/**
 * Collects rows' bytes into large buffers, written one at a time by `write` (which resolves once a
 * buffer is consumed, so buffers are reused); `busy` is called when a write starts (the caller stops
 * the source) and `idle` when all are written.
 */
export class ByteBatcher {
  private readonly free: Buffer[] = [];
  private buf: Buffer;
  private pos = 0;
  private readonly queue: Buffer[] = [];
  private pumping?: Promise<void>;
  private failed?: unknown;

  constructor(
    private readonly write: (b: Buffer) => Promise<void>,
    private readonly hooks: { busy: () => void; idle: () => void; error: (e: unknown) => void },
  ) {
    this.buf = Buffer.allocUnsafe(BATCH_BYTES);
  }

  private room(n: number) {
    if (this.pos + n > this.buf.length) this.flush(n);
  }

  /** Bytes `start`..`end` of `src`, then CRLF. */
  line(src: Buffer, start: number, end: number) {
    this.room(end - start + 2);
    this.pos += src.copy(this.buf, this.pos, start, end);
    this.buf[this.pos++] = 13;
    this.buf[this.pos++] = 10;
  }

  /** Bytes `start`..`end` of `src`. */
  bytes(src: Buffer, start: number, end: number) {
    if (end <= start) return;
    this.room(end - start);
    this.pos += src.copy(this.buf, this.pos, start, end);
  }

  /** Lets `fill` write up to `n` bytes at the current position; it answers the new one, or -1 (nothing written). */
  put(n: number, fill: (dst: Buffer, pos: number) => number): boolean {
    this.room(n);
    const p = fill(this.buf, this.pos);
    if (p < 0) return false;
    this.pos = p;
    return true;
  }

  /** The CSV line of a COPY row src[start..end) as rowInto writes it, if it can; else nothing is written and false. */
  scannedLine(src: Buffer, start: number, end: number, scan: readonly number[]): boolean {
    this.room(end - start + 2);
    const p = rowInto(this.buf, this.pos, src, start, end, scan);
    if (p < 0) return false;
    this.pos = p;
    return true;
  }

  text(s: string) {
    this.room(Buffer.byteLength(s));
    this.pos += this.buf.write(s, this.pos);
  }

  private flush(min = 0) {
    if (this.pos > 0) this.queue.push(this.buf.subarray(0, this.pos));
    const reuse = min <= BATCH_BYTES ? this.free.pop() : undefined;
    this.buf = reuse ?? Buffer.allocUnsafe(Math.max(BATCH_BYTES, min));
    this.pos = 0;
    if (this.pumping || this.queue.length === 0) return;
    this.hooks.busy();
    this.pumping = (async () => {
      try {
        while (this.queue.length > 0) {
          const b = this.queue.shift()!;
          await this.write(b);
          if (b.buffer.byteLength === BATCH_BYTES && b.byteOffset === 0) this.free.push(Buffer.from(b.buffer, 0, BATCH_BYTES));
        }
      } catch (e) {
        this.failed ??= e;
        this.hooks.error(e);
      } finally {
        this.pumping = undefined;
        if (this.failed === undefined) this.hooks.idle();
      }
    })();
  }

  /** Writes what is left; rejects if a write failed. */
  async finish() {
    this.flush();
    while (this.pumping) await this.pumping;
    if (this.failed !== undefined) throw this.failed;
  }
}

/** The first field of a CSV row (RFC 4180: quoted with doubled quotes, or plain up to the comma). */
export function firstCsvField(row: Buffer, start = 0, end = row.length): string {
  if (row[start] !== 0x22) {
    const comma = row.indexOf(0x2c, start);
    return row.toString('utf8', start, comma === -1 || comma > end ? end : comma);
  }
  let text = '';
  for (let i = start + 1; ; ) {
    const q = row.indexOf(0x22, i);
    if (q === -1 || q >= end) throw new Error('unterminated CSV field');
    if (row[q + 1] === 0x22) {
      text += row.toString('utf8', i, q + 1);
      i = q + 2;
    } else {
      return text + row.toString('utf8', i, q);
    }
  }
}

/**
 * The handler of each COPY row of a csvCopySelect statement, writing its CSV line (CRLF) to `out`: a row
 * whose first field is empty is the line after it, each cell's field as `scan[k]` says (export/csv-scan.ts:
 * kept, guarded on its first byte, or a text array joined: rowInto's one pass, or writeRow when a field
 * must be rewritten); otherwise that field is the JSON of the row's raw values, and `nodeLine` formats them.
 */
export function csvRowWriter(out: ByteBatcher, nodeLine: (raw: unknown[]) => string, scan: readonly number[]) {
  // The fields after the last one Node looks at are copied as they are, not walked.
  let n = scan.length;
  while (n > 0 && scan[n - 1] === SCAN_NONE) n--;
  scan = scan.slice(0, n);
  const noScan = n === 0;
  return (buf: Buffer, start: number, end: number) => {
    const last = buf[end - 1] === 0x0a ? end - (buf[end - 2] === 0x0d ? 2 : 1) : end; // the row without its line end
    if (buf[start] !== 0x2c) out.text(nodeLine(JSON.parse(firstCsvField(buf, start, last)) as unknown[]));
    else if (noScan) out.line(buf, start + 1, last);
    else if (!out.scannedLine(buf, start + 1, last, scan)) writeRow(out, buf, start + 1, last, scan);
  };
}

/**
 * Runs `COPY (select) TO STDOUT WITH (FORMAT csv)` of a csvCopySelect statement into `write`, as CSV
 * lines (CRLF), each row as csvRowWriter writes it. Reading from the server stops while `write`
 * waits (the client is slow to take the file). On failure the connection is closed: discard the client.
 */
export async function copyCsvLines(
  client: ClientBase,
  select: string,
  write: (b: Buffer) => Promise<void>,
  nodeLine: (raw: unknown[]) => string,
  scan: readonly number[],
) {
  let copy: CopyOut | undefined = undefined;
  const out = new ByteBatcher(write, { busy: () => copy?.pause(), idle: () => copy?.resume(), error: (e) => copy?.abort(e) });
  copy = new CopyOut(`COPY (${select}) TO STDOUT WITH (FORMAT csv)`, csvRowWriter(out, nodeLine, scan));
  // An abort ends the connection: the client reports it as an error event (and is discarded on release).
  const ignore = () => {};
  client.on('error', ignore);
  try {
    client.query(copy);
    await copy.done;
    await out.finish();
  } finally {
    if (!copy.aborted) client.off('error', ignore);
  }
}
