// Jest setupFilesAfterEnv (jest.preset.cjs): every answer of every app a test makes is checked against
// its operation's declared response schema and error codes (libs/http/src/responses.ts). A mismatch
// fails the test that provoked it; the operations answered go to a record that answers-global.cjs
// checks once the project's whole suite ran: every operation of the app answered 200 at least once.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Operation } from '@platform/http';
import { Contract } from '@platform/http';

const OBSERVER = Symbol.for('platform.answerObserver');
const problems: string[] = [];
const declared: Record<string, Set<string>> = {};
const answered: Record<string, Set<string>> = {};
const documented = new Set<string>();
const contracts = new Map<string, Contract>(); // operation path -> its app's document
let check: typeof import('@platform/http').answerProblem | undefined;

(globalThis as Record<symbol, unknown>)[OBSERVER] = {
  app(service: string, operations: Operation<any>[]) {
    const set = (declared[service] ??= new Set());
    for (const op of operations) set.add(op.path);
    // The document the app serves declares every answer (no bare `{type: object}`): checked once per service.
    if (!documented.has(service)) {
      documented.add(service);
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const http = require('@platform/http') as typeof import('@platform/http');
      const doc = http.buildOpenApi(service, operations);
      const contract = new Contract(doc as ConstructorParameters<typeof Contract>[0]);
      for (const op of operations) contracts.set(op.path, contract);
      for (const path of http.undocumentedAnswers(doc)) problems.push(`${path}: its OpenAPI answer is not documented`);
      for (const p of http.undescribed(doc)) problems.push(`${service} OpenAPI: ${p}`);
    }
  },
  answer(op: Operation<any>, status: number, body: unknown, input: unknown, sent?: unknown) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const http = require('@platform/http') as typeof import('@platform/http');
    check ??= http.answerProblem;
    const contract = contracts.get(op.path);
    const problem =
      check(op, status, body, input) ??
      contract?.problem(op.path, status, body) ??
      // a request the server took validates against the document too: both directions of the contract
      (status === 200 && sent !== undefined ? contract?.requestProblem(op.path, http.withProtoNames(op.schema, sent)) : undefined);
    if (problem) problems.push(problem);
    else if (status === 200) for (const [service, ops] of Object.entries(declared)) if (ops.has(op.path)) (answered[service] ??= new Set()).add(op.path);
  },
};

const dir = process.env.PLATFORM_ANSWERS_DIR;
const testPath = expect.getState().testPath ?? '';
const recordFile = dir && testPath ? path.join(dir, `${testPath.replace(/[^A-Za-z0-9._-]/g, '_')}.json`) : undefined;
const record = (done: boolean) => {
  if (!recordFile) return;
  const list = (m: Record<string, Set<string>>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, [...v].sort()]));
  mkdirSync(path.dirname(recordFile), { recursive: true });
  writeFileSync(recordFile, JSON.stringify({ testPath, done, declared: list(declared), answered: list(answered) }));
};
record(false);

afterEach(() => {
  if (problems.length === 0) return;
  const list = problems.splice(0);
  throw new Error(`answers that do not match their declared schema (${list.length}):\n- ${[...new Set(list)].join('\n- ')}`);
});
afterAll(() => record(true));
