#!/usr/bin/env node
// `node tools/plugin/upstream-check.mjs [COST_ENDPOINT] [WEBHOOK_ENDPOINT] [CSV_URL]`: calls upstream's
// own plugin-http-file-cost-datasource and plugin-prometheus-mon-webhook (run by
// /work/shared/upstream-plugins/run.sh under upstream's python-core gRPC server) with libs/plugin's
// clients, prints what they answer and checks that it decodes as upstream means it. Exits 1 when a
// check fails. Not a CI test: CI cannot run upstream's plugins. Defaults: grpc://127.0.0.1:50051,
// grpc://127.0.0.1:50052, http://127.0.0.1:18765/cost_example.csv.
import { bundleAndRun } from '../build/bundle.mjs';

await bundleAndRun('tools/plugin/src/upstream-check.ts', 'dist/tools/plugin/upstream-check.js');
