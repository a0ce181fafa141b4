import Redis from 'ioredis';
import { createLogger } from '@platform/core';
import { createPool, createPrisma, migrateApp } from '@platform/db';
import { runMain, serve } from '@platform/http';
import { TokenSigner, TokenVerifier, privateKeyFromEnv, publicKeyFromEnv } from '@platform/auth';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { bootstrap } from './bootstrap/bootstrap';
import { loadConfig } from './config';
import { DirectorySync } from './directory/sync';
import type { IdentityDeps } from './deps';

async function main() {
  const config = loadConfig();
  const logger = createLogger('identity');
  if (config.migrateOnStart) migrateApp('identity', config.databaseUrl);

  const pool = createPool(config.databaseUrl);
  const prisma = createPrisma(PrismaClient, pool);
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3, enableOfflineQueue: false });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  const deps: IdentityDeps = {
    config,
    logger,
    pool,
    prisma,
    redis,
    redisPrefix: '',
    signer: new TokenSigner(privateKeyFromEnv()),
    verifier: new TokenVerifier(publicKeyFromEnv()),
  };

  await bootstrap(prisma, config.bootstrap, logger);
  const directory = new DirectorySync(deps);
  // The directory lives in Redis: publish everything at start and again whenever Redis comes back.
  const republish = () =>
    directory.publishAll().then(
      (n) => logger.info({ domains: n }, 'project directory published'),
      (err) => logger.error({ err: err.message }, 'project directory publish failed'),
    );
  redis.on('ready', republish);
  if (redis.status === 'ready') await republish();

  serve(createApp(deps), {
    port: config.port,
    logger,
    service: 'identity',
    onShutdown: async () => {
      await prisma.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
      redis.disconnect();
    },
  });
}

runMain('identity', main);
