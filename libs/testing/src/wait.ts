/** Polls `check` until it answers a truthy value, and answers it; fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(check: () => Promise<T> | T, timeoutMs = 20_000, what = 'a condition', everyMs = 100): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
