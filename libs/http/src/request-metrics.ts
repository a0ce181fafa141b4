import type { Registry } from 'prom-client';

/** The latency buckets of `http_request_duration_seconds` (seconds). */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface Series {
  labels: { operation: string; status: string };
  /** Requests per bucket (not cumulative; the last slot is past the largest bound). */
  counts: number[];
  sum: number;
  count: number;
}

type Value = { labels: Record<string, string | number>; value: number; metricName?: string };

/**
 * The two request metrics every app exports, `http_request_duration_seconds` (a histogram) and
 * `http_requests_total` (a counter), both by operation and status, in the registry's text format.
 *
 * A request adds two numbers to its series' row; the text is made only when /metrics is scraped.
 * prom-client's own Histogram and Counter hash the label object on every observation (~1 µs a
 * request, and several times that in a busy server's caches: issue #22).
 */
export class RequestMetrics {
  private readonly series = new Map<string, Series>();

  constructor(registry: Registry, private readonly buckets: readonly number[] = DURATION_BUCKETS) {
    const metric = (name: string, help: string, type: 'histogram' | 'counter', values: () => Value[]) => ({
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => this.series.clear(),
    });
    const register = (m: ReturnType<typeof metric>) => (registry.registerMetric as (m: unknown) => void)(m);
    register(metric('http_request_duration_seconds', 'Latency of each operation', 'histogram', () => this.histogram()));
    register(metric('http_requests_total', 'Requests by operation and status', 'counter', () => [...this.series.values()].map((s) => ({ labels: { ...s.labels }, value: s.count }))));
  }

  /** One answered request: its operation (or `other`), status and duration. */
  observe(operation: string, status: number, seconds: number): void {
    const key = `${status} ${operation}`;
    let s = this.series.get(key);
    if (!s) {
      s = { labels: { operation, status: String(status) }, counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    let i = 0;
    while (i < this.buckets.length && seconds > this.buckets[i]) i++;
    s.counts[i]++;
    s.sum += seconds;
    s.count++;
  }

  private histogram(): Value[] {
    const out: Value[] = [];
    for (const s of this.series.values()) {
      let acc = 0;
      this.buckets.forEach((le, i) => {
        acc += s.counts[i];
        out.push({ labels: { ...s.labels, le }, value: acc, metricName: 'http_request_duration_seconds_bucket' });
      });
      out.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: 'http_request_duration_seconds_bucket' });
      out.push({ labels: { ...s.labels }, value: s.sum, metricName: 'http_request_duration_seconds_sum' });
      out.push({ labels: { ...s.labels }, value: s.count, metricName: 'http_request_duration_seconds_count' });
    }
    return out;
  }
}
