import { Batcher } from './batcher';

describe('Batcher', () => {
  it('writes items submitted together in one batch, up to the batch size', async () => {
    const writes: number[][] = [];
    const b = new Batcher<number>(async (items) => void writes.push(items), 3, 5);
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
      10,
      5,
    );
    const results = await Promise.allSettled([1, 2, 3].map((n) => b.submit(n)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(writes).toEqual([[1, 2, 3], [1], [2], [3]]);
  });
});
