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
 * Gives memory back once a process goes quiet (issue #14, docs/decisions/platform.md "Footprint and
 * startup"). A process with no traffic never collects: the garbage of its start (and of a burst of
 * load) stays in the heap, and V8 keeps the young generation at the size the load grew it to (16 MB
 * semi-spaces), so RSS stays where the busiest moment left it. Every `intervalMs` the event loop's
 * utilisation of the window is read; after activity (the start counts as activity), once two windows
 * in a row were quiet, one full GC runs. V8 also shrinks the young generation at a GC when it sees a
 * low allocation rate; one run right after a burst may still see the burst's rate, so while the young
 * generation is still large the collection is tried again on the next quiet window (three times at
 * most). Only ever on an idle process: under load every window is busy and nothing runs, so the
 * request path never pays for it. Returns the function that stops it.
 */
export function collectGarbageWhenIdle(o: IdleCollectorOptions = {}): () => void {
  const intervalMs = o.intervalMs ?? envInt('IDLE_GC_INTERVAL_MS', 5000);
  const busy = o.busyUtilization ?? 0.01;
  if (intervalMs <= 0) return () => {};
  const gc = fullGc();
  if (!gc) return () => {};
  const SMALL_NEW_SPACE = 4 * 1024 * 1024;
  let last = performance.eventLoopUtilization();
  let pending = true;
  let quiet = 0;
  let tries = 0;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (utilization > busy) {
      pending = true;
      quiet = 0;
      tries = 0;
      return;
    }
    quiet++;
    if (!pending || quiet < 2) return;
    gc();
    tries++;
    const young = newSpaceBytes();
    if (young <= SMALL_NEW_SPACE || tries >= 3) pending = false;
    o.onCollect?.(young);
    // The collection's own time is not the process's activity.
    last = performance.eventLoopUtilization();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
