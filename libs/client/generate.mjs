#!/usr/bin/env node
// `npm run client:generate [-- --endpoint URL]`: bundles libs/client/scripts/generate.ts (and the libs it
// uses, as the apps are bundled) and runs it with plain node.
import { bundleAndRun } from '../../tools/build/bundle.mjs';

await bundleAndRun('libs/client/scripts/generate.ts', 'dist/tools/client-gen/generate.js');
