#!/usr/bin/env node
// Runs the processes a JSON file lists under the supervisor of `npm start` (tools/dev/supervisor.mjs),
// without building or migrating anything: what the supervisor and chaos tests start.
//   node tools/dev/supervise.mjs <file.json>
// with {"options": {"initialDelayMs", "maxDelayMs", "resetAfterMs", "stopTimeoutMs"},
//       "processes": [{"label", "command", "args": [], "env": {}, "cwd"}]}.
// Each process gets this process' environment plus its own `env`. SIGINT / SIGTERM stop them all.
import { readFileSync } from 'node:fs';
import { createSupervisor } from './supervisor.mjs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node tools/dev/supervise.mjs <file.json>');
  process.exit(2);
}
const spec = JSON.parse(readFileSync(file, 'utf8'));
const supervisor = createSupervisor(spec.options ?? {});
const stop = () => supervisor.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
for (const p of spec.processes) {
  supervisor.add(p.label, p.command, p.args ?? [], { env: { ...process.env, ...p.env }, ...(p.cwd && { cwd: p.cwd }) });
}
