// What the unary call benchmark's plugin process loads (bundled as the apps are): the kit.
export { serveMonitoringWebhook } from '@platform/plugin-kit';
