import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, type Logger } from '@platform/core';
import { createPrisma, createReplicaPool, ReadRouter } from '@platform/db';
import { DirectoryClient, DirectoryPublisher } from '@platform/directory';
import { createQueue, createQueueConnection } from '@platform/queue';
import { createTempDatabase, createTestRedis, testVerifier, type TempDatabase } from '@platform/testing';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { COLLECT_QUEUE, type CollectTaskData } from './collector/queue';
import { startCollectionWorker } from './collector/worker';
import { loadConfig, type CostAnalysisConfig } from './config';
import type { CostAnalysisDeps } from './deps';
import { builtinPlugins } from './plugin/builtins';
import type { RemotePlugins } from './plugin/registry';
import { startScheduler } from './data-source/scheduler';
import { LOOPBACK_ONLY } from '@platform/net';

/** A clock tests set by hand (`set`); unset, it is the real time. */
export class TestClock {
  private fixed: Date | null = null;
  readonly now = () => (this.fixed ? new Date(this.fixed) : new Date());
  set(t: string | Date | null) {
    this.fixed = t === null ? null : new Date(t);
  }
}

/**
 * A real cost-analysis app on a fresh database, with its BullMQ queue and project directory under an
 * isolated Redis prefix; `startWorker()` runs the collection worker in this process.
 */
export async function createTestCostAnalysis(
  overrides: Partial<CostAnalysisConfig> = {},
  o: { db?: TempDatabase; readReplicaUrl?: string; remote?: RemotePlugins; logger?: Logger } = {},
) {
  const db = o.db ?? (await createTempDatabase({ app: 'cost-analysis' }));
  const r = createTestRedis('cost');
  const base = loadConfig();
  const config: CostAnalysisConfig = {
    ...base,
    databaseUrl: db.url,
    redisUrl: r.url,
    queuePrefix: `${r.prefix}bull`,
    directoryPrefix: r.prefix,
    outbound: LOOPBACK_ONLY,
    worker: { ...base.worker, lockDurationMs: 2000, stalledIntervalMs: 1000, attempts: 3 },
    ...overrides,
  };
  const prisma = createPrisma(PrismaClient, db.pool);
  const queueConnection = createQueueConnection(r.url);
  const queue = createQueue<CollectTaskData>(COLLECT_QUEUE, { connection: queueConnection, prefix: config.queuePrefix });
  const clock = new TestClock();
  const deps: CostAnalysisDeps = {
    config,
    logger: o.logger ?? createLogger('cost-analysis', process.env.TEST_LOG_LEVEL || 'silent'),
    pool: db.pool,
    reads: o.readReplicaUrl
      ? new ReadRouter({ primary: db.pool, replica: createReplicaPool(o.readReplicaUrl, { max: 4, connectTimeoutMs: 500 }), redis: r.redis, keyPrefix: r.prefix, checkMs: 100, maxLagMs: 5_000 })
      : new ReadRouter({ primary: db.pool }),
    prisma,
    redis: r.redis,
    directory: new DirectoryClient(r.redis, config.directoryPrefix),
    queue,
    plugins: builtinPlugins(config).useRemote(o.remote),
    verifier: testVerifier,
    clock: clock.now,
  };
  const workers: { close(): Promise<void> }[] = [];
  return {
    app: createApp(deps),
    deps,
    clock,
    queueConnection,
    /** The scheduler as src/worker.ts runs it (BullMQ job scheduler + tick worker), with the test's clock. */
    startScheduler(o: { ensureMs?: number } = {}) {
      const s = startScheduler(deps, queueConnection, o);
      workers.push({
        close: async () => {
          await s.worker.close();
          await s.queue.obliterate({ force: true }).catch(() => {});
          await s.close();
        },
      });
      return s;
    },
    config,
    db,
    directory: new DirectoryPublisher(r.redis, config.directoryPrefix),
    startWorker(o: { sweepMs?: number } = {}) {
      const w = startCollectionWorker(deps, queueConnection, o);
      workers.push(w);
      return w;
    },
    async close() {
      for (const w of workers) await w.close().catch(() => {});
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close().catch(() => {});
      await queueConnection.quit().catch(() => queueConnection.disconnect());
      await deps.reads.close();
      await prisma.$disconnect().catch(() => {});
      await r.cleanup();
      await db.drop();
    },
  };
}

/** A loopback HTTP server serving files from a map (path → CSV text or a streaming handler). */
export async function serveFiles(files: Record<string, string | ((res: import('node:http').ServerResponse) => void)>) {
  const server: Server = createServer((req, res) => {
    const f = files[req.url ?? ''];
    if (f === undefined) {
      res.statusCode = 404;
      return res.end('not found');
    }
    res.setHeader('Content-Type', 'text/csv');
    if (typeof f === 'string') return res.end(f);
    f(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = (p: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${p}`;
  return {
    url,
    files,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
    server,
  };
}

