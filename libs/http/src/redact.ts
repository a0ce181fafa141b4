/**
 * The one rule for paths that carry a secret (a webhook's access key, an export's download token):
 * an app names them as templates, and every path it logs passes through the redactor, whatever route
 * (or no route: a 404, a 405) the request met.
 *
 * A template is a path of segments: a literal, `*` (any one segment, kept) or `:secret` (any one
 * segment, logged as `***`), e.g. `/monitoring/v1/webhook/*\/:secret`. It matches a path that starts
 * with those segments; what follows is kept. Matching is generous on purpose, so that a near-miss of
 * a real route cannot log the key either: literals compare case-insensitively and percent-decoded, and
 * empty segments (`//`) are skipped.
 */
const HIDDEN = '***';
const MAX_LOGGED = 512;

type Seg = { kind: 'literal'; text: string } | { kind: 'any' } | { kind: 'secret' };

function parseTemplate(template: string): Seg[] {
  return template
    .split('/')
    .filter(Boolean)
    .map((s): Seg => (s === '*' ? { kind: 'any' } : s === ':secret' ? { kind: 'secret' } : { kind: 'literal', text: s.toLowerCase() }));
}

function decoded(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}

export function pathRedactor(templates: readonly string[]): (path: string) => string {
  const parsed = templates.map(parseTemplate).filter((t) => t.some((s) => s.kind === 'secret'));
  return (path) => {
    const raw = path.length > MAX_LOGGED ? path.slice(0, MAX_LOGGED) : path;
    if (parsed.length === 0) return raw;
    const segs = raw.split('/').filter(Boolean);
    for (const t of parsed) {
      if (segs.length < t.length) continue;
      let ok = true;
      for (let i = 0; i < t.length && ok; i++) {
        const s = t[i];
        if (s.kind === 'literal') ok = decoded(segs[i]).toLowerCase() === s.text;
      }
      if (!ok) continue;
      return '/' + segs.map((s, i) => (t[i]?.kind === 'secret' ? HIDDEN : s)).join('/');
    }
    return raw;
  };
}
