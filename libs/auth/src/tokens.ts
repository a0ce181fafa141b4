import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { errors } from '@platform/errors';
import { ROLE_TYPES, SCOPES, type AuthContext, type RoleType, type Scope } from './roles';

export const TOKEN_ISSUER = 'platform.identity';
export const TOKEN_AUDIENCE = 'platform';
const ALG = 'EdDSA';

export type TokenType = 'ACCESS_TOKEN' | 'REFRESH_TOKEN';

export interface TokenClaims {
  token_type: TokenType;
  user_id: string;
  domain_id: string;
  workspace_id: string;
  role_type: RoleType;
  role_id: string;
  scope: Scope;
  permissions: string[];
  user_type: 'USER' | 'APP';
}

/** Keys come as PEM text (JWT_PUBLIC_KEY / JWT_PRIVATE_KEY) or files (JWT_PUBLIC_KEY_FILE / ...). */
function readKey(name: string): string | undefined {
  if (process.env[name]) return process.env[name]!.replace(/\\n/g, '\n');
  const file = process.env[`${name}_FILE`];
  return file ? readFileSync(file, 'utf8') : undefined;
}

export function publicKeyFromEnv(): KeyObject {
  const pem = readKey('JWT_PUBLIC_KEY');
  if (!pem) throw new Error('JWT_PUBLIC_KEY (or JWT_PUBLIC_KEY_FILE) is required to verify tokens');
  return createPublicKey(pem);
}

export function privateKeyFromEnv(): KeyObject {
  const pem = readKey('JWT_PRIVATE_KEY');
  if (!pem) throw new Error('JWT_PRIVATE_KEY (or JWT_PRIVATE_KEY_FILE) is required to sign tokens');
  return createPrivateKey(pem);
}

