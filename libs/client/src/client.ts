import { PlatformApiError, PlatformConnectionError } from './errors';
import type { ErrorEnvelope, OperationPath, RequestOf, ResponseOf } from './types';

/** The tokens of a session: what a caller keeps between runs (the CLI's config file). */
export interface Session {
  endpoint: string;
  domain_id: string;
  user_id: string;
  /** The workspace the access token is scoped to; none for a DOMAIN-scoped token. */
  workspace_id?: string;
  scope: 'WORKSPACE' | 'DOMAIN';
  access_token: string;
  refresh_token?: string;
}

export interface ClientOptions {
  /** The gateway's URL, e.g. http://127.0.0.1:8080 (every module under it). */
  endpoint: string;
  /** A session from an earlier login (tokens are refreshed from its refresh token). */
  session?: Omit<Session, 'endpoint'>;
  /** A bare access token, when there is no session (never refreshed). */
  accessToken?: string;
  /** Called whenever the tokens change (login, refresh): keep them. */
  onSession?: (session: Session) => void | Promise<void>;
  /** Refresh the access token when it has less than this left (default 60 s). */
  refreshMarginSeconds?: number;
  /** Lifetime asked for each access token (identity caps it); identity's default when absent. */
  accessTimeoutSeconds?: number;
  fetch?: typeof fetch;
}

export interface LoginOptions {
  domainId: string;
  userId: string;
  password: string;
  /** Scope the access token to this workspace; without it the token is DOMAIN-scoped (a domain admin's). */
  workspaceId?: string;
  /** Asked for a TOTP code when the user has MFA enabled. */
  mfaCode?: () => Promise<string>;
}

/** Seconds since the epoch at which a JWT expires (its `exp`, read without verifying: the server verifies). */
export function tokenExpiry(token: string): number | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' ? payload.exp : undefined;
  } catch {
    return undefined;
  }
}

const isEnvelope = (v: unknown): v is ErrorEnvelope =>
  !!v && typeof v === 'object' && !!(v as ErrorEnvelope).error && typeof (v as ErrorEnvelope).error.code === 'string';

/**
 * The platform's API from TypeScript: `call(path, body)` for any operation, typed by the OpenAPI
 * documents (request body and answer), with login (token issue + grant), the access token refreshed
 * before it expires, and every failure thrown as a PlatformApiError carrying the envelope.
 */
