#!/usr/bin/env node
// `npm run fuzz -- --runs N --seed S [--app A] [--op PATH]`: bundles the fuzzer (tools/fuzz/src/cli.ts
// and the libs it uses, as the apps are bundled) and runs it with plain node.
import { bundleAndRun } from '../build/bundle.mjs';

await bundleAndRun('tools/fuzz/src/cli.ts', 'dist/tools/fuzz/cli.js');