export function generateSigningKeys(): { privateKey: KeyObject; publicKey: KeyObject; privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey,
    publicKey,
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/**
 * Who decides that a verified access token no longer counts (a disabled or deleted user, a role that
 * changed, a disabled or deleted workspace): `@platform/directory`'s AccessRevocations, kept current
 * by identity through Redis. Asked on every request, so it must answer from memory.
 */
export interface RevocationCheck {
  /** `roleId`: the role the token was granted with (a custom role's disable ends every token of it). */
  revoked(token: { domainId: string; userId: string; workspaceId: string; roleId?: string; issuedAtMs: number }): boolean;
}

/** Signs tokens (identity only). */
export class TokenSigner {
  constructor(private readonly privateKey: KeyObject) {}

  /**
   * `issuedAtMs`: the token's issue time (default: now). Identity passes the moment it read the state
   * the token rests on (under the lock its revoking changes take), so a revocation recorded after that
   * change refuses it whatever the delay between reading and signing.
   */
  async sign(claims: TokenClaims, ttlSeconds: number, issuedAtMs?: number): Promise<string> {
    const nowMs = Math.floor(issuedAtMs ?? Date.now());
    const now = Math.floor(nowMs / 1000);
    // iat_ms: the issue time to the millisecond, so a revocation and a token issued in the same second
    // are told apart (a token granted right after a role change must work). Revocations compare in ms
    // at both ends: refused when iat_ms <= T.
    return new SignJWT({ ...claims, iat_ms: nowMs })
      .setProtectedHeader({ alg: ALG, typ: 'JWT' })
      .setIssuer(TOKEN_ISSUER)
      .setAudience(TOKEN_AUDIENCE)
      .setSubject(claims.user_id)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .sign(this.privateKey);
  }
}

/** Verifies tokens locally with the public key; no call to identity. */
export class TokenVerifier {
  /**
   * Access tokens already verified, until they expire: a client sends the same token many times, and
   * the signature check is the costliest step of a request. Bounded; the oldest entries go first.
   */
  private readonly verified = new Map<string, { ctx: AuthContext; expMs: number; issuedAtMs: number }>();
  private revocations?: RevocationCheck;

  constructor(
    private readonly publicKey: KeyObject,
    private readonly cacheSize = 10_000,
  ) {}

  /** From now on an access token that `check` says is revoked is refused, cached or not. */
  useRevocations(check: RevocationCheck): this {
    this.revocations = check;
    return this;
  }

  /** Whether identity has revoked what a user (or a workspace) was granted before `issuedAtMs`. */
  revoked(t: { domainId: string; userId: string; workspaceId: string; roleId?: string; issuedAtMs: number }): boolean {
    return this.revocations?.revoked(t) ?? false;
  }

  private refuseRevoked(ctx: AuthContext, issuedAtMs: number) {
    if (this.revocations?.revoked({ domainId: ctx.domainId, userId: ctx.userId, workspaceId: ctx.workspaceId, roleId: ctx.roleId, issuedAtMs })) {
      throw errors.authenticateFailure('Token is revoked.');
    }
  }

  /** Any valid token of the platform, with its claims; throws ERROR_AUTHENTICATE_FAILURE otherwise. */
  async verify(token: string): Promise<TokenClaims & { exp: number; jti: string; iat?: number; iat_ms?: number }> {
    try {
      const { payload } = await jwtVerify(token, this.publicKey, {
        issuer: TOKEN_ISSUER,
        audience: TOKEN_AUDIENCE,
        algorithms: [ALG],
      });
      const c = payload as unknown as TokenClaims & { exp: number; jti: string; iat?: number; iat_ms?: number };
      if (
        (c.token_type !== 'ACCESS_TOKEN' && c.token_type !== 'REFRESH_TOKEN') ||
        typeof c.domain_id !== 'string' ||
        typeof c.user_id !== 'string' ||
        !ROLE_TYPES.includes(c.role_type) ||
        !SCOPES.includes(c.scope) ||
        !Array.isArray(c.permissions)
      ) {
        throw errors.authenticateFailure('Token claims are invalid.');
      }
      return c;
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) throw errors.authenticateFailure('Token is expired.');
      if (e instanceof joseErrors.JOSEError || e instanceof TypeError) throw errors.authenticateFailure('Token is invalid.');
      throw e;
    }
  }

  /** An access token, as the caller's context. A refresh token is refused here. */
  /**
   * The caller of a token verified before and not expired, without waiting (the request path's
   * common case: no promise); undefined when it must go through `authenticate`. Throws as
   * `authenticate` does when the token has been revoked since.
   */
  authenticateCached(token: string): AuthContext | undefined {
    const hit = this.verified.get(token);
    if (!hit) return undefined;
    if (hit.expMs <= Date.now()) {
      this.verified.delete(token);
      return undefined;
    }
    this.refuseRevoked(hit.ctx, hit.issuedAtMs);
    return hit.ctx;
  }

  async authenticate(token: string): Promise<AuthContext> {
    const cached = this.authenticateCached(token);
    if (cached) return cached;
    const c = await this.verify(token);
    if (c.token_type !== 'ACCESS_TOKEN') throw errors.authenticateFailure('An access token is required.');
    const ctx: AuthContext = {
      userId: c.user_id,
      domainId: c.domain_id,
      workspaceId: c.workspace_id ?? '',
      roleType: c.role_type,
      roleId: c.role_id ?? '',
      scope: c.scope,
      permissions: c.permissions,
      userType: c.user_type ?? 'USER',
    };
    // Tokens from before iat_ms existed count from the start of their second (a revocation in that
    // second refuses them: the safe side).
    const issuedAtMs = typeof c.iat_ms === 'number' && Number.isFinite(c.iat_ms) ? c.iat_ms : (c.iat ?? 0) * 1000;
    this.refuseRevoked(ctx, issuedAtMs);
    if (this.verified.size >= this.cacheSize) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { ctx, expMs: c.exp * 1000, issuedAtMs });
    return ctx;
  }
}

/** The token from `Authorization: Bearer <token>`, or a 401. */
export function bearerToken(header: string | undefined): string {
  if (!header) throw errors.authenticateFailure('Authorization header with a Bearer token is required.');
  const m = /^Bearer\s+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header);
  if (!m) throw errors.authenticateFailure('Authorization header must be "Bearer <token>".');
  return m[1];
}
