import { z } from 'zod';
import { errors } from '@platform/errors';

export const SYNC_MODES = ['NONE', 'MANUAL', 'AUTOMATIC'] as const;
export type SyncMode = (typeof SYNC_MODES)[number];

const httpUrl = z
  .string()
  .trim()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'an http(s) URL without credentials');
const source = z.strictObject({ url: httpUrl });

/** SyncOptions: exactly one of github{url}, git{url}, gitlab{url}; `{}` means none. */
export const syncOptionsSchema = z
  .strictObject({ github: source.optional(), git: source.optional(), gitlab: source.optional() })
  .refine((o) => Object.keys(o).length <= 1, 'one of github, git or gitlab, not several');
export type SyncOptions = z.infer<typeof syncOptionsSchema>;

export interface RemoteRepository {
  repository_type: 'GITHUB' | 'GITLAB' | 'GIT';
  name: string;
  url: string;
  /** The URL the document is fetched from (the raw file). */
  source_url: string;
  synced_at: string;
  /** sha256 of the document last synced. */
  digest: string;
  last_error: string;
}

function segments(u: URL) {
  return u.pathname.split('/').filter(Boolean);
}

/**
 * Where a sync fetches the schema from, and the remote repository's name, from SyncOptions:
 * - github: a file URL `https://<host>/<owner>/<repo>/blob/<ref>/<path>` (github.com is read from
 *   raw.githubusercontent.com; other hosts — GitHub Enterprise — through their `/raw/` path), or a raw URL;
 * - gitlab: `https://<host>/<group>/<project>/-/blob/<ref>/<path>` (read through `/-/raw/`) or a raw URL;
 * - git: the URL of the raw file on any git host, fetched as given.
 */
export function remoteFrom(options: SyncOptions): RemoteRepository | undefined {
  const empty = { synced_at: '', digest: '', last_error: '' };
  if (options.github) {
    const url = options.github.url;
    const u = new URL(url);
    const s = segments(u);
    if (u.hostname === 'raw.githubusercontent.com') {
      if (s.length < 4) throw errors.invalidParameter('sync_options.github.url', 'the URL must name a file');
      return { repository_type: 'GITHUB', name: `${s[0]}/${s[1]}`, url, source_url: url, ...empty };
    }
    const at = s.findIndex((x) => x === 'blob' || x === 'raw');
    if (at !== 2 || s.length < 5) {
      throw errors.invalidParameter('sync_options.github.url', 'expected https://<host>/<owner>/<repo>/blob/<ref>/<path to the schema file>');
    }
    const rest = s.slice(3).join('/');
    const source_url =
      u.hostname === 'github.com' ? `https://raw.githubusercontent.com/${s[0]}/${s[1]}/${rest}` : `${u.origin}/${s[0]}/${s[1]}/raw/${rest}`;
    return { repository_type: 'GITHUB', name: `${s[0]}/${s[1]}`, url, source_url, ...empty };
  }
  if (options.gitlab) {
    const url = options.gitlab.url;
    const u = new URL(url);
    const s = segments(u);
    const dash = s.indexOf('-');
    if (dash < 2 || !['blob', 'raw'].includes(s[dash + 1]) || s.length < dash + 4) {
      throw errors.invalidParameter('sync_options.gitlab.url', 'expected https://<host>/<group>/<project>/-/blob/<ref>/<path to the schema file>');
    }
    const name = s.slice(0, dash).join('/');
    return { repository_type: 'GITLAB', name, url, source_url: `${u.origin}/${name}/-/raw/${s.slice(dash + 2).join('/')}`, ...empty };
  }
  if (options.git) {
    const url = options.git.url;
    const u = new URL(url);
    return { repository_type: 'GIT', name: `${u.host}${u.pathname.replace(/\/[^/]*$/, '')}`, url, source_url: url, ...empty };
  }
  return undefined;
}
