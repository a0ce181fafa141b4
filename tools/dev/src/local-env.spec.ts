import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');

/** What start-all.mjs gives the apps for their listen address, under the environment `env`. */
function listenEnvUnder(env: Record<string, string>) {
  const script = `import { listenEnv } from ${JSON.stringify(path.join(root, 'tools/dev/local-env.mjs'))}; console.log(JSON.stringify(listenEnv(process.env)));`;
  const { HOST: _drop, ...rest } = process.env;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...rest, ...env }, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout);
}

/** `npm start` runs the apps on loopback unless told otherwise (issue #32). */
describe('npm start: the apps listen address', () => {
  it("is 127.0.0.1 by default, the caller's HOST when set", () => {
    expect(listenEnvUnder({})).toEqual({ HOST: '127.0.0.1' });
    expect(listenEnvUnder({ HOST: '' })).toEqual({ HOST: '127.0.0.1' });
    expect(listenEnvUnder({ HOST: '0.0.0.0' })).toEqual({ HOST: '0.0.0.0' });
  });
});
