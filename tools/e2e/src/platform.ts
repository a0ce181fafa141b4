import { Contract } from '@platform/http';
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

/**
 * The contract check of the walk (issue #29): every answer `call` receives, and every request answered
 * 200, is validated against the OpenAPI document its module serves through the gateway
 * (`/<module>/openapi.json`), as every app's own tests do in process (tools/test/answers). The walk's
 * requests use proto names. A mismatch fails the test that provoked it (the afterEach below, in every
 * e2e file that imports this one).
 */
const contracts = new Map<string, Promise<Contract | undefined>>();
const contractProblems: string[] = [];

function contractOf(base: string, module: string): Promise<Contract | undefined> {
  const key = `${base} ${module}`;
  let c = contracts.get(key);
  if (!c) {
    c = fetch(`${base}/${module}/openapi.json`).then(async (res) => (res.ok ? new Contract((await res.json()) as ConstructorParameters<typeof Contract>[0]) : undefined));
    contracts.set(key, c);
  }
  return c;
}

afterEach(() => {
  if (!contractProblems.length) return;
  const list = [...new Set(contractProblems.splice(0))];
  throw new Error(`requests or answers of the walk that do not match the OpenAPI documents (${list.length}):\n- ${list.join('\n- ')}`);
});

/** One exchange checked against its module's document: the answer, and the request when it was taken (200). */
async function checkExchange(base: string, p: string, status: number, body: unknown, sent: unknown) {
  const contract = await contractOf(base, p.split('/')[1] ?? '');
  // Operations only: a webhook's URL or a download is not in any document.
  if (!contract?.covers(p)) return;
  const problem = contract.problem(p, status, body) ?? (status === 200 ? contract.requestProblem(p, sent) : undefined);
  if (problem) contractProblems.push(problem);
}

/** `fetch` for the typed client (libs/client `PlatformClient`'s `fetch` option): its exchanges are checked as `call`'s. */
export const checkedFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  if ((init?.method ?? 'GET').toUpperCase() === 'POST' && (res.headers.get('content-type') ?? '').includes('json')) {
    const body: unknown = await res
      .clone()
      .json()
      .catch(() => undefined);
    let sent: unknown;
    try {
      sent = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    } catch {
      sent = undefined;
    }
    await checkExchange(url.origin, url.pathname, res.status, body, sent);
  }
  return res;
};

/** POST through the gateway; answers status and JSON body, checked against the module's document. */
export async function call(base: string, p: string, body: unknown, token?: string) {
  const res = await fetch(`${base}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const answer = { status: res.status, body: text ? JSON.parse(text) : undefined };
  await checkExchange(base, p, answer.status, answer.body, body);
  return answer;
}
