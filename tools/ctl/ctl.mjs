#!/usr/bin/env node
// platformctl (`npm run -s ctl -- <command>`, or the `platformctl` bin of this package): bundles
// tools/ctl/src/cli.ts with the libs it uses (as the apps are bundled) when a source is newer than the
// bundle, then runs it with plain node, in the caller's directory.
import { bundleAndRun } from '../build/bundle.mjs';

await bundleAndRun('tools/ctl/src/cli.ts', 'dist/tools/ctl/cli.js', { sources: ['tools/ctl/src', 'libs'], cwd: process.cwd() });
