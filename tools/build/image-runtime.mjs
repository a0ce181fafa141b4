// How the production image runs an app, read from docker/Dockerfile's final stage, so the tools that
// mimic it (tools/bench/footprint.mjs, tools/dev/start-all.mjs) never drift from it:
//  - imageFlags(): the node flags of its CMD ["node", <flags...>, "dist/main.js"];
//  - imageEnv(): the variables its ENV lines set (KEY=VALUE pairs; values that use a build argument,
//    such as APP=${APP}, are left out).
import { readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const finalStage = () => {
  const text = readFileSync(path.join(root, 'docker/Dockerfile'), 'utf8');
  return text.slice(text.lastIndexOf('\nFROM '));
};

export function imageFlags() {
  const cmd = finalStage().match(/^CMD (\[.*\])\s*$/m);
  if (!cmd) throw new Error('docker/Dockerfile has no CMD [...] line');
  return JSON.parse(cmd[1]).slice(1, -1);
}

export function imageEnv() {
  const env = {};
  for (const [, rest] of finalStage().matchAll(/^ENV (.+)$/gm)) {
    for (const [, key, value] of rest.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(\S+)/g)) if (!value.includes('$')) env[key] = value;
  }
  return env;
}
