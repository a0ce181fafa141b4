import { runFuzz } from './main';

/**
 * CI's fuzz run: a fixed seed and a bounded count, against the built apps (each on a fresh database,
 * workers included). `npm run fuzz -- --runs N --seed S` runs longer, and reproduces and shrinks a case.
 */
const CI_SEED = 20_261_123;
const CI_RUNS = 60;

describe('the schema-driven fuzzer, fixed seed', () => {
  it(`finds nothing in ${CI_RUNS} cases per operation and route (seed ${CI_SEED})`, async () => {
    // A freeze costs its 5 s deadline and a restart: the budget keeps a red run inside the test's timeout
    // (jest.config.cjs). On 2026-11-27's slower host the 9,677 cases needed about 187 s, over the 180 s
    // budget then, with nothing failing: 480 s leaves room for a host twice as slow.
    const { report, text } = await runFuzz({ seed: CI_SEED, runs: CI_RUNS, shrink: 0, timeoutMs: 5000, budgetMs: 480_000, log: () => {} });
    process.stdout.write(`${text}\n`);
    expect(report.failures.map((f) => `${f.signature} — ${f.cause ?? f.problems[0].detail.slice(0, 160)}`)).toEqual([]);
    // Every target got all its cases: an app that stopped serving its OpenAPI would otherwise go unfuzzed.
    expect(report.skipped).toBe(0);
    expect(Object.keys(report.perTarget).length).toBeGreaterThanOrEqual(90);
    expect(Object.values(report.perTarget).filter((s) => s.cases !== CI_RUNS)).toEqual([]);
  });
});
