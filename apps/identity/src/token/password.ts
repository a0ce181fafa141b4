import { hash, verify } from '@node-rs/argon2';

// argon2id (memory-hard), the library's defaults: m=19456 KiB, t=2, p=1.
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

// A fixed hash to verify against when the user does not exist, so timing does not reveal it.
const DUMMY = '$argon2id$v=19$m=19456,t=2,p=1$orT+9SpPujHg0v19tPkmyA$fEAgJwx95PcTxD909ucIXVmYeNIM1FDKIejKR/9Grak';

export async function verifyPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  try {
    const ok = await verify(passwordHash || DUMMY, password);
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
