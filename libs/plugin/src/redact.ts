/**
 * A plugin's error text may quote what it was sent, credentials included (upstream's plugins often
 * put the request or the cloud SDK's message, with the key, in the error). Before a plugin's text
 * goes anywhere (an answer, a log line, a stored job error) every secret of the call is replaced by
 * `***`: every string and number value of `secret_data` and `credentials`, and of `options` keys
 * that look secret (password, token, key, ...), at any depth; each also in the forms a message
 * quotes it in (JSON-escaped, URL-encoded, base64). Values shorter than MIN_SECRET characters are no
 * secret worth the name and would blank out common words. The text is bounded before (the work is
 * linear in it) and after.
 */
export const REDACTED = '***';
const MIN_SECRET = 4;
const MAX_INPUT = 16_384;
const MAX_OUTPUT = 1_000;
const MAX_SECRETS = 512;
const MAX_WALK = 10_000;
/** Option keys whose values are secrets. */
const SECRET_KEY = /pass(word|wd|phrase)?|secret|token|api[-_]?key|access[-_]?key|private|credential|auth|cookie|session|signature|^key$|_key$/i;

/** Fields of a request whose every value is secret. */
const SECRET_FIELDS = ['secret_data', 'credentials'];

/** The secret strings of a request (see the module's comment). */
export function secretsOf(request: unknown): string[] {
  const out = new Set<string>();
  if (request === null || typeof request !== 'object') return [];
  const r = request as Record<string, unknown>;
  let budget = MAX_WALK;
  const collect = (v: unknown, all: boolean, depth: number): void => {
    if (budget-- <= 0 || depth > 32 || out.size >= MAX_SECRETS) return;
    if (typeof v === 'string' || typeof v === 'number') {
      if (all) add(String(v));
    } else if (Array.isArray(v)) {
      for (const item of v) collect(item, all, depth + 1);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) collect(item, all || SECRET_KEY.test(k), depth + 1);
    }
  };
  const add = (s: string) => {
    if (s.length < MIN_SECRET) return;
    out.add(s);
    for (const form of [JSON.stringify(s).slice(1, -1), encodeURIComponent(s), Buffer.from(s).toString('base64').replace(/=+$/, '')]) {
      if (form.length >= MIN_SECRET) out.add(form);
    }
  };
  for (const f of SECRET_FIELDS) if (Object.prototype.hasOwnProperty.call(r, f)) collect(r[f], true, 0);
  if (Object.prototype.hasOwnProperty.call(r, 'options')) collect(r.options, false, 0);
  return [...out].sort((a, b) => b.length - a.length); // longest first: a secret that contains another goes whole
}

/**
 * `text` with every secret replaced, bounded. Occurrences are found on the text cut at MAX_INPUT; when
 * it was cut, a secret may have been cut in two at the end, so the last characters that could be the
 * start of one (the longest secret's length) are dropped unless they are inside a found occurrence.
 */
export function redact(text: string, secrets: readonly string[]): string {
  const cut = text.length > MAX_INPUT;
  const s = cut ? text.slice(0, MAX_INPUT) : text;
  const longest = secrets.reduce((n, x) => Math.max(n, x.length), 0);
  const keepUntil = cut ? Math.max(0, s.length - longest) : s.length;
  const found: [number, number][] = [];
  for (const secret of secrets) {
    for (let i = s.indexOf(secret); i !== -1; i = s.indexOf(secret, i + secret.length)) found.push([i, i + secret.length]);
  }
  found.sort((a, b) => a[0] - b[0]);
  let out = '';
  let pos = 0;
  for (let k = 0; k < found.length && out.length <= MAX_OUTPUT; k++) {
    const [start] = found[k];
    let end = found[k][1];
    while (k + 1 < found.length && found[k + 1][0] < end) end = Math.max(end, found[++k][1]); // overlapping occurrences: one mark
    out += s.slice(pos, Math.min(start, keepUntil)) + REDACTED;
    pos = Math.max(pos, end);
  }
  if (pos < keepUntil) out += s.slice(pos, keepUntil);
  if (cut) out += '…';
  return out.length > MAX_OUTPUT ? `${out.slice(0, MAX_OUTPUT - 1)}…` : out;
}