export class PlatformClient {
  readonly endpoint: string;
  private session?: Session;
  private accessToken?: string;
  private refreshing?: Promise<void>;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.endpoint = options.endpoint.replace(/\/+$/, '');
    this.fetchFn = options.fetch ?? fetch;
    if (options.session) this.session = { ...options.session, endpoint: this.endpoint };
    this.accessToken = options.session?.access_token ?? options.accessToken;
  }

  /** The current session (after login, or as given), with the latest tokens. */
  get currentSession(): Session | undefined {
    return this.session && { ...this.session };
  }

  /**
   * Logs in: token/issue with the password (and the MFA code when identity asks for one), then
   * token/grant for a WORKSPACE-scoped (with workspaceId) or DOMAIN-scoped access token.
   */
  async login(o: LoginOptions): Promise<Session> {
    const credentials = { user_id: o.userId, password: o.password };
    let issued: ResponseOf<'/identity/v2/token/issue'>;
    try {
      issued = await this.send('/identity/v2/token/issue', { credentials, domain_id: o.domainId }, undefined);
    } catch (e) {
      if (!(e instanceof PlatformApiError && e.code === 'ERROR_MFA_REQUIRED')) throw e;
      if (!o.mfaCode) throw e;
      const verify_code = (await o.mfaCode()).trim();
      issued = await this.send('/identity/v2/token/issue', { credentials, domain_id: o.domainId, auth_type: 'MFA', verify_code }, undefined);
    }
    const refresh = (issued as { refresh_token?: unknown }).refresh_token;
    if (typeof refresh !== 'string') throw new PlatformConnectionError('token/issue answered no refresh_token', '/identity/v2/token/issue');
    this.session = {
      endpoint: this.endpoint,
      domain_id: o.domainId,
      user_id: o.userId,
      ...(o.workspaceId && { workspace_id: o.workspaceId }),
      scope: o.workspaceId ? 'WORKSPACE' : 'DOMAIN',
      access_token: '',
      refresh_token: refresh,
    };
    await this.refresh();
    return this.currentSession!;
  }

  /** A new access token from the session's refresh token (token/grant); done before expiry by `call`. */
  async refresh(): Promise<void> {
    // One grant at a time: concurrent calls wait for the same one.
    this.refreshing ??= (async () => {
      const s = this.session;
      if (!s?.refresh_token) throw new PlatformConnectionError('no refresh token: log in again', '/identity/v2/token/grant');
      const granted = await this.send(
        '/identity/v2/token/grant',
        {
          grant_type: 'REFRESH_TOKEN',
          token: s.refresh_token,
          scope: s.scope,
          ...(s.workspace_id && { workspace_id: s.workspace_id }),
          ...(this.options.accessTimeoutSeconds && { timeout: this.options.accessTimeoutSeconds }),
        } as RequestOf<'/identity/v2/token/grant'>,
        undefined,
      );
      const token = (granted as { access_token?: unknown }).access_token;
      if (typeof token !== 'string') throw new PlatformConnectionError('token/grant answered no access_token', '/identity/v2/token/grant');
      this.accessToken = token;
      this.session = { ...s, access_token: token };
      await this.options.onSession?.(this.currentSession!);
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** Whether the access token is missing or has less than the margin left, and a refresh token can renew it. */
  private needsRefresh(): boolean {
    if (!this.session?.refresh_token) return false;
    if (!this.accessToken) return true;
    const exp = tokenExpiry(this.accessToken);
    const margin = this.options.refreshMarginSeconds ?? 60;
    return exp !== undefined && exp - Date.now() / 1000 < margin;
  }

  /**
   * Runs an operation: `call('/identity/v2/project-group/create', { name: 'x' })`. Throws
   * PlatformApiError with the envelope on any failure.
   */
  async call<P extends OperationPath>(path: P, body: RequestOf<P>): Promise<ResponseOf<P>> {
    if (this.needsRefresh()) await this.refresh();
    try {
      return await this.send(path, body, this.accessToken);
    } catch (e) {
      // A refused token is checked before the body is read, so the request did nothing: after a
      // refresh (the token expired or was revoked meanwhile) it is sent again, once.
      if (e instanceof PlatformApiError && e.status === 401 && e.code === 'ERROR_AUTHENTICATE_FAILURE' && this.session?.refresh_token) {
        await this.refresh();
        return this.send(path, body, this.accessToken);
      }
      throw e;
    }
  }

  /** Any operation by a path known only at run time (the CLI): the body and answer are plain JSON. */
  callPath(path: string, body: Record<string, unknown>): Promise<unknown> {
    return this.call(path as OperationPath, body as never);
  }

  /** GET a URL the API answered (an export's download_url), with the access token; the raw response. */
  async download(url: string): Promise<Response> {
    if (this.needsRefresh()) await this.refresh();
    let res: Response;
    try {
      res = await this.fetchFn(url, { headers: this.accessToken ? { authorization: `Bearer ${this.accessToken}` } : {} });
    } catch (e) {
      throw new PlatformConnectionError(`cannot reach ${new URL(url).origin}: ${(e as Error).message}`, url, { cause: e });
    }
    if (!res.ok) throw await this.failure(res, url);
    return res;
  }

  private async send<P extends OperationPath>(path: P, body: RequestOf<P>, token: string | undefined): Promise<ResponseOf<P>> {
    let res: Response;
    try {
      res = await this.fetchFn(`${this.endpoint}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
        body: JSON.stringify(body ?? {}),
      });
    } catch (e) {
      throw new PlatformConnectionError(`cannot reach ${this.endpoint}: ${(e as Error).message}`, path, { cause: e });
    }
    if (!res.ok) throw await this.failure(res, path);
    if (res.status === 204) return undefined as ResponseOf<P>;
    const text = await res.text();
    if (!text) return undefined as ResponseOf<P>;
    try {
      return JSON.parse(text) as ResponseOf<P>;
    } catch (e) {
      throw new PlatformConnectionError(`${path} answered ${res.status} with a body that is not JSON`, path, { cause: e });
    }
  }

  private async failure(res: Response, path: string): Promise<Error> {
    const text = await res.text().catch(() => '');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (isEnvelope(parsed)) return new PlatformApiError(parsed, path, res.headers.get('x-request-id') ?? undefined);
    return new PlatformConnectionError(`${path} answered ${res.status} ${res.statusText}: ${text.slice(0, 200)}`, path);
  }
}
