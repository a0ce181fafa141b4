// Jest globalSetup / globalTeardown (jest.preset.cjs) of the answer check (answers-setup.ts): a fresh
// record directory per run; after the run, when every spec file of the project ran to its end (the whole
// suite, not a filtered run), every operation of the project's app must have been answered 200 (and
// so validated against its response schema) at least once.
const { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function specFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'generated' || name === 'dist') continue;
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) specFiles(file, out);
    else if (name.endsWith('.spec.ts')) out.push(file);
  }
  return out;
}

async function setup() {
  process.env.PLATFORM_ANSWERS_DIR = mkdtempSync(path.join(os.tmpdir(), 'platform-answers-'));
}

async function teardown(globalConfig, projectConfig) {
  const dir = process.env.PLATFORM_ANSWERS_DIR;
  if (!dir) return;
  try {
    const partial = globalConfig.testNamePattern || (globalConfig.testPathPatterns?.patterns?.length ?? 0) > 0 || globalConfig.shard || globalConfig.onlyChanged;
    const records = readdirSync(dir).map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')));
    const done = new Set(records.filter((r) => r.done).map((r) => r.testPath));
    const all = specFiles(projectConfig.rootDir);
    if (partial || all.some((f) => !done.has(f))) return;
    const service = projectConfig.displayName?.name ?? projectConfig.displayName;
    const declared = new Set(records.flatMap((r) => r.declared[service] ?? []));
    const answered = new Set(records.flatMap((r) => r.answered[service] ?? []));
    const missing = [...declared].filter((op) => !answered.has(op)).sort();
    if (declared.size === 0) return;
    if (missing.length) {
      throw new Error(`${service}: operations never answered 200 in the suite, so their response schema was not checked:\n- ${missing.join('\n- ')}`);
    }
    console.log(`${service}: all ${declared.size} operations answered 200 and checked against their response schema`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { setup, teardown };
