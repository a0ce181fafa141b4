import { StringDecoder } from 'node:string_decoder';
import { PluginError } from './types';

export interface CsvBatch {
  records: string[][];
  /** Line (1-based) each record starts on. */
  lines: number[];
}

/** What one record of a source may hold: a source past any of them fails at once (ERROR_CSV_LIMIT). */
export interface CsvLimits {
  /** Characters of one field, a quoted one (line breaks and all) included. */
  maxFieldChars: number;
  /** Characters of one record: a line, or the lines a quoted field spans. */
  maxRecordChars: number;
  /** Fields of one record (the header's columns included). */
  maxColumns: number;
}

export const DEFAULT_CSV_LIMITS: CsvLimits = { maxFieldChars: 64 * 1024, maxRecordChars: 1024 * 1024, maxColumns: 1000 };

const START = 0; // at the start of a field
const PLAIN = 1; // in an unquoted field (or after a quoted section closed)
const QUOTED = 2; // inside quotes
const QUOTE = 3; // a quote inside quotes: the end of the section, or the first of a doubled quote

/**
 * A streaming RFC 4180 CSV parser that reads each character once: the state of a record cut by a
 * chunk boundary (its fields so far, the open field, whether it is inside quotes) is kept, never the
 * text to scan again. Lines without a quote take a split(',') fast path. Every field, record and
 * column count is bounded (`CsvLimits`), so memory stays bounded whatever a source sends.
 */
export class CsvParser {
  private fields: string[] = [];
  private field = '';
  private state = START;
  private inRecord = false;
  private quoted = false; // the record has a quoted section (a `""` record is not a blank line)
  private plainCr = false; // the field's last character is an unquoted \r (dropped before \n)
  private recordChars = 0;
  private startLine = 0;
  private line = 0; // lines consumed
  private out: CsvBatch = { records: [], lines: [] };

  constructor(private readonly limits: CsvLimits = DEFAULT_CSV_LIMITS) {}

  private fail(what: string, bound: number): never {
    throw new PluginError('ERROR_CSV_LIMIT', `CSV error at line ${this.startLine || this.line + 1}: ${what} (the bound is ${bound}).`);
  }

  /** Parses `s` (the next decoded text); answers the records it completed. */
  push(s: string): CsvBatch {
    let pos = 0;
    const n = s.length;
    let quote = -2; // the next quote at or after pos (-1: none in s), found lazily
    while (pos < n) {
      if (!this.inRecord) {
        if (quote !== -1 && quote < pos) quote = s.indexOf('"', pos);
        const nl = s.indexOf('\n', pos);
        if (nl >= 0 && (quote < 0 || quote > nl)) {
          this.fastLine(s, pos, nl);
          pos = nl + 1;
          continue;
        }
        if (nl < 0 && quote < 0) {
          this.plainTail(s, pos);
          break;
        }
        this.inRecord = true;
        this.startLine = this.line + 1;
      }
      pos = this.slow(s, pos);
    }
    const batch = this.out;
    this.out = { records: [], lines: [] };
    return batch;
  }

  /** Ends the source: the last record (without a final line break) is completed. */
  end(): CsvBatch {
    if (this.state === QUOTED) throw new PluginError('ERROR_INVALID_CSV', `CSV error at line ${this.startLine}: a quoted field is not closed.`);
    if (this.inRecord) this.endRecord();
    return this.out;
  }

  /** A whole line without a quote. */
  private fastLine(s: string, pos: number, nl: number) {
    this.line++;
    const len = nl - pos;
    if (len > this.limits.maxRecordChars) {
      this.startLine = this.line;
      this.fail(`a line is longer than ${this.limits.maxRecordChars} characters`, this.limits.maxRecordChars);
    }
    let row = s.slice(pos, nl);
    if (row.endsWith('\r')) row = row.slice(0, -1);
    if (row === '') return;
    const fields = row.split(',');
    this.startLine = this.line;
    this.check(fields, len);
    this.out.records.push(fields);
    this.out.lines.push(this.line);
  }

  /** The rest of a chunk: no line break and no quote in it, so only commas to split on. */
  private plainTail(s: string, pos: number) {
    this.inRecord = true;
    this.startLine = this.line + 1;
    const parts = s.slice(pos).split(',');
    this.recordChars = s.length - pos;
    this.field = parts.pop() as string;
    this.fields = parts;
    this.state = this.field === '' ? START : PLAIN;
    if (this.recordChars > this.limits.maxRecordChars) this.fail(`a record is longer than ${this.limits.maxRecordChars} characters`, this.limits.maxRecordChars);
    this.plainCr = this.field.endsWith('\r');
    this.check(this.fields, this.recordChars);
    if (this.field.length > this.limits.maxFieldChars) this.fail(`a field is longer than ${this.limits.maxFieldChars} characters`, this.limits.maxFieldChars);
  }

