/**
 * A background task that must succeed once (a republish, a reload): `run()` starts it now, cancelling a
 * retry already waiting; a failure is tried again after `firstMs`, doubling to `maxMs`; a success resets
 * the wait. `stop()` cancels what is waiting, and a failure after it schedules nothing.
 */
export function retryWithBackoff<T>(
  task: () => Promise<T>,
  o: { firstMs: number; maxMs?: number; onSuccess?: (value: T) => void; onFailure?: (err: Error, retryMs: number) => void },
) {
  const maxMs = o.maxMs ?? 30_000;
  let waitMs = o.firstMs;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const run = (): void => {
    stopped = false;
    clearTimeout(timer);
    task().then(
      (value) => {
        waitMs = o.firstMs;
        o.onSuccess?.(value);
      },
      (err: Error) => {
        if (stopped) return;
        o.onFailure?.(err, waitMs);
        timer = setTimeout(run, waitMs);
        timer.unref?.();
        waitMs = Math.min(waitMs * 2, maxMs);
      },
    );
  };
  return {
    run,
    stop(): void {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
