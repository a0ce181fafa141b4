import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Session } from '@platform/client';

/** `$PLATFORM_CONFIG_DIR`, else `~/.config/platformctl`. */
export const configDir = (env = process.env) => env.PLATFORM_CONFIG_DIR || path.join(os.homedir(), '.config', 'platformctl');
export const sessionFile = (env = process.env) => path.join(configDir(env), 'session.json');

/** The saved session, or undefined when there is none (never logged in, or logged out). */
export function loadSession(env = process.env): Session | undefined {
  const file = sessionFile(env);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Session;
  } catch {
    return undefined;
  }
}

/** Saves the session (tokens included) readable by its owner only: directory 700, file 600, written whole. */
export function saveSession(session: Session, env = process.env) {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = sessionFile(env);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(session, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600); // whatever the umask
  renameSync(tmp, file);
}

export function removeSession(env = process.env) {
  rmSync(sessionFile(env), { force: true });
}
