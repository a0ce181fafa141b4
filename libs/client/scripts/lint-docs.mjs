#!/usr/bin/env node
// `node libs/client/scripts/lint-docs.mjs --docs FILE`: the checks a client author's tools make of our
// OpenAPI documents (FILE is `{module: document}`, as `npm run client:generate -- --save-docs FILE`
// writes it, or the client's test fetches it from the running apps):
//   - spectral's `oas` ruleset: 0 problems (errors, warnings and hints alike);
//   - Redocly's `recommended` ruleset: 0 problems;
//   - the TypeScript client @hey-api/openapi-ts generates from each document compiles under `strict`.
// Prints each problem and exits 1 when there is any (docs/decisions/api.md, "OpenAPI documents that tell the truth").
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const i = process.argv.indexOf('--docs');
if (i < 0 || !process.argv[i + 1]) {
  console.error('usage: lint-docs.mjs --docs FILE');
  process.exit(2);
}
const docs = JSON.parse(readFileSync(process.argv[i + 1], 'utf8'));
const problems = [];

async function spectral() {
  const { Spectral, Document } = require('@stoplight/spectral-core');
  const { oas } = require('@stoplight/spectral-rulesets');
  const { Json } = require('@stoplight/spectral-parsers');
  const s = new Spectral();
  s.setRuleset(oas);
  for (const [m, doc] of Object.entries(docs)) {
    for (const r of await s.run(new Document(JSON.stringify(doc), Json, `${m}.json`))) problems.push(`spectral ${m}: ${r.code}: ${r.message} at ${r.path.join('.')}`);
  }
}

async function redocly() {
  const { createConfig, lintFromString } = require('@redocly/openapi-core');
  const config = await createConfig({ extends: ['recommended'] });
  for (const [m, doc] of Object.entries(docs)) {
    for (const p of await lintFromString({ source: JSON.stringify(doc), absoluteRef: `/${m}.json`, config })) {
      problems.push(`redocly ${m}: ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? ''}`);
    }
  }
}

async function heyApi() {
  const { createClient } = await import('@hey-api/openapi-ts');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hey-api-'));
  try {
    for (const [m, doc] of Object.entries(docs)) {
      writeFileSync(path.join(dir, `${m}.json`), JSON.stringify(doc));
      mkdirSync(path.join(dir, m));
      await createClient({ input: path.join(dir, `${m}.json`), output: path.join(dir, m), logs: { level: 'silent' } });
    }
    const tsconfig = { compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'dom', 'dom.iterable'], skipLibCheck: true }, include: ['**/*.ts'] };
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    if (tsc.status !== 0) problems.push(`hey-api: the generated clients do not compile under strict:\n${(tsc.stdout + tsc.stderr).slice(0, 4000)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await spectral();
await redocly();
if (!process.argv.includes('--no-clients')) await heyApi();
for (const p of problems.slice(0, 200)) console.error(p);
if (problems.length) console.error(`${problems.length} problems in the OpenAPI documents`);
else console.log(`OpenAPI documents of ${Object.keys(docs).join(', ')}: spectral oas, Redocly recommended and strict hey-api clients: 0 problems`);
process.exit(problems.length ? 1 : 0);
