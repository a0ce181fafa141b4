/**
 * Writes the client's generated types (libs/client/src/generated/) from the apps' OpenAPI documents:
 * from the apps built and started here (`startPlatform`, ports shifted by CLIENT_GEN_PORT_OFFSET,
 * Redis database CLIENT_GEN_REDIS_URL), from a running platform with `--endpoint URL` (the gateway
 * of `npm start`), or from a JSON file `{module: document}` with `--docs FILE`. Run it after
 * changing an operation: `npm run client:generate`. `--check` writes nothing and exits 1 listing the
 * files that differ (the client's test runs it). `--save-docs FILE` also writes the documents there.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PLATFORM_APPS, startPlatform } from '@platform/testing';
import { GENERATED_DIR, renderClientFiles } from '../src/codegen';
import { fetchOpenApiDocs } from '../src/docs-source';

const flag = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};

async function loadDocs(): Promise<Record<string, { paths?: Record<string, unknown> }>> {
  const file = flag('--docs');
  if (file) return JSON.parse(readFileSync(file, 'utf8'));
  const endpoint = flag('--endpoint');
  if (endpoint) return fetchOpenApiDocs(PLATFORM_APPS, () => endpoint.replace(/\/+$/, ''));
  const platform = await startPlatform({
    portOffset: Number(process.env.CLIENT_GEN_PORT_OFFSET || 14_100),
    redisUrl: process.env.CLIENT_GEN_REDIS_URL || 'redis://127.0.0.1:6379/6',
    label: 'client-gen',
  });
  try {
    return await fetchOpenApiDocs(platform.apps, platform.urlOf);
  } finally {
    await platform.stop();
  }
}

async function main(): Promise<number> {
  const docs = await loadDocs();
  const save = flag('--save-docs');
  if (save) writeFileSync(save, JSON.stringify(docs, null, 1)); // the documents themselves, for linters
  const files = await renderClientFiles(docs);
  const dir = path.join(process.cwd(), GENERATED_DIR);
  const present = existsSync(dir) ? readdirSync(dir) : [];
  if (process.argv.includes('--check')) {
    const differ = [
      ...Object.entries(files).filter(([name, content]) => !present.includes(name) || readFileSync(path.join(dir, name), 'utf8') !== content).map(([name]) => name),
      ...present.filter((name) => !Object.hasOwn(files, name)),
    ];
    if (differ.length) console.error(`stale generated client files: ${differ.join(', ')} (run npm run client:generate)`);
    return differ.length ? 1 : 0;
  }
  mkdirSync(dir, { recursive: true });
  for (const f of present) if (!Object.hasOwn(files, f)) rmSync(path.join(dir, f));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  console.log(`wrote ${Object.keys(files).length} files to ${GENERATED_DIR}`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
