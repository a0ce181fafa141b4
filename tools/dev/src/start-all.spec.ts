import { spawnSync } from 'node:child_process';
import path from 'node:path';

/**
 * `npm start` and the retired global switches (issue #27): given ALLOW_PRIVATE_URLS (or the per-app
 * switches), it stops before building or starting anything, naming OUTBOUND_ALLOW_PRIVATE.
 */
const START = path.resolve(__dirname, '../start-all.mjs');

describe('npm start', () => {
  it.each(['ALLOW_PRIVATE_URLS', 'SCHEMA_SYNC_ALLOW_PRIVATE_HOSTS', 'STORAGE_ALLOW_PRIVATE_HOSTS'])('stops at once when %s is set, naming its replacement', (name) => {
    const r = spawnSync(process.execPath, [START], { env: { PATH: process.env.PATH, [name]: 'true' }, encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${name} is no longer supported`);
    expect(r.stderr).toContain('OUTBOUND_ALLOW_PRIVATE');
    expect(r.stdout).not.toContain('building');
  });
});
