/**
 * Bodies the fuzzer sends. Most are JSON values; a `Raw` node is written verbatim (text or bytes) where
 * a JavaScript value cannot say what we want to send: duplicate keys, 50,000-deep nesting (that
 * JSON.stringify would overflow the stack on), numbers JSON.parse turns into Infinity, invalid UTF-8.
 * Each Raw carries a short label, so a failure report stays readable.
 */
export class Raw {
  constructor(
    readonly bytes: Buffer,
    readonly label: string,
  ) {}
  static text(text: string, label = text.length > 120 ? `${text.slice(0, 60)}…(${text.length} chars)` : text) {
    return new Raw(Buffer.from(text, 'utf8'), label);
  }
}

/** An object key written as is, own and enumerable: `__proto__` included (a plain assignment would set the prototype). */
export function withKey<T extends object>(obj: T, key: string, value: unknown): T {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  return obj;
}

/** The body's bytes: JSON of `v`, with every Raw node spliced in. */
export function serialize(v: unknown): Buffer {
  const parts: Buffer[] = [];
  let text = '';
  const flush = () => {
    if (text) parts.push(Buffer.from(text, 'utf8'));
    text = '';
  };
  const write = (x: unknown): void => {
    if (x instanceof Raw) {
      flush();
      parts.push(x.bytes);
    } else if (Array.isArray(x)) {
      text += '[';
      x.forEach((e, i) => {
        if (i) text += ',';
        write(e === undefined ? null : e);
      });
      text += ']';
    } else if (x !== null && typeof x === 'object') {
      text += '{';
      let first = true;
      for (const k of Object.keys(x)) {
        const e = (x as Record<string, unknown>)[k];
        if (e === undefined) continue;
        if (!first) text += ',';
        first = false;
        text += `${JSON.stringify(k)}:`;
        write(e);
      }
      text += '}';
    } else if (typeof x === 'number' && Object.is(x, -0)) {
      text += '-0';
    } else {
      text += JSON.stringify(x) ?? 'null';
    }
  };
  write(v);
  flush();
  return Buffer.concat(parts);
}

const MAX_STRING = 200;

/** A short, readable rendering of a body for a report: long strings and arrays cut, Raw nodes by label. */
export function describe(v: unknown, budget = 4000): string {
  const seen: string[] = [];
  let size = 0;
  const out = (s: string) => {
    size += s.length;
    seen.push(s);
  };
  const walk = (x: unknown): void => {
    if (size > budget) return;
    if (x instanceof Raw) out(`<raw ${x.label}>`);
    else if (Array.isArray(x)) {
      out('[');
      x.slice(0, 20).forEach((e, i) => {
        if (i) out(',');
        walk(e);
      });
      if (x.length > 20) out(`,…(${x.length} items)`);
      out(']');
    } else if (x !== null && typeof x === 'object') {
      out('{');
      Object.keys(x).forEach((k, i) => {
        if (i) out(',');
        out(`${JSON.stringify(k)}:`);
        walk((x as Record<string, unknown>)[k]);
      });
      out('}');
    } else if (typeof x === 'string' && x.length > MAX_STRING) {
      out(`${JSON.stringify(x.slice(0, 60))}…(${x.length} chars)`);
    } else if (typeof x === 'number' && Object.is(x, -0)) out('-0');
    else out(JSON.stringify(x) ?? String(x));
  };
  walk(v);
  const s = seen.join('');
  return size > budget ? `${s.slice(0, budget)}…` : s;
}
