import { createWriteStream, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  PlatformApiError,
  PlatformClient,
  PlatformConnectionError,
  REQUIRED_KEYS,
  findResource,
  normalizeVerb,
  resourceTable,
  type ResourceInfo,
  type Session,
} from '@platform/client';
import { FILTER_HELP, UsageError, parseArgs, parseFilter, parseParams, valueOf, type ParsedArgs } from './args';
import { loadSession, removeSession, saveSession, sessionFile } from './config';
import { FORMATS, parseFormat, render } from './output';
import { ask, closePrompts } from './prompt';
import { publishSupervisor, PUBLISH_USAGE } from './plugins';

export const USAGE = `platformctl: the platform's API from the shell (npm run -s ctl -- <command>)

  login --endpoint URL --domain-id D --user-id U [--workspace-id W]
        password from PLATFORM_PASSWORD or asked (hidden); the MFA code is asked when needed
  logout
  api-resources [module]                     the resources (<module>.<Resource>) and their verbs
  list <resource> [-p key=value ...] [-f 'key<op>value' ...] [-s [-]key] [--page N] [--limit M] [--minimal]
  get <resource> <id> [-p key=value ...]
  stat <resource> -q QUERY|@file [-p key=value ...]
  analyze <resource> -q QUERY|@file [-p key=value ...]
  exec <verb> <resource> [-p key=value ...] [-j JSON|@file|-]
  export inventory.CloudService --out FILE.xlsx|FILE.csv [-f ...] [--fields a,b] [-s key] [--sheet NAME]
${PUBLISH_USAGE}

  -p key=value   a string field (dotted keys nest: tags.env=prod); key:=JSON for any JSON value
  -f filter      ${FILTER_HELP}
  -o FORMAT      ${FORMATS.join(', ')} (default table, fitted to the terminal)
  -c a,b,c       the columns of table and csv output

Tokens are kept in $PLATFORM_CONFIG_DIR (default ~/.config/platformctl, mode 600) and refreshed by themselves.
Exit codes: 0 success, 1 API error (its code and message on stderr), 2 usage error.`;

export interface Io {
  env: NodeJS.ProcessEnv;
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  width?: number;
}

const RESOURCES = resourceTable();

function resourceOf(name: string | undefined): ResourceInfo {
  if (!name) throw new UsageError(`name a resource: ${[...RESOURCES.keys()].join(', ')}`);
  const r = findResource(RESOURCES, name);
  if (!r) throw new UsageError(`unknown resource ${name}; resources: ${[...RESOURCES.keys()].join(', ')}`);
  return r;
}

function verbPath(r: ResourceInfo, verb: string): string {
  const path = r.verbs.get(normalizeVerb(verb));
  if (!path) throw new UsageError(`${r.name} has no verb ${verb}; verbs: ${[...r.verbs.keys()].join(', ')}`);
  return path;
}

