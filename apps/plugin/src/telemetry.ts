// The entry point's first import: tracing (when the OTEL_* variables ask for it) starts before pg,
// ioredis, http and express load, so that their instrumentations patch them (libs/telemetry).
import { startTelemetry } from '@platform/telemetry';

startTelemetry('plugin');
