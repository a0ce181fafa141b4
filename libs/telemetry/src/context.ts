// The context manager of the platform's tracing (issue #31, fourth round): @opentelemetry/api's
// AsyncLocalStorage context manager, plus a way to switch the storage off while no traced work is open.
//
// On Node 20 an enabled AsyncLocalStorage runs async_hooks' promise hooks for every promise, timer and
// tick of the process, traced or not (about 23 µs of a 140 µs request): at 10% sampling one sampled
// request in flight is enough to make every other request pay them. So the work that carries a context
// (a sampled request, a caller's "not sampled" decision, a job's span, a callback bound to its caller)
// is held open (`hold` ... `release`), and when a request that carries none starts while nothing is held
// (`idle`), the storage is switched off: its hooks stop until the next `with` of a context.
//
// A storage switched off forgets every context it held: each entry is stamped with the period the
// storage was on in, and one stamped before the last switch-off (stored on a socket or a timer made
// then) is never read again. Work that outlives what held it (a callback after its request's span
// ended) then runs without a context, where before it ran under an ended span. One AsyncLocalStorage
// for the process: a new one per period (a new symbol on every promise) made the promises' shapes
// megamorphic and cost more than the hooks it saved (measured, docs/decisions/performance.md).
import type * as OtelApi from '@opentelemetry/api';
import { AsyncLocalStorage } from 'node:async_hooks';

type Context = OtelApi.Context;

/** A context as stored: with the period of the storage it was entered in. */
interface Entry {
  readonly context: Context;
  readonly period: number;
}

export class PlatformContextManager implements OtelApi.ContextManager {
  private readonly als = new AsyncLocalStorage<Entry>();
  /** Whether the storage may hold a context (it was entered since it was last switched off). */
  private on = false;
  /** The storage's current period (switch-offs so far): an entry of another is stale. */
  private period = 0;
  /** Open work that carries a context (see hold). */
  private held = 0;
  /** Times the storage was switched off (for tests). */
  get switchedOff(): number {
    return this.period;
  }

  constructor(private readonly root: Context) {}

  active(): Context {
    if (!this.on) return this.root;
    const entry = this.als.getStore();
    return entry !== undefined && entry.period === this.period ? entry.context : this.root;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const cb = thisArg == null ? fn : (fn.bind(thisArg) as F);
    // No context to carry and none stored: nothing to enter (the storage stays off).
    if (context === this.root && !this.on) return cb(...args);
    this.on = true;
    return this.als.run({ context, period: this.period }, cb, ...args);
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the wrapper runs with its caller's `this`
    const self = this;
    return function bound(this: unknown, ...args: unknown[]) {
      return self.with(context, fn, this, ...args);
    } as unknown as T;
  }

  /** Work that carries a context has started: the storage stays on until it is released. */
  hold(): void {
    this.held++;
  }

  release(): void {
    if (this.held > 0) this.held--;
  }

  /**
   * A request that carries no context has started: when no work holding a context is open, the
   * storage is switched off (its promise hooks with it) until a context is entered again.
   */
  idle(): void {
    if (this.held === 0 && this.on) this.switchOff();
  }

  private switchOff() {
    this.on = false;
    this.period++;
    this.als.disable();
  }

  enable(): this {
    return this;
  }

  disable(): this {
    if (this.on) this.switchOff();
    return this;
  }
}
