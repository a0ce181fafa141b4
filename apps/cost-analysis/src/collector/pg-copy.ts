import { once } from 'node:events';
import type { PoolClient } from 'pg';

 

/**
 * `COPY ... FROM STDIN` on a pg client, with backpressure: the fastest way rows reach Postgres.
 * A small submittable (the protocol hooks pg's Client calls on its active query), so the project
 * needs no extra dependency. Rows go in PostgreSQL's text format (see `copyText`).
 */
export class CopyIn {
  private connection: any;
  private error: Error | undefined;
  private rowCount = 0;
  private readonly ready: Promise<void>;
  private readonly done: Promise<number>;
  private settleReady!: [() => void, (e: Error) => void];
  private settleDone!: [(n: number) => void, (e: Error) => void];

  constructor(private readonly text: string) {
    this.ready = new Promise((res, rej) => (this.settleReady = [res, rej]));
    this.done = new Promise((res, rej) => (this.settleDone = [res, rej]));
    // Either may be rejected before anyone awaits it.
    this.ready.catch(() => {});
    this.done.catch(() => {});
  }

  /** Starts the COPY on `client`; resolves once Postgres is ready to take data. */
  static async start(client: PoolClient, text: string): Promise<CopyIn> {
    const copy = new CopyIn(text);
    void client.query(copy as any);
    await copy.ready;
    return copy;
  }

  // ---- hooks called by pg's Client
  submit(connection: any) {
    this.connection = connection;
    connection.query(this.text);
  }
  handleCopyInResponse() {
    this.settleReady[0]();
  }
  handleCommandComplete(msg: { text?: string }) {
    this.rowCount = Number(/(\d+)$/.exec(msg.text ?? '')?.[1] ?? 0);
  }
  handleReadyForQuery() {
    if (this.error) this.settleDone[1](this.error);
    else this.settleDone[0](this.rowCount);
  }
  /** pg drops a failed query before ReadyForQuery arrives, so an error settles everything at once. */
  handleError(err: Error) {
    this.error = err;
    this.settleReady[1](err);
    this.settleDone[1](err);
  }
  handleCopyData() {}
  handleRowDescription() {}
  handleDataRow() {}
  handleEmptyQuery() {}
  handlePortalSuspended() {}

  /** Sends a chunk; waits when the socket's buffer is full. Fails fast once Postgres reported an error. */
  async write(chunk: Buffer | string): Promise<void> {
    if (this.error) throw this.error;
    this.connection.sendCopyFromChunk(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    const stream = this.connection.stream;
    if (stream.writableNeedDrain) await once(stream, 'drain');
  }

  /** Ends the COPY; resolves with the number of rows copied. */
  async end(): Promise<number> {
    if (!this.error) this.connection.endCopyFrom();
    return this.done;
  }

  /** Aborts the COPY (the statement fails, so the transaction must be rolled back). */
  async fail(reason: string): Promise<void> {
    if (!this.error) this.connection.sendCopyFail(reason);
    await this.done.catch(() => {});
  }
}

/** A value PostgreSQL cannot store in a text or jsonb column: the row is bad data, not a transient failure. */
export class CopyValueError extends Error {}

/**
 * One value in COPY text format: \N for null, backslash escapes for the four special characters. A NUL
 * character cannot be stored in PostgreSQL text at all (COPY would fail the whole statement): it throws
 * CopyValueError, so the caller reports the row instead.
 */
export function copyText(v: string | number | null): string {
  if (v === null) return '\\N';
  if (typeof v === 'number') return String(v);
  // A scan for the four special characters and NUL (all below 14, or the backslash): cheaper than a
  // regular expression on the short values of a cost row (issue #31).
  let i = 0;
  for (; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 14 || c === 92) break;
  }
  if (i === v.length) return v;
  if (!/[\\\t\n\r\0]/.test(v)) return v;
  if (v.includes('\0')) throw new CopyValueError('contains a NUL character');
  return v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

/** `\u0000` escaped in JSON text (an odd number of backslashes before `u0000`): jsonb refuses it. */
const JSON_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/** A JSON value in COPY text format for a jsonb column; CopyValueError if jsonb cannot hold it (NUL). */
export function copyJson(v: unknown): string {
  if (isEmptyObject(v)) return '{}'; // most rows carry no tags or additional_info: skip the stringify
  const json = JSON.stringify(v);
  if (json.includes('\\u0000') && JSON_NUL.test(json)) throw new CopyValueError('contains a NUL character');
  return copyText(json);
}

function isEmptyObject(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k in v) if (Object.hasOwn(v, k)) return false;
  return true;
}
