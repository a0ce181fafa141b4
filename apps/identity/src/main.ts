import './telemetry';
import { createLogger, retryWithBackoff } from '@platform/core';
import { warnIfDevelopmentKey } from '@platform/secrets';
import { createPool, createPrisma, migrateApp, ReadRouter } from '@platform/db';
import { runMain, serve } from '@platform/http';
import { createRedis } from '@platform/queue';
import { TokenSigner, privateKeyFromEnv } from '@platform/auth';
import { platformVerifier } from '@platform/directory';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { bootstrap, bootstrapNeeded } from './bootstrap/bootstrap';
import { loadConfig } from './config';
import { DirectorySync } from './directory/sync';
import type { IdentityDeps } from './deps';
import { pluginDatabaseUrl, startPublishedPlugins } from '@platform/plugin';

async function main() {
  const config = loadConfig();
  const logger = createLogger('identity');
  warnIfDevelopmentKey(logger, 'MFA secrets');
  if (config.migrateOnStart) migrateApp('identity', config.databaseUrl);

  // Every client logs its errors and reconnects by itself: a Postgres or Redis restart answers 503
  // for its duration (and /readyz 503), never takes the process down.
  const pool = createPool(config.databaseUrl, { logger });
  const prisma = createPrisma(PrismaClient, pool);
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: 3, logger });
  // External auth plugins: where they answer is read from the plugin module's table (PLUGIN_DATABASE_URL,
  // a role that may only SELECT installed_plugin), with a pool of its own, small: one indexed read per
  // cache miss (docs/decisions/plugins.md).
  const plugins = startPublishedPlugins(pluginDatabaseUrl(), redis, logger);
  const deps: IdentityDeps = {
    config,
    logger,
    pool,
    reads: ReadRouter.fromEnv(pool, { app: 'identity', redis, logger }),
    prisma,
    redis,
    redisPrefix: '',
    signer: new TokenSigner(privateKeyFromEnv()),
    verifier: platformVerifier(redis, logger),
    plugins,
  };

  if (await bootstrapNeeded(pool, config.bootstrap)) await bootstrap({ prisma, pool }, config.bootstrap, logger);
  const directory = new DirectorySync(deps);
  // The directory lives in Redis: publish everything at start and again whenever Redis comes back. A
  // publish that fails (Postgres down as well) is tried again, 1 s doubling to 30 s, until one succeeds.
  const republisher = retryWithBackoff(() => directory.publishAll(), {
    firstMs: 1000,
    onSuccess: (n) => logger.info({ domains: n }, 'project directory published'),
    onFailure: (err, retryMs) => logger.error({ err: err.message, retry_ms: retryMs }, 'project directory publish failed; retrying'),
  });
  const republish = () => republisher.run();
  redis.on('ready', republish);
  if (redis.status === 'ready') republish();

  serve(createApp(deps), {
    port: config.port,
    logger,
    service: 'identity',
    onShutdown: async () => {
      republisher.stop();
      await plugins.close();
      await deps.reads.close();
      await prisma.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
      redis.disconnect();
    },
  });
}

runMain('identity', main);
