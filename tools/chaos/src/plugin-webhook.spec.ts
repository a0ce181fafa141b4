import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { DirectoryPublisher } from '@platform/directory';
import { EndpointChanges } from '@platform/plugin';
import { bundleEntry, mintToken, testKeys, waitFor } from '@platform/testing';
import { freePort, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './dependencies';
import { ROOT, startApps, type Supervised } from './processes';

/**
 * Chaos: monitoring (API + worker, built as for production, under the `npm start` supervisor) takes a
 * stream of webhook posts for a webhook served by a published TypeScript plugin (the kit, its own
 * process) while the plugin is SIGKILLed and started again seconds later on the same port. Every
 * post is accepted (the URL does not call the plugin), and once the plugin is back every delivery
 * is parsed and each of its events created exactly once: none lost, none doubled, no ERROR event.
 */
const DOMAIN = 'domain-chaos-plugin';
const WORKSPACE = 'workspace-chaos-plugin';
const PROJECT = 'project-chaos-plugin';
const PLUGIN_ID = 'plugin-acme-mon-webhook';
const SENDERS = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('chaos: the webhook plugin killed during a stream of posts', () => {
  let dir: string;
  let pgc: PrivatePostgres;
  let redis: PrivateRedis;
  let sup: Supervised;
  let monitoring: string;
  let token: string;
  let pluginFile: string;
  let pluginPort: number;
  let plugin: ChildProcess | undefined;

  const startPlugin = async () => {
    const child = spawn(process.execPath, [pluginFile], { env: { ...process.env, PORT: String(pluginPort), NODE_PATH: path.join(ROOT, 'node_modules') }, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('plugin ready') && resolve());
      child.once('exit', (code) => reject(new Error(`plugin exited early (${code})`)));
    });
    child.removeAllListeners('exit');
    plugin = child;
  };
  const killPlugin = async () => {
    const child = plugin!;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    plugin = undefined;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'chaos-plugin-'));
    pluginFile = bundleEntry(path.join(__dirname, 'acme-webhook-plugin.fixture.ts'), path.join(dir, 'plugin.js'));
    pluginPort = await freePort();
    [pgc, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
    const r = new Redis(redis.url);
    await new DirectoryPublisher(r).publish(DOMAIN, {
      projects: [{ project_id: PROJECT, workspace_id: WORKSPACE, project_group_id: '', name: 'chaos' }],
      groups: [],
      workspaces: [{ workspace_id: WORKSPACE, name: 'chaos' }],
    });
    const apps = await startApps({ apps: ['monitoring'], pg: pgc, redisUrl: redis.url, dir, logFile: path.join(dir, 'processes.log'), env: { JWT_PUBLIC_KEY: testKeys.publicPem } });
    sup = apps.sup;
    monitoring = apps.url.monitoring;
    await startPlugin();
    // The publish as the plugin module writes it (platform_plugin on monitoring's server), announced to every resolver.
    await pgc.query('platform_plugin', `INSERT INTO supervisor (domain_id, supervisor_id, name, hostname, secret_digest) VALUES ($1, 'sup-chaos', 'chaos', 'chaos', 'x')`, [DOMAIN]);
    await pgc.query(
      'platform_plugin',
      `INSERT INTO installed_plugin (supervisor_id, domain_id, supervisor_name, hostname, plugin_id, version, state, endpoint, plugin_key)
       VALUES ('sup-chaos', $1, 'chaos', 'chaos', $2, '1.0.0', 'ACTIVE', $3, 'sup-chaos ' || $2 || ' 1.0.0')`,
      [DOMAIN, PLUGIN_ID, `grpc://127.0.0.1:${pluginPort}`],
    );
    await new EndpointChanges(r).announce({ domainId: DOMAIN, pluginIds: [PLUGIN_ID] });
    r.disconnect();
    token = await mintToken({ domainId: DOMAIN, workspaceId: WORKSPACE, roleType: 'WORKSPACE_OWNER', ttlSeconds: 3600 });
  }, 240_000);

  afterAll(async () => {
    if (plugin) await killPlugin();
    await sup?.stop();
    await pgc?.destroy();
    await redis?.destroy();
    if (dir && !process.env.CHAOS_KEEP) rmSync(dir, { recursive: true, force: true });
  });

  it('every post accepted while the plugin is down; every event created once after its restart', async () => {
    const created = await fetch(`${monitoring}/monitoring/v1/webhook/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'chaos-plugin', plugin_info: { plugin_id: PLUGIN_ID }, project_id: PROJECT }),
    });
    expect(created.status).toBe(200);
    const hook = (await created.json()) as { webhook_id: string; webhook_url: string; plugin_info: { metadata: unknown } };
    expect(hook.plugin_info.metadata).toEqual({ kind: 'acme' });
    const url = `${monitoring}${new URL(hook.webhook_url).pathname}`;

    const sent: string[] = [];
    const answers = new Map<number, number>();
    let stop = false;
    const sender = async (s: number) => {
      for (let i = 0; !stop; i++) {
        const id = `s${s}-${i}`;
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ alerts: [{ id, host: `h-${i % 7}` }] }), signal: AbortSignal.timeout(15_000) });
        answers.set(res.status, (answers.get(res.status) ?? 0) + 1);
        if (res.status === 200) sent.push(id);
        await sleep(5);
      }
    };
    const senders = Array.from({ length: SENDERS }, (_, s) => sender(s));
    await sleep(2000);
    const beforeKill = sent.length;
    await killPlugin();
    await sleep(6000); // down 6 s: the worker's calls fail, its jobs wait
    const duringOutage = sent.length - beforeKill;
    await startPlugin();
    await sleep(2000);
    stop = true;
    await Promise.all(senders);
    process.stdout.write(`chaos plugin: ${sent.length} posts accepted (${duringOutage} while the plugin was down), answers ${JSON.stringify(Object.fromEntries(answers))}\n`);

    expect([...answers.keys()]).toEqual([200]); // every post accepted, none refused
    expect(duringOutage).toBeGreaterThan(50);
    const count = async () => (await pgc.query<{ n: number }>('platform_monitoring', `SELECT count(*)::int AS n FROM webhook_delivery WHERE webhook_id = $1`, [hook.webhook_id]))[0].n;
    await waitFor(async () => (await count()) >= sent.length, 120_000, 'every accepted post stored', 250);
    expect(await count()).toBe(sent.length);
    const rows = await pgc.query<{ event_key: string; event_type: string; n: number }>(
      'platform_monitoring',
      `SELECT event_key, event_type, count(*)::int AS n FROM event WHERE webhook_id = $1 GROUP BY event_key, event_type`,
      [hook.webhook_id],
    );
    expect(rows.filter((x) => x.event_type !== 'ALERT')).toEqual([]); // no ERROR event: nothing was parsed while the plugin was down
    expect(rows.filter((x) => x.n !== 1)).toEqual([]); // none doubled
    expect(rows.map((x) => x.event_key).sort()).toEqual([...sent].sort()); // none lost
    const outcomes = await pgc.query<{ outcome: string; n: number }>('platform_monitoring', `SELECT outcome, count(*)::int AS n FROM webhook_delivery WHERE webhook_id = $1 GROUP BY outcome`, [hook.webhook_id]);
    expect(outcomes).toEqual([{ outcome: 'STORED', n: sent.length }]);
    const r = new Redis(redis.url);
    try {
      expect(await r.zcard('bull:monitoring-webhook-events:failed')).toBe(0);
    } finally {
      r.disconnect();
    }
  }, 300_000);
});
