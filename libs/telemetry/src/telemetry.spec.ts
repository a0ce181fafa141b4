import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { tracingConfigured } from './index';

const ROOT = path.resolve(__dirname, '../../..');

describe('tracingConfigured', () => {
  it('is on only with an OTLP endpoint, and off when the SDK or the traces exporter is turned off', () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
    expect(tracingConfigured({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });
});

describe('startTelemetry in a process of its own', () => {
  // The lib bundled as the apps bundle it (node_modules external), then started in a fresh node.
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'telemetry-')), 'telemetry.js');
  beforeAll(() => {
    buildSync({ entryPoints: [path.join(__dirname, 'index.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: file, packages: 'external', logLevel: 'error' });
  });
  const run = (env: Record<string, string>) => {
    const script = `
      const t = require(${JSON.stringify(file)});
      const on = t.startTelemetry('probe');
      require('node:http'); require('pg'); require('ioredis'); require('express');
      const loaded = Object.keys(require.cache).filter((k) => k.includes('@opentelemetry'));
      const mixin = t.traceLogMixin();
      process.stdout.write(JSON.stringify({ on, enabled: t.tracingEnabled(), loaded: loaded.length, inject: t.injectTrace() ?? null, mixin: typeof mixin }));
      t.shutdownTelemetry().then(() => process.exit(0));`;
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
    const out = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, env: { ...clean, NODE_PATH: path.join(ROOT, 'node_modules'), ...env }, encoding: 'utf8' });
    if (out.status !== 0) throw new Error(out.stderr);
    return JSON.parse(out.stdout) as { on: boolean; enabled: boolean; loaded: number; inject: unknown; mixin: string };
  };

  it('loads no module of OpenTelemetry when no endpoint is set, or when OTEL_SDK_DISABLED is true', () => {
    for (const env of [{} as Record<string, string>, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SDK_DISABLED: 'true' }]) {
      expect(run(env)).toEqual({ on: false, enabled: false, loaded: 0, inject: null, mixin: 'undefined' });
    }
  });

  it('starts the SDK with an endpoint', () => {
    const r = run({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    expect(r).toMatchObject({ on: true, enabled: true, mixin: 'function' });
    expect(r.loaded).toBeGreaterThan(10);
  });
});
