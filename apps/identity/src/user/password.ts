import { createRequire } from 'node:module';
import type * as Argon2 from '@node-rs/argon2';

// @node-rs/argon2 (a native addon) is loaded on the first hash or verification, not at start: ~3.5 MB
// of RSS a process that has not logged anyone in yet does not need (issue #14).
const requireHere = createRequire(__filename);
let argon2: typeof Argon2 | undefined;
const lib = () => (argon2 ??= requireHere('@node-rs/argon2') as typeof Argon2);

// argon2id (memory-hard), the library's defaults: m=19456 KiB, t=2, p=1.
export function hashPassword(password: string): Promise<string> {
  return lib().hash(password);
}

// A fixed hash to verify against when the user does not exist, so timing does not reveal it.
const DUMMY = '$argon2id$v=19$m=19456,t=2,p=1$orT+9SpPujHg0v19tPkmyA$fEAgJwx95PcTxD909ucIXVmYeNIM1FDKIejKR/9Grak';

export async function verifyPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  try {
    const ok = await lib().verify(passwordHash || DUMMY, password);
    return Boolean(passwordHash) && ok;
  } catch {
    return false;
  }
}

/** Password policy for the admin CLI and bootstrap: 8 to 128 characters. */
export function checkPasswordPolicy(password: string): string | undefined {
  if (password.length < 8) return 'password must have at least 8 characters';
  if (password.length > 128) return 'password must have at most 128 characters';
  return undefined;
}
