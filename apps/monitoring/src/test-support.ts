import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Redis from 'ioredis';
import { createLogger, type Logger } from '@platform/core';
import { EndpointChanges, PluginClients, pluginClientConfigFromEnv, PluginEndpointResolver, tableSource, type PluginClientConfig } from '@platform/plugin';
import type { RemotePlugins } from './plugins/remote';
import { createPool, createPrisma, ReadRouter } from '@platform/db';
import { DirectoryPublisher, type DomainDirectory } from '@platform/directory';
import { createQueueConnection, type Worker } from '@platform/queue';
import { createTempDatabase, createTestRedis, testVerifier, TEST_REDIS_URL } from '@platform/testing';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig, type MonitoringConfig } from './config';
import type { MonitoringDeps } from './deps';
import { startDeliveryWorker } from './ingest/worker-runtime';
import { WebhookCopy } from './ingest/webhook-copy';
import { createDeliveryQueue, createDirectoryRedis } from './queues';
import { NO_PRIVATE_DESTINATIONS, type OutboundPolicy } from '@platform/net';

export interface TestOptions {
  /** The outbound allow-list (default: no private destination). */
  outbound?: OutboundPolicy;
  snsConfirmHosts?: string[];
  /** Start an in-process delivery worker (default true). */
  worker?: boolean;
  ingest?: Partial<MonitoringConfig['ingest']>;
  workerConfig?: Partial<MonitoringConfig['worker']>;
  /** Redis URL of the app's delivery queue (a dead one simulates Redis being down). */
  queueRedisUrl?: string;
  /** Another Redis for everything (directory, queue, worker) instead of the shared test Redis. */
  redisUrl?: string;
  /**
   * The PostgreSQL URL the app and the in-process worker use, made from the test database's: a test
   * routes it through a proxy it can cut to take PostgreSQL away from them (`db.pool` stays direct).
   */
  appDatabaseUrl?: (url: string) => string;
  /** The app's and the in-process worker's logger (default silent): a test reads what they log. */
  logger?: Logger;
  /**
   * Published plugins: a plugin module's database of the test's own (the endpoint table, written by
   * `publishPlugin`), the resolver on the test's Redis prefix and gRPC clients, given to the app and
   * the in-process worker as main.ts and worker.ts give them.
   */
  plugins?: boolean | { clientConfig?: Partial<PluginClientConfig> };
}

/** The plugin module's endpoint table of a test, and what publishes into it (as the plugin module's publish does). */
async function createTestPluginTable(redis: Redis, prefix: string, clientConfig: Partial<PluginClientConfig> = {}) {
  const db = await createTempDatabase({ app: 'plugin' });
  db.pool.on('error', () => {});
  const resolver = new PluginEndpointResolver(redis, tableSource(db.pool), { prefix });
  await resolver.start();
  const clients = new PluginClients({ ...pluginClientConfigFromEnv(), ...clientConfig });
  const changes = new EndpointChanges(redis, prefix);
  return {
    db,
    plugins: { resolver, clients } satisfies RemotePlugins,
    /** Publishes (or replaces) `plugin_id` `version` at `endpoint` for `domainId` and tells every resolver. */
    async publish(domainId: string, pluginId: string, version: string, endpoint: string) {
      const sup = `supervisor-${domainId}`;
      await db.pool.query(
        `INSERT INTO supervisor (domain_id, supervisor_id, name, hostname, secret_digest) VALUES ($1, $2, $2, $2, 'x') ON CONFLICT DO NOTHING`,
        [domainId, sup],
      );
      await db.pool.query(
        `INSERT INTO installed_plugin (supervisor_id, domain_id, supervisor_name, hostname, plugin_id, version, state, endpoint, plugin_key)
         VALUES ($1, $2, $1, $1, $3, $4, 'ACTIVE', $5, $1 || ' ' || $3 || ' ' || $4)
         ON CONFLICT (supervisor_id, plugin_id, version) DO UPDATE SET endpoint = EXCLUDED.endpoint, updated_at = now()`,
        [sup, domainId, pluginId, version, endpoint],
      );
      await changes.announce({ domainId, pluginIds: [pluginId] });
    },
    /** Withdraws every version of `plugin_id` published for `domainId`. */
    async withdraw(domainId: string, pluginId: string) {
      await db.pool.query(`DELETE FROM installed_plugin WHERE domain_id = $1 AND plugin_id = $2`, [domainId, pluginId]);
      await changes.announce({ domainId, pluginIds: [pluginId] });
    },
    async close() {
      resolver.stop();
      clients.close();
      await db.drop();
    },
  };
}

/** The directory's Redis on the shared test Redis (isolated by prefix), or on a Redis of the test's own. */
async function directoryRedis(url?: string) {
  if (!url) return createTestRedis('monitoring');
  const redis = createDirectoryRedis(url);
  redis.on('error', () => {});
  await new Promise((ready) => redis.once('ready', ready));
  return { redis, prefix: `t:monitoring:${process.pid}:${randomBytes(4).toString('hex')}:`, cleanup: async () => redis.disconnect() };
}

