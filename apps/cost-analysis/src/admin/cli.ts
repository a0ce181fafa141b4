import { createPool } from '@platform/db';
import { isApiError } from '@platform/errors';
import { usesDevelopmentKey } from '@platform/secrets';
import { loadConfig } from '../config';
import { sealDataSourceSecrets } from '../data-source/secret';

const USAGE = `usage: node dist/apps/cost-analysis/admin.js <noun> <verb>
  secrets seal      seal data sources' secret_data stored in plain text or with a previous key (idempotent)`;

/**
 * cost-analysis' admin commands (dist/apps/cost-analysis/admin.js; dist/admin.js in its image).
 * tools/prisma/migrate.mjs runs `secrets seal` after the migrations (prisma/after-migrate.json).
 */
async function main() {
  const [noun, verb, ...rest] = process.argv.slice(2);
  if (`${noun} ${verb}` !== 'secrets seal' || rest.length) {
    console.error(USAGE);
    process.exit(2);
  }
  const config = loadConfig();
  if (usesDevelopmentKey()) console.error('SECRET_ENCRYPTION_KEY is unset: sealing with the public development key');
  const pool = createPool(config.databaseUrl, { max: 2, role: 'worker' });
  try {
    const report = await sealDataSourceSecrets(pool, config.secretKeys);
    console.log(JSON.stringify({ msg: 'secrets sealed', column: 'data_source.secret_data', ...report }));
  } finally {
    await pool.end().catch(() => {});
  }
}

main().catch((err) => {
  console.error(isApiError(err) ? `${err.code}: ${err.message}` : (err?.message ?? String(err)));
  process.exit(1);
});
