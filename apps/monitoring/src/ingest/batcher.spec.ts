import { Batcher } from './batcher';

const tick = () => new Promise((r) => setImmediate(r));

describe('Batcher', () => {
  it('writes items submitted together in one batch, up to the batch size', async () => {
    const writes: number[][] = [];
    const b = new Batcher<number>(async (items) => void writes.push(items), { maxSize: 3, maxWaitMs: 5 });
    await Promise.all([1, 2, 3, 4, 5].map((n) => b.submit(n)));
    expect(writes).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('when a batch fails, retries its items one by one so only the bad one fails', async () => {
    const writes: number[][] = [];
    const b = new Batcher<number>(
      async (items) => {
        writes.push(items);
        if (items.includes(2)) throw new Error('bad item 2');
      },
      { maxSize: 10, maxWaitMs: 5, retrySingly: true },
    );
    const results = await Promise.allSettled([1, 2, 3].map((n) => b.submit(n)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(writes).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it('group commit: the first item goes at once, those arriving meanwhile go together next', async () => {
    const writes: number[][] = [];
    const gates: (() => void)[] = [];
    const b = new Batcher<number>(
      async (items) => {
        writes.push(items);
        await new Promise<void>((r) => gates.push(r));
      },
      { maxSize: 100, maxWaitMs: 0, maxInFlight: 1 },
    );
    const first = b.submit(1);
    await tick();
    expect(writes).toEqual([[1]]);
    const rest = [2, 3, 4].map((n) => b.submit(n));
    await tick();
    expect(writes).toEqual([[1]]); // one write at a time: the others wait for it
    gates.shift()!();
    await first;
    await tick();
    await tick();
    expect(writes).toEqual([[1], [2, 3, 4]]);
    gates.shift()!();
    await Promise.all(rest);
  });

  it('keeps a batch under its weight, and reports failures per item without retrying', async () => {
    const writes: string[][] = [];
    const b = new Batcher<string>(
      async (items) => {
        writes.push(items);
        return items.map((s) => (s.startsWith('x') ? new Error(`refused ${s}`) : undefined));
      },
      { maxSize: 10, maxWaitMs: 0, weigh: (s) => s.length, maxWeight: 6 },
    );
    const results = await Promise.allSettled(['aa', 'xbb', 'cc', 'dddddddd', 'e'].map((s) => b.submit(s)));
    // 'cc' + 'dddddddd' would weigh 10; an item heavier than the limit still goes, alone.
    expect(writes).toEqual([['aa', 'xbb'], ['cc'], ['dddddddd'], ['e']]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
  });

  it('without retrySingly a failed batch fails all its items', async () => {
    const b = new Batcher<number>(
      async () => {
        throw new Error('down');
      },
      { maxSize: 10, maxWaitMs: 0 },
    );
    const results = await Promise.allSettled([1, 2].map((n) => b.submit(n)));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(results.map((r) => r.status === 'rejected' && (r.reason as Error).message)).toEqual(['down', 'down']);
  });
});
