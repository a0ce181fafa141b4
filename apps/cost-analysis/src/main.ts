import './telemetry';
import { createLogger } from '@platform/core';
import { warnIfDevelopmentKey } from '@platform/secrets';
import { migrateApp } from '@platform/db';
import { runMain, serve } from '@platform/http';
import { platformVerifier } from '@platform/directory';
import { createApp } from './app';
import { loadConfig } from './config';
import { createDeps } from './runtime';

async function main() {
  const config = loadConfig();
  const logger = createLogger('cost-analysis');
  warnIfDevelopmentKey(logger, 'data source secrets');
  if (config.migrateOnStart) migrateApp('cost-analysis', config.databaseUrl);
  const { deps, close } = createDeps(config, logger);
  serve(createApp({ ...deps, verifier: platformVerifier(deps.redis, logger) }), { port: config.port, logger, service: 'cost-analysis', onShutdown: close });
}

runMain('cost-analysis', main);