/** `-j '{...}'`, `-j @file` or `-j -` (standard input): a JSON object. */
function readJson(flag: string, v: string | undefined): Record<string, unknown> {
  if (v === undefined) return {};
  let text = v;
  try {
    if (v === '-') text = readFileSync(0, 'utf8');
    else if (v.startsWith('@')) text = readFileSync(v.slice(1), 'utf8');
  } catch (e) {
    throw new UsageError(`${flag} ${v}: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${flag}: not JSON`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`${flag}: a JSON object is needed`);
  return parsed as Record<string, unknown>;
}

function positiveInt(a: ParsedArgs, name: string): number | undefined {
  const v = valueOf(a, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`--${name} ${v}: a positive integer is needed`);
  return Number(v);
}

const sortOf = (a: ParsedArgs) => (a.values.get('sort') ?? []).map((s) => (s.startsWith('-') ? { key: s.slice(1), desc: true } : { key: s }));

/** The request body: -j, then -p over it, then the session's domain_id where the operation requires one. */
function bodyOf(a: ParsedArgs, path: string, session: Session | undefined): Record<string, unknown> {
  const body = parseParams(a.values.get('param') ?? [], readJson('-j', valueOf(a, 'json')));
  const required = (REQUIRED_KEYS as Record<string, readonly string[]>)[path] ?? [];
  if (required.includes('domain_id') && body.domain_id === undefined && session) body.domain_id = session.domain_id;
  return body;
}

function clientFor(io: Io): { client: PlatformClient; session: Session } {
  const session = loadSession(io.env);
  if (!session) throw new UsageError(`not logged in (no ${sessionFile(io.env)}): run platformctl login first`);
  const client = new PlatformClient({ endpoint: session.endpoint, session, onSession: (s) => saveSession(s, io.env) });
  return { client, session };
}

async function login(a: ParsedArgs, io: Io) {
  const need = (k: string) => {
    const v = valueOf(a, k);
    if (!v) throw new UsageError(`login needs --${k}`);
    return v;
  };
  const endpoint = need('endpoint');
  if (!/^https?:\/\//.test(endpoint)) throw new UsageError(`--endpoint ${endpoint}: an http(s) URL is needed`);
  const domainId = need('domain-id');
  const userId = need('user-id');
  const workspaceId = valueOf(a, 'workspace-id');
  const password = io.env.PLATFORM_PASSWORD || (await ask(`Password for ${userId}@${domainId}: `, true));
  if (!password) throw new UsageError('no password: set PLATFORM_PASSWORD or type it when asked');
  const client = new PlatformClient({ endpoint });
  const session = await client.login({
    domainId,
    userId,
    password,
    workspaceId,
    mfaCode: async () => {
      const code = await ask('MFA code: ', false);
      if (!code) throw new UsageError('no MFA code given');
      return code;
    },
  });
  saveSession(session, io.env);
  io.stderr(`Logged in to ${endpoint} as ${userId}@${domainId} (${session.scope}${workspaceId ? ` ${workspaceId}` : ''}); session in ${sessionFile(io.env)}\n`);
}

function apiResources(a: ParsedArgs) {
  const module = a.positional[1];
  const rows = [...RESOURCES.values()]
    .filter((r) => !module || r.module === module)
    .map((r) => ({ resource: r.name, version: r.version, verbs: [...r.verbs.keys()].join(' ') }));
  if (module && !rows.length) throw new UsageError(`unknown module ${module}; modules: ${[...new Set([...RESOURCES.values()].map((r) => r.module))].join(', ')}`);
  return rows;
}

async function exportFile(a: ParsedArgs, io: Io, client: PlatformClient, session: Session) {
  const r = resourceOf(a.positional[1]);
  const path = verbPath(r, 'export');
  const out = valueOf(a, 'out');
  if (!out) throw new UsageError('export needs --out FILE (.xlsx or .csv)');
  const ext = out.toLowerCase().split('.').pop();
  const format = (valueOf(a, 'format') ?? (ext === 'csv' ? 'CSV' : ext === 'xlsx' ? 'EXCEL' : '')).toUpperCase();
  if (format !== 'CSV' && format !== 'EXCEL') throw new UsageError(`export: --out ${out} is neither .xlsx nor .csv (or give --format EXCEL|CSV)`);
  const fields = valueOf(a, 'fields')?.split(',').map((f) => f.trim()).filter(Boolean);
  const filter = (a.values.get('filter') ?? []).map(parseFilter);
  const sort = sortOf(a);
  const body = {
    file_format: format,
    file_name: out.split('/').pop()!.replace(/\.[^.]+$/, ''),
    options: [
      {
        name: valueOf(a, 'sheet') ?? r.name.split('.')[1],
        query_type: 'SEARCH',
        search_query: { ...(filter.length && { filter }), ...(fields && { fields }), ...(sort.length && { sort }) },
      },
    ],
    ...bodyOf(a, path, session),
  };
  const answer = (await client.callPath(path, body)) as { download_url?: string };
  if (!answer?.download_url) throw new PlatformConnectionError(`${path} answered no download_url`, path);
  const res = await client.download(answer.download_url);
  await pipeline(Readable.fromWeb(res.body as never), createWriteStream(out));
  io.stderr(`wrote ${out}\n`);
}

/** Runs one command; answers the exit code. */
export async function run(argv: string[], io: Io): Promise<number> {
  try {
    const a = parseArgs(argv);
    const command = a.positional[0];
    if (!command || a.switches.has('help') || command === 'help') {
      (command ? io.stdout : io.stderr)(USAGE + '\n');
      return command ? 0 : 2;
    }
    const format = parseFormat(valueOf(a, 'output'));
    const columns = valueOf(a, 'columns')?.split(',').map((c) => c.trim()).filter(Boolean);
    const print = (answer: unknown) => {
      const isEmptyObject = answer && typeof answer === 'object' && !Array.isArray(answer) && !Object.keys(answer).length;
      if (format === 'table' && (answer === undefined || isEmptyObject)) return;
      io.stdout(render(answer, { format, columns, width: io.width, noHeaders: a.switches.has('no-headers') }));
    };

    switch (command) {
      case 'login':
        await login(a, io);
        return 0;
      case 'logout':
        removeSession(io.env);
        io.stderr('Logged out.\n');
        return 0;
      case 'api-resources':
        print({ results: apiResources(a) });
        return 0;
      case 'publish-supervisor':
        print(await publishSupervisor(a, io.env, clientFor(io).client));
        return 0;
    }

    // Resolve the resource and verb before anything needs a session: a typo is a usage error.
    let verb: string;
    let resourceName: string | undefined;
    if (command === 'exec') {
      verb = a.positional[1];
      resourceName = a.positional[2];
      if (!verb) throw new UsageError('exec needs a verb and a resource: exec <verb> <module>.<Resource>');
    } else if (['list', 'get', 'stat', 'analyze', 'export'].includes(command)) {
      verb = command;
      resourceName = a.positional[1];
    } else {
      throw new UsageError(`unknown command ${command}; commands: login, logout, api-resources, list, get, stat, analyze, exec, export, publish-supervisor`);
    }
    const r = resourceOf(resourceName);
    const path = verbPath(r, verb);
    const { client, session } = clientFor(io);

    if (command === 'export') {
      await exportFile(a, io, client, session);
      return 0;
    }
    const body = bodyOf(a, path, session);
    if (command === 'list') {
      const filter = (a.values.get('filter') ?? []).map(parseFilter);
      const page = positiveInt(a, 'page');
      const limit = positiveInt(a, 'limit') ?? (page ? 100 : undefined);
      const sort = sortOf(a);
      const query = {
        ...(body.query as object),
        ...(filter.length && { filter }),
        ...(limit && { page: { start: ((page ?? 1) - 1) * limit + 1, limit } }),
        ...(sort.length && { sort }),
        ...(a.switches.has('minimal') && { minimal: true }),
      };
      if (Object.keys(query).length) body.query = query;
    } else if (command === 'get') {
      const id = a.positional[2];
      const required = ((REQUIRED_KEYS as Record<string, readonly string[]>)[path] ?? []).filter((k) => k !== 'domain_id');
      const snake = `${r.segment.replace(/-/g, '_')}_id`;
      const key = required.includes(snake) ? snake : required.length === 1 ? required[0] : undefined;
      if (id !== undefined) {
        if (!key) throw new UsageError(`get ${r.name} takes its keys as -p (${required.join(', ')})`);
        body[key] = id;
      } else if (key && body[key] === undefined) throw new UsageError(`get ${r.name} <${key}>`);
    } else if (command === 'stat' || command === 'analyze') {
      const q = valueOf(a, 'query');
      if (q !== undefined) body.query = readJson('-q', q);
    }
    print(await client.callPath(path, body));
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`error: ${e.message}\n(platformctl help for usage)\n`);
      return 2;
    }
    if (e instanceof PlatformApiError) {
      io.stderr(`${e.code}: ${e.envelope.error.message}\n`);
      if (e.path === '/identity/v2/token/grant') io.stderr('The session cannot be renewed: run platformctl login again.\n');
      return 1;
    }
    if (e instanceof PlatformConnectionError) {
      io.stderr(`error: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

if (require.main === module) {
  const width = process.stdout.isTTY ? process.stdout.columns : process.env.COLUMNS ? Number(process.env.COLUMNS) || undefined : undefined;
  run(process.argv.slice(2), { env: process.env, stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s), width }).then(
    (code) => {
      closePrompts();
      process.exitCode = code;
    },
    (e) => {
      closePrompts();
      process.stderr.write(`${(e as Error)?.stack ?? e}\n`);
      process.exitCode = 1;
    },
  );
}
