import { collectGarbageWhenIdle } from './index';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('collectGarbageWhenIdle', () => {
  it('collects once the process has been quiet for two windows, then leaves a quiet process alone', async () => {
    const collections: number[] = [];
    const stop = collectGarbageWhenIdle({ intervalMs: 20, busyUtilization: 0.5, onCollect: (young) => collections.push(young) });
    try {
      for (let i = 0; i < 500 && collections.length === 0; i++) await sleep(20);
      expect(collections.length).toBeGreaterThan(0);
      // At most three tries per quiet period, however long it lasts.
      await sleep(400);
      expect(collections.length).toBeLessThanOrEqual(3);
    } finally {
      stop();
    }
  });

  it('is off with an interval of 0 (IDLE_GC_INTERVAL_MS=0)', async () => {
    const collections: number[] = [];
    const stop = collectGarbageWhenIdle({ intervalMs: 0, onCollect: (young) => collections.push(young) });
    await sleep(100);
    stop();
    expect(collections).toEqual([]);
  });
});
