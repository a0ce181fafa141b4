import type { AddressInfo } from 'node:net';
import express from 'express';
import { createLogger } from '@platform/core';
import { listenHost, serve } from './serve';

/** Where an app listens (issue #32): `HOST` when set (`npm start`: loopback), every interface otherwise (pods). */
describe('serve: the listen address', () => {
  it('is HOST when set, and every interface (undefined) when unset or blank', () => {
    expect(listenHost({ HOST: '127.0.0.1' })).toBe('127.0.0.1');
    expect(listenHost({ HOST: '::1' })).toBe('::1');
    expect(listenHost({})).toBeUndefined();
    expect(listenHost({ HOST: '  ' })).toBeUndefined();
  });

  it('an app served with HOST=127.0.0.1 listens on loopback only', async () => {
    const before = { SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
    const saved = process.env.HOST;
    process.env.HOST = '127.0.0.1';
    const server = serve(express(), { port: 0, logger: createLogger('serve-spec', 'silent'), service: 'serve-spec' });
    try {
      await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
      expect((server.address() as AddressInfo).address).toBe('127.0.0.1');
    } finally {
      if (saved === undefined) delete process.env.HOST;
      else process.env.HOST = saved;
      await new Promise((resolve) => server.close(resolve));
      // serve's shutdown handlers are the process's: take back the ones this test added.
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        for (const l of process.listeners(signal)) if (!before[signal].includes(l)) process.off(signal, l);
      }
    }
  });
});
