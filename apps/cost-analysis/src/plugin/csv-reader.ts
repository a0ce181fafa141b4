import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { PluginError } from './types';

export interface CsvBatch {
  records: string[][];
  /** Line (1-based) each record starts on. */
  lines: number[];
}

/**
 * A streaming RFC 4180 CSV reader: records in batches as the bytes arrive (never the whole file), each
 * with the line it starts on. Lines without a quote take a split(',') fast path; quoted fields may hold
 * commas, doubled quotes and line breaks. A BOM is dropped, blank lines skipped, CRLF accepted.
 */
export async function* readCsv(stream: Readable): AsyncGenerator<CsvBatch> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  let line = 0;
  let first = true;

  /** Parses whole records from `text`; leaves an incomplete last one there unless `final`. */
  const take = (final: boolean): CsvBatch => {
    const records: string[][] = [];
    const lines: number[] = [];
    let pos = 0;
    const n = text.length;
    while (pos < n) {
      const nl = text.indexOf('\n', pos);
      if (nl < 0 && !final) break;
      const end = nl < 0 ? n : nl;
      const quote = text.indexOf('"', pos);
      if (quote < 0 || quote > end) {
        line++;
        let row = text.slice(pos, end);
        if (row.endsWith('\r')) row = row.slice(0, -1);
        if (row !== '') {
          records.push(row.split(','));
          lines.push(line);
        }
        pos = end + 1;
        continue;
      }
      // Slow path: a quoted field somewhere in this record.
      const startLine = line + 1;
      const fields: string[] = [];
      let field = '';
      let i = pos;
      let inQuotes = false;
      let breaks = 0;
      let complete = false;
      while (i < n) {
        const c = text[i];
        if (inQuotes) {
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            if (i + 1 >= n && !final) break; // a quote at the end of the data: wait for more
            inQuotes = false;
          } else {
            if (c === '\n') breaks++;
            field += c;
          }
          i++;
        } else if (c === '"' && field === '') {
          inQuotes = true;
          i++;
        } else if (c === ',') {
          fields.push(field);
          field = '';
          i++;
        } else if (c === '\n') {
          complete = true;
          i++;
          break;
        } else {
          if (c !== '\r' || text[i + 1] !== '\n') field += c;
          i++;
        }
      }
      if (!complete && i >= n && final && !inQuotes) complete = true;
      if (!complete) {
        if (final) throw new PluginError('ERROR_INVALID_CSV', `CSV error at line ${startLine}: a quoted field is not closed.`);
        break;
      }
      fields.push(field);
      line += breaks + 1;
      records.push(fields);
      lines.push(startLine);
      pos = i;
    }
    text = text.slice(pos);
    return { records, lines };
  };

  for await (const chunk of stream) {
    text += decoder.write(chunk as Buffer);
    if (first && text.length) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    const batch = take(false);
    if (batch.records.length) yield batch;
  }
  text += decoder.end();
  const last = take(true);
  if (last.records.length) yield last;
}
