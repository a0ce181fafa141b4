/** One field as RFC 4180 writes it: quoted when it holds a comma, quote or line break, quotes doubled. */
export function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled; lines end with CRLF. */
export function csvLine(values: string[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) line += ',';
    line += csvField(values[i]);
  }
  return `${line}\r\n`;
}
