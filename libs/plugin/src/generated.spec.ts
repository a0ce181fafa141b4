import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The committed src/generated is what libs/plugin/proto gives (npm run plugin:generate refreshes it). */
describe('generated protocol code', () => {
  const root = path.resolve(__dirname, '../../..');
  const check = (...args: string[]) => spawnSync(process.execPath, [path.join(root, 'libs/plugin/generate.mjs'), '--check', ...args], { cwd: root, encoding: 'utf8' });

  it('matches the .proto files', () => {
    const r = check();
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('--check fails when a generated file is stale', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plugin-gen-'));
    try {
      cpSync(path.join(__dirname, 'generated'), dir, { recursive: true });
      expect(check('--out', dir).status).toBe(0);
      writeFileSync(path.join(dir, 'messages.ts'), '// edited by hand\n');
      const stale = check('--out', dir);
      expect(stale.status).toBe(1);
      expect(stale.stderr).toMatch(/stale generated plugin protocol files: messages\.ts/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
