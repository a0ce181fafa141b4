#!/usr/bin/env node
// `node tools/plugin/upstream-platform.mjs`: the whole platform (built, behind nginx, ports +30000) with
// upstream's REAL plugin-http-file-cost-datasource and plugin-prometheus-mon-webhook published through
// supervisor/publish, as a platform team moving from upstream would plug them in. It checks endpoint
// resolution, init metadata, a plugin's own refusal, sync, sums, re-sync, a sync while the plugin is
// down, webhook events, and posts while the webhook plugin is down (nothing lost, nothing doubled).
// Needs /work/shared/upstream-plugins/run.sh setup done (UPSTREAM_PLUGINS_DIR: where it put venv/ and
// plugins/); it runs the plugins itself on 51051/51052/18766. Not a CI test: CI cannot fetch upstream.
import { bundleAndRun } from '../build/bundle.mjs';

await bundleAndRun('tools/plugin/src/upstream-platform.ts', 'dist/tools/plugin/upstream-platform.js');
