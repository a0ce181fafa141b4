import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { envInt } from './config';

/** V8's full collection, reached without starting node with --expose-gc (which would also expose `gc` to every module). */
function fullGc(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    // The flag installs `gc` on contexts created after it is set: a new one, whose `gc` collects the whole heap.
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

const newSpaceBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;

export interface IdleCollectorOptions {
  /** The length of a window (default `IDLE_GC_INTERVAL_MS`, 5000; 0 turns the collector off). */
  intervalMs?: number;
  /** A window whose event-loop utilisation is above this is busy (default 0.01: 50 ms of work in 5 s). */
  busyUtilization?: number;
  /** Told after each collection, with the young generation's size then (bytes). */
  onCollect?: (newSpaceBytes: number) => void;
}

/**
 * Gives memory back once a process goes quiet (issue #14, docs/decisions/performance.md "Footprint and
 * startup"). A process with no traffic never collects: the garbage of its start (and of a burst of
 * load) stays in the heap, and V8 keeps the young generation at the size the load grew it to (16 MB
 * semi-spaces), so RSS stays where the busiest moment left it. Every `intervalMs` the event loop's
 * utilisation of the window is read; after activity (the start counts as activity), at the end of the
 * first quiet window, one full GC runs. V8 also shrinks the young generation at a GC when it sees a
 * low allocation rate; one run right after a burst may still see the burst's rate, so while the young
 * generation is still large the collection is tried again on the next quiet windows (four times at
 * most). Only ever on an idle process: under load every window is busy and nothing runs, so the
 * request path never pays for it. Returns the function that stops it.
 */
export function collectGarbageWhenIdle(o: IdleCollectorOptions = {}): () => void {
  const intervalMs = o.intervalMs ?? envInt('IDLE_GC_INTERVAL_MS', 5000);
  if (intervalMs <= 0) return () => {};
  const gc = fullGc();
  if (!gc) return () => {};
  const tick = idleCollector({ gc, newSpaceBytes, busyUtilization: o.busyUtilization, onCollect: o.onCollect });
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    // The collection's own time is not the process's activity: the next window starts after it.
    if (tick(performance.eventLoopUtilization(now, last).utilization)) last = performance.eventLoopUtilization();
    else last = now;
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The decision of `collectGarbageWhenIdle`, one window at a time: told each window's event-loop
 * utilisation, it collects (and answers true) at the end of the first quiet window after a busy one
 * (the first window counts as busy), and again on the next quiet windows while the young generation
 * is still larger than 4 MB, four times at most; then nothing until a window is busy again.
 */
export function idleCollector(o: {
  gc: () => void;
  newSpaceBytes: () => number;
  busyUtilization?: number;
  onCollect?: (newSpaceBytes: number) => void;
}): (utilization: number) => boolean {
  const busy = o.busyUtilization ?? 0.01;
  const SMALL_NEW_SPACE = 4 * 1024 * 1024;
  const MAX_TRIES = 4;
  let pending = true;
  let tries = 0;
  return (utilization) => {
    if (utilization > busy) {
      pending = true;
      tries = 0;
      return false;
    }
    if (!pending) return false;
    o.gc();
    tries++;
    const young = o.newSpaceBytes();
    if (young <= SMALL_NEW_SPACE || tries >= MAX_TRIES) pending = false;
    o.onCollect?.(young);
    return true;
  };
}
