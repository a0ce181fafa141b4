import { retryWithBackoff } from './retry';

describe('retryWithBackoff', () => {
  it('retries a failing task with a doubling wait up to the cap, resets it on success, and stops', async () => {
    jest.useFakeTimers();
    try {
      let failures = 3;
      const calls: number[] = [];
      const waits: number[] = [];
      const done: string[] = [];
      const r = retryWithBackoff(
        async () => {
          calls.push(Date.now());
          if (failures-- > 0) throw new Error('down');
          return 'ok';
        },
        { firstMs: 100, maxMs: 250, onSuccess: (v) => done.push(v), onFailure: (_e, ms) => waits.push(ms) },
      );
      r.run();
      for (let i = 0; i < 4; i++) {
        await Promise.resolve();
        await Promise.resolve();
        await jest.advanceTimersByTimeAsync(300);
      }
      expect(calls).toHaveLength(4);
      expect(waits).toEqual([100, 200, 250]);
      expect(done).toEqual(['ok']);
      // After a success the wait starts again from the first; after stop() a failure schedules nothing.
      failures = 10;
      r.run();
      await jest.advanceTimersByTimeAsync(0);
      expect(waits).toEqual([100, 200, 250, 100]);
      r.stop();
      await jest.advanceTimersByTimeAsync(10_000);
      expect(calls).toHaveLength(5);
    } finally {
      jest.useRealTimers();
    }
  });
});
