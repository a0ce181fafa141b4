// The context manager whose storage is switched off while no traced work is open (issue #31, fourth
// round): contexts carried across awaits and timers while on, nothing stored on promises while off,
// stale contexts never read again.
import { ROOT_CONTEXT, createContextKey, type Context } from '@opentelemetry/api';
import { PlatformContextManager } from './context';

const KEY = createContextKey('probe');
const ctx = (v: string): Context => ROOT_CONTEXT.setValue(KEY, v);
const valueOf = (m: PlatformContextManager) => m.active().getValue(KEY) ?? null;
const tick = () => new Promise((r) => setTimeout(r, 1));

describe('PlatformContextManager', () => {
  it('carries a context across awaits and timers, and binds a callback to its caller', async () => {
    const m = new PlatformContextManager(ROOT_CONTEXT);
    expect(valueOf(m)).toBeNull();
    const seen = await m.with(ctx('a'), async () => {
      await tick();
      const inTimer = await new Promise((r) => setTimeout(() => r(valueOf(m)), 1));
      return [valueOf(m), inTimer];
    });
    expect(seen).toEqual(['a', 'a']);
    const bound = m.with(ctx('b'), () => m.bind(ctx('b'), () => valueOf(m)));
    expect(m.with(ctx('c'), () => bound())).toBe('b');
    const boundToNone = m.bind(ROOT_CONTEXT, () => valueOf(m));
    expect(m.with(ctx('c'), () => boundToNone())).toBeNull();
  });

  it('switches the storage off only when no held work is open, after which a stale context is never read', async () => {
    const m = new PlatformContextManager(ROOT_CONTEXT);
    m.hold();
    let late: Promise<unknown> = Promise.resolve();
    await m.with(ctx('held'), async () => {
      late = new Promise((r) => setTimeout(() => r(valueOf(m)), 30)); // outlives the held work
      await tick();
    });
    m.idle();
    expect(m.switchedOff).toBe(0); // still held
    m.release();
    m.idle();
    expect(m.switchedOff).toBe(1);
    // Another context entered before the timer of the first fires: the timer sees none, not 'held'.
    const other = m.with(ctx('other'), async () => {
      await new Promise((r) => setTimeout(r, 60));
      return valueOf(m);
    });
    expect(await late).toBeNull();
    expect(await other).toBe('other');
    m.idle();
    expect(m.switchedOff).toBe(2);
  });

  it('stores nothing on the promises made while switched off, or made by work that enters no context', async () => {
    // An enabled AsyncLocalStorage's init hook stores its context on every new promise (a symbol
    // property named kResourceStore): what the promise hooks cost for every request of the process.
    const stores = (p: Promise<unknown>) => Object.getOwnPropertySymbols(p).filter((k) => k.description === 'kResourceStore').length;
    const m = new PlatformContextManager(ROOT_CONTEXT);
    const base = stores(Promise.resolve());
    expect(m.with(ROOT_CONTEXT, () => stores(Promise.resolve()))).toBe(base);
    expect(await m.with(ctx('on'), async () => (await tick(), stores(Promise.resolve())))).toBe(base + 1);
    expect(stores(Promise.resolve())).toBe(base + 1); // on for the whole process once entered
    m.idle();
    expect(m.switchedOff).toBe(1);
    expect(stores(Promise.resolve())).toBe(base);
    expect(m.with(ROOT_CONTEXT, () => stores(Promise.resolve()))).toBe(base);
    expect(valueOf(m)).toBeNull();
  });
});