/** A real monitoring app (and worker) on a fresh database and an isolated Redis prefix, for one test file. */
export async function createTestMonitoring(o: TestOptions = {}) {
  const db = await createTempDatabase({ app: 'monitoring' });
  // db.drop() ends the pool, then drops the database WITH (FORCE): a client still closing is cut,
  // and its error must not fail the run (nothing else listens on this pool).
  db.pool.on('error', () => {});
  const redisUrl = o.redisUrl ?? TEST_REDIS_URL;
  const r = await directoryRedis(o.redisUrl);
  const queuePrefix = r.prefix.replace(/:$/, '');
  const base = loadConfig();
  const config: MonitoringConfig = {
    ...base,
    redisUrl,
    databaseUrl: db.url,
    publicBaseUrl: 'https://monitoring.example.test',
    outbound: o.outbound ?? NO_PRIVATE_DESTINATIONS,
    snsConfirmHosts: o.snsConfirmHosts ?? [],
    ingest: { ...base.ingest, queuePrefix, ...o.ingest },
    worker: { ...base.worker, concurrency: 32, batchSize: 50, lockDurationMs: 5000, stalledIntervalMs: 2000, ...o.workerConfig },
  };
  const logger = o.logger ?? createLogger('monitoring', 'silent');
  const appPool = o.appDatabaseUrl ? createPool(o.appDatabaseUrl(db.url), { onError: () => {} }) : db.pool;
  const prisma = createPrisma(PrismaClient, appPool);
  const { queue, connection, ready } = createDeliveryQueue(o.queueRedisUrl ?? redisUrl, config.ingest.queue, queuePrefix);
  const webhookCopy = new WebhookCopy(r.redis, appPool, { prefix: r.prefix, logger });
  webhookCopy.start();
  const pluginTable = o.plugins ? await createTestPluginTable(r.redis, r.prefix, typeof o.plugins === 'object' ? o.plugins.clientConfig : {}) : undefined;
  const deps: MonitoringDeps = {
    config,
    logger,
    pool: appPool,
    reads: new ReadRouter({ primary: appPool }),
    prisma,
    redis: r.redis,
    redisPrefix: r.prefix,
    verifier: testVerifier,
    queue,
    queueReady: ready,
    webhookCopy,
    ...(pluginTable && { plugins: pluginTable.plugins }),
  };
  const app = createApp(deps);

  let worker: Worker | undefined;
  let workerConnection: ReturnType<typeof createQueueConnection> | undefined;
  const startWorker = async () => {
    workerConnection = createQueueConnection(redisUrl);
    worker = startDeliveryWorker({ config, pool: appPool, connection: workerConnection, prefix: queuePrefix, logger, plugins: pluginTable?.plugins });
    await worker.waitUntilReady();
  };
  if (o.worker ?? true) await startWorker();

  const publisher = new DirectoryPublisher(r.redis, r.prefix);
  return {
    /** The plugin module's endpoint table (with `plugins`). */
    pluginTable,
    startWorker,
    async stopWorker() {
      await worker?.close().catch(() => {});
      workerConnection?.disconnect();
      worker = undefined;
    },
    app,
    deps,
    config,
    queue,
    queuePrefix,
    db,
    /** identity's directory entry for a domain: these projects, in these workspaces (with these users). */
    publishProjects: (domainId: string, projects: { project_id: string; workspace_id: string; users?: string[] }[]) =>
      publisher.publish(domainId, { projects: projects.map((p) => ({ ...p, project_group_id: '', name: p.project_id })), groups: [] }),
    /** identity's whole directory entry for a domain (projects, groups and their users). */
    publish: (domainId: string, dir: DomainDirectory) => publisher.publish(domainId, dir),
    /** Waits until `n` deliveries are stored (or throws after `timeoutMs`); refused ones (NOT_ACCEPTED) do not count. */
    async waitForDeliveries(n: number, timeoutMs = 15_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_delivery WHERE outcome <> 'NOT_ACCEPTED'`);
        if (rows[0].n >= n) return rows[0].n;
        if (Date.now() > end) throw new Error(`only ${rows[0].n} of ${n} deliveries stored after ${timeoutMs} ms`);
        await new Promise((res) => setTimeout(res, 50));
      }
    },
    async close() {
      await worker?.close().catch(() => {});
      workerConnection?.disconnect();
      await queue.close().catch(() => {});
      connection.disconnect();
      webhookCopy.stop();
      await prisma.$disconnect().catch(() => {});
      if (appPool !== db.pool) await appPool.end().catch(() => {});
      await pluginTable?.close();
      await r.cleanup();
      await db.drop();
    },
  };
}

export type TestMonitoring = Awaited<ReturnType<typeof createTestMonitoring>>;

/** A loopback stand-in for a Prometheus HTTP API: answers the instant query the way Prometheus does. */
/** What fakePrometheus' other paths answer: no answer, error or log-visible text of the platform may quote it. */
export const OUTBOUND_MARKER = 'MARKER-prom-3b8e27';

export function fakePrometheus(): Promise<{ url: string; queries: string[]; close(): void }> {
  const queries: string[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/prom/api/v1/query') {
      queries.push(u.searchParams.get('query') ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [Date.now() / 1000, '1'] }] } }));
    } else if (u.pathname === '/echo/api/v1/query') {
      // a target that answers JSON carrying a marker: no answer of the platform may quote it
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: OUTBOUND_MARKER, data: OUTBOUND_MARKER }));
    } else if (u.pathname === '/reset/api/v1/query') {
      req.socket.destroy();
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`404 page not found ${OUTBOUND_MARKER}`);
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/prom`,
        queries,
        close: () => {
          server.closeAllConnections();
          server.close();
        },
      }),
    ),
  );
}
