import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * The plugin module records endpoints and never calls a plugin: its production bundle (the build's
 * own bundler, tools/build/bundle.mjs) must not load @grpc/grpc-js or protobufjs (~12 MB and ~90 ms
 * of start each process), though it imports libs/plugin for the endpoint parser and the resolver.
 */
describe('plugin bundle', () => {
  it('does not load the gRPC runtime', () => {
    const outfile = path.join(mkdtempSync(path.join(ROOT, 'tmp', 'plugin-bundle-')), 'main.js');
    const script = `import(${JSON.stringify(path.join(ROOT, 'tools/build/bundle.mjs'))}).then((m) => m.bundle({ entryPoints: [${JSON.stringify(path.join(__dirname, 'main.ts'))}], outfile: ${JSON.stringify(outfile)} }))`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect([r.status, r.stderr]).toEqual([0, expect.anything()]);
    const text = readFileSync(outfile, 'utf8');
    expect(text).toContain('libs/plugin/src/endpoint.ts');
    expect(text).not.toMatch(/require\("(@grpc\/grpc-js|protobufjs)[^"]*"\)/);
  });
});
