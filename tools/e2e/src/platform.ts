import { startPlatform as start, type Platform } from '@platform/testing';

export type { Platform };

/**
 * Ports of this run: the standard ones shifted, so a running `npm start` is left alone
 * (E2E_PORT_OFFSET, E2E_GATEWAY_PORT and E2E_REDIS_URL move them).
 */
const OFFSET = Number(process.env.E2E_PORT_OFFSET || 20_000);
export const GATEWAY_PORT = Number(process.env.E2E_GATEWAY_PORT || 28_080);
export const REDIS_URL = process.env.E2E_REDIS_URL || 'redis://127.0.0.1:6379/9';

/**
 * Processes of every app and worker (E2E_REPLICAS, default 1): the e2e project runs the suite once with
 * one and once with three (tools/e2e/project.json), as `START_REPLICAS=3 npm start` runs the platform.
 */
export const REPLICAS = Number(process.env.E2E_REPLICAS || 1);

/** The whole platform (or only `o.apps`) behind real nginx, as production runs it (the shared launcher of libs/testing). */
export function startPlatform(extraEnv: Record<string, string> = {}, o: { apps?: string[] } = {}): Promise<Platform> {
  return start({ portOffset: OFFSET, gatewayPort: GATEWAY_PORT, redisUrl: REDIS_URL, env: extraEnv, label: 'e2e', replicas: REPLICAS, apps: o.apps });
}

/** POST through the gateway; answers status and JSON body. */
export async function call(base: string, p: string, body: unknown, token?: string) {
  const res = await fetch(`${base}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
