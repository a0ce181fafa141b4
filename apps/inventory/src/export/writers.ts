import type { Writable } from 'node:stream';
import { createRequire } from 'node:module';
import type ExcelJS from 'exceljs';
import { csvLine } from '@platform/core';
import { drained, written } from './drain';
import type { Cell } from './format';
import { ZipWriter } from './zip';

/**
 * Writes tables (one per export option) into one file, streaming: a table's rows are written as they
 * come and never held, and the writer waits whenever the destination is not reading fast enough.
 */
export interface TableWriter {
  readonly contentType: string;
  readonly extension: string;
  begin(name: string, title: string | undefined, header: string[]): Promise<void>;
  /** Rows of cells: a CSV writes them with csvLine (formula guard, quoting), Excel as text. */
  rows(rows: Cell[][]): Promise<void>;
  /**
   * CSV writers only: lines already formatted (as csvLine writes them), written as they are; resolves
   * once the bytes are consumed (the buffer may then be reused).
   */
  lines?(bytes: Buffer): Promise<void>;
  end(): Promise<void>;
  /** Completes the file (the destination stays open; the caller ends it). */
  finish(): Promise<void>;
}

async function writeTo(out: Writable, data: string | Buffer) {
  if (!out.write(data)) await drained(out);
}

/** One CSV file (one option): header line, then rows. The title has no place in a CSV and is left out. */
export class CsvWriter implements TableWriter {
  readonly contentType = 'text/csv; charset=utf-8';
  readonly extension = 'csv';
  constructor(private readonly out: Writable) {}
  begin(_name: string, _title: string | undefined, header: string[]) {
    return writeTo(this.out, csvLine(header));
  }
  rows(rows: Cell[][]) {
    let chunk = '';
    for (const r of rows) chunk += csvLine(r);
    return writeTo(this.out, chunk);
  }
  lines(bytes: Buffer) {
    return written(this.out, bytes);
  }
  async end() {}
  async finish() {}
}

/** Several CSV files (several options) in one ZIP archive, `<sheet name>.csv` each. */
export class CsvZipWriter implements TableWriter {
  readonly contentType = 'application/zip';
  readonly extension = 'zip';
  private readonly zip: ZipWriter;
  private current?: Awaited<ReturnType<ZipWriter['entry']>>;
  constructor(out: Writable) {
    this.zip = new ZipWriter(out);
  }
  async begin(name: string, _title: string | undefined, header: string[]) {
    this.current = await this.zip.entry(`${name}.csv`);
    await this.current.write(csvLine(header));
  }
  rows(rows: Cell[][]) {
    let chunk = '';
    for (const r of rows) chunk += csvLine(r);
    return this.current!.write(chunk);
  }
  lines(bytes: Buffer) {
    return this.current!.write(bytes);
  }
  async end() {
    await this.current?.close();
    this.current = undefined;
  }
  finish() {
    return this.zip.finish();
  }
}

const requireHere = createRequire(__filename);
let excel: typeof ExcelJS | undefined;

const HEADER_FILL: ExcelJS.Fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FF0A3764' } };

/**
 * An Excel workbook, one sheet per option, as upstream lays it out (title in A1 when given, a styled
 * header row, then the rows). exceljs' streaming writer keeps no rows and no shared strings in memory.
 */
export class XlsxWriter implements TableWriter {
  /**
   * exceljs is loaded on the first Excel export, not at start: it is 28 MB of RSS and ~0.5 s of
   * startup that a process serving no Excel export never needs (issue #14).
   */
  static create(out: Writable): XlsxWriter {
    excel ??= requireHere('exceljs') as typeof ExcelJS;
    return new XlsxWriter(out, excel);
  }

  readonly contentType = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
  readonly extension = 'xlsx';
  private readonly wb: ExcelJS.stream.xlsx.WorkbookWriter;
  private sheet?: ExcelJS.Worksheet;
  private constructor(
    private readonly out: Writable,
    excel: typeof ExcelJS,
  ) {
    this.wb = new excel.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
  }
  async begin(name: string, title: string | undefined, header: string[]) {
    const ws = this.wb.addWorksheet(name);
    ws.columns = header.map((h) => ({ width: Math.min(60, Math.max(12, h.length + 4)) }));
    if (title) {
      const t = ws.addRow([title]);
      t.font = { size: 24, bold: true, color: { argb: 'FF0A3763' } };
      t.commit();
    }
    const h = ws.addRow(header);
    h.eachCell((c) => {
      c.font = { size: 12, bold: true, color: { argb: 'FFFFFFFF' } };
      c.fill = HEADER_FILL;
      c.alignment = { horizontal: 'left', vertical: 'top', wrapText: true };
    });
    h.commit();
    this.sheet = ws;
  }
  async rows(rows: Cell[][]) {
    // Numbers as their text, as before cells could be numbers (a CSV needed to tell them apart).
    for (const r of rows) this.sheet!.addRow(r.map(String)).commit();
    if (this.out.writableNeedDrain) await drained(this.out);
  }
  async end() {
    await this.sheet?.commit();
    this.sheet = undefined;
  }
  async finish() {
    await this.wb.commit();
  }
}
