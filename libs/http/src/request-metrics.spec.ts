import { Registry } from 'prom-client';
import { RequestMetrics } from './request-metrics';

describe('RequestMetrics', () => {
  it('exports the latency histogram (cumulative buckets, +Inf, sum, count) and the request counter by operation and status', async () => {
    const registry = new Registry();
    registry.setDefaultLabels({ service: 'svc' });
    const m = new RequestMetrics(registry, [0.01, 0.1, 1]);
    m.observe('/svc/v1/x/get', 200, 0.005);
    m.observe('/svc/v1/x/get', 200, 0.01); // on a bound: counted in it (le)
    m.observe('/svc/v1/x/get', 200, 0.5);
    m.observe('/svc/v1/x/get', 200, 3);
    m.observe('other', 404, 0.002);
    const text = await registry.metrics();
    const line = (name: string, labels: string) => new RegExp(`^${name}\\{${labels}\\} ([0-9.e+-]+)$`, 'm').exec(text)?.[1];
    const get = 'operation="/svc/v1/x/get",status="200"';
    expect(line('http_request_duration_seconds_bucket', `${get},le="0.01",service="svc"`)).toBe('2');
    expect(line('http_request_duration_seconds_bucket', `${get},le="0.1",service="svc"`)).toBe('2');
    expect(line('http_request_duration_seconds_bucket', `${get},le="1",service="svc"`)).toBe('3');
    expect(line('http_request_duration_seconds_bucket', `${get},le="\\+Inf",service="svc"`)).toBe('4');
    expect(Number(line('http_request_duration_seconds_sum', `${get},service="svc"`))).toBeCloseTo(3.515);
    expect(line('http_request_duration_seconds_count', `${get},service="svc"`)).toBe('4');
    expect(line('http_requests_total', `${get},service="svc"`)).toBe('4');
    expect(line('http_requests_total', 'operation="other",status="404",service="svc"')).toBe('1');
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE http_requests_total counter');
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('http_requests_total{');
  });
});
