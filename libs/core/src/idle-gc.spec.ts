import { collectGarbageWhenIdle, idleCollector } from './index';

const MB = 1024 * 1024;

describe('idleCollector', () => {
  function collector(young: number[]) {
    const sizes = [...young];
    let collections = 0;
    const tick = idleCollector({ gc: () => collections++, newSpaceBytes: () => sizes.shift() ?? 1 * MB });
    return { tick, collections: () => collections };
  }

  it('collects at the end of the first quiet window after the start, and not again while the process stays quiet', () => {
    const c = collector([1 * MB]);
    expect(c.tick(0.001)).toBe(true);
    for (let i = 0; i < 10; i++) expect(c.tick(0.001)).toBe(false);
    expect(c.collections()).toBe(1);
  });

  it('waits while windows are busy, collects once they are quiet again', () => {
    const c = collector([1 * MB, 1 * MB]);
    expect(c.tick(0.001)).toBe(true);
    expect(c.tick(0.5)).toBe(false);
    expect(c.tick(0.3)).toBe(false);
    expect(c.collections()).toBe(1);
    expect(c.tick(0.002)).toBe(true);
    expect(c.tick(0.002)).toBe(false);
    expect(c.collections()).toBe(2);
  });

  it('tries again on the next quiet windows while the young generation is still large, four times at most', () => {
    const shrinks = collector([32 * MB, 1 * MB]);
    expect([shrinks.tick(0), shrinks.tick(0), shrinks.tick(0)]).toEqual([true, true, false]);
    const never = collector([32 * MB, 32 * MB, 32 * MB, 32 * MB, 32 * MB]);
    expect([never.tick(0), never.tick(0), never.tick(0), never.tick(0), never.tick(0), never.tick(0)]).toEqual([true, true, true, true, false, false]);
  });
});

describe('collectGarbageWhenIdle', () => {
  it('runs V8 full collections on a quiet process (no --expose-gc needed)', async () => {
    const collections: number[] = [];
    const stop = collectGarbageWhenIdle({ intervalMs: 20, busyUtilization: 0.9, onCollect: (young) => collections.push(young) });
    try {
      for (let i = 0; i < 500 && collections.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(collections.length).toBeGreaterThan(0);
    } finally {
      stop();
    }
  });

  it('is off with an interval of 0 (IDLE_GC_INTERVAL_MS=0)', async () => {
    const collections: number[] = [];
    const stop = collectGarbageWhenIdle({ intervalMs: 0, onCollect: (young) => collections.push(young) });
    await new Promise((r) => setTimeout(r, 100));
    stop();
    expect(collections).toEqual([]);
  });
});
