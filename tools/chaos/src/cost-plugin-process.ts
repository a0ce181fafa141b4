// A cost data source plugin in a process of its own, as a plugin container runs (libs/plugin-kit),
// for plugin-cost.spec.ts: bundled and started with PORT; it streams PLUGIN_ROWS rows of 2024-03 in
// pages of 500, PLUGIN_PAGE_DELAY_MS apart, so that the test can kill it mid-stream.
import { serveCostDataSource } from '@platform/plugin-kit';

const ROWS = Number(process.env.PLUGIN_ROWS || 20_000);
const DELAY = Number(process.env.PLUGIN_PAGE_DELAY_MS || 0);
const PAGE = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const server = await serveCostDataSource(
    {
      init: () => ({ metadata: { currency: 'USD' } }),
      getTasks: () => ({ tasks: [{ task_options: { rows: ROWS } }] }),
      getData: async function* () {
        for (let start = 0; start < ROWS; start += PAGE) {
          if (DELAY) await sleep(DELAY);
          const results = [];
          for (let i = start; i < Math.min(ROWS, start + PAGE); i++) {
            results.push({ cost: (i % 100) / 4, usage_quantity: 1, provider: 'aws', product: `p-${i % 5}`, billed_date: `2024-03-${String((i % 28) + 1).padStart(2, '0')}` });
          }
          yield { results };
        }
      },
    },
    { port: Number(process.env.PORT) },
  );
  process.stdout.write(`listening ${server.endpoint}\n`);
}

void main();