  private check(fields: string[], chars: number) {
    const { maxColumns, maxFieldChars } = this.limits;
    if (fields.length > maxColumns) this.fail(`a record has more than ${maxColumns} fields`, maxColumns);
    if (chars > maxFieldChars && fields.some((f) => f.length > maxFieldChars)) this.fail(`a field is longer than ${maxFieldChars} characters`, maxFieldChars);
  }

  private append(text: string) {
    this.field += text;
    if (this.field.length > this.limits.maxFieldChars) {
      this.fail(`${this.state === QUOTED ? 'a quoted field' : 'a field'} is longer than ${this.limits.maxFieldChars} characters`, this.limits.maxFieldChars);
    }
  }

  private endField() {
    this.fields.push(this.field);
    this.field = '';
    this.plainCr = false;
    this.state = START;
    if (this.fields.length > this.limits.maxColumns) this.fail(`a record has more than ${this.limits.maxColumns} fields`, this.limits.maxColumns);
  }

  private endRecord() {
    if (this.state !== QUOTED && this.plainCr) this.field = this.field.slice(0, -1);
    const blank = !this.quoted && this.fields.length === 0 && this.field === '';
    this.fields.push(this.field);
    if (!blank) {
      this.out.records.push(this.fields);
      this.out.lines.push(this.startLine);
    }
    this.fields = [];
    this.field = '';
    this.plainCr = false;
    this.state = START;
    this.inRecord = false;
    this.quoted = false;
    this.recordChars = 0;
    this.line++;
  }

  /** The character state machine, from `i` to the end of the record or of `s`; answers where it stopped. */
  private slow(s: string, i: number): number {
    const n = s.length;
    const start = i;
    const { maxRecordChars } = this.limits;
    while (i < n) {
      if (this.state === QUOTED) {
        const q = s.indexOf('"', i);
        const stop = q < 0 ? n : q;
        this.countBreaks(s, i, stop);
        this.append(s.slice(i, stop));
        if (q < 0) {
          i = n;
          break;
        }
        this.state = QUOTE;
        i = q + 1;
        continue;
      }
      const c = s.charCodeAt(i);
      if (this.state === QUOTE) {
        if (c === 34) {
          this.state = QUOTED;
          this.append('"');
          i++;
          continue;
        }
        this.state = PLAIN;
      }
      if (c === 10) {
        i++;
        this.recordChars += i - start;
        if (this.recordChars > maxRecordChars) this.fail(`a record is longer than ${maxRecordChars} characters`, maxRecordChars);
        this.endRecord();
        return i;
      }
      if (c === 44) {
        this.endField();
        i++;
      } else if (c === 34 && this.state === START) {
        this.state = QUOTED;
        this.quoted = true;
        i++;
      } else {
        // A run of ordinary characters of an unquoted field, appended as one slice.
        let j = i + 1;
        for (let d = s.charCodeAt(j); j < n && d !== 44 && d !== 10; d = s.charCodeAt(++j));
        this.state = PLAIN;
        this.append(s.slice(i, j));
        this.plainCr = s.charCodeAt(j - 1) === 13;
        i = j;
      }
    }
    this.recordChars += i - start;
    if (this.recordChars > maxRecordChars) this.fail(`a record is longer than ${maxRecordChars} characters`, maxRecordChars);
    return i;
  }

  private countBreaks(s: string, from: number, to: number) {
    for (let k = s.indexOf('\n', from); k >= 0 && k < to; k = s.indexOf('\n', k + 1)) this.line++;
  }
}

/**
 * A streaming RFC 4180 CSV reader: records in batches as the bytes arrive (never the whole file), each
 * with the line it starts on. Quoted fields may hold commas, doubled quotes and line breaks. A BOM is
 * dropped, blank lines skipped, CRLF accepted. Linear in the input; bounded by `limits`.
 */
export async function* readCsv(stream: AsyncIterable<Buffer | string>, limits: CsvLimits = DEFAULT_CSV_LIMITS): AsyncGenerator<CsvBatch> {
  const decoder = new StringDecoder('utf8');
  const parser = new CsvParser(limits);
  let first = true;
  for await (const chunk of stream) {
    let text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    if (first && text.length) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    const batch = parser.push(text);
    if (batch.records.length) yield batch;
  }
  const rest = parser.push(decoder.end());
  const last = parser.end();
  rest.records.push(...last.records);
  rest.lines.push(...last.lines);
  if (rest.records.length) yield rest;
}
