// Our http/protobuf serializer writes, for the platform's spans, exactly the bytes of the SDK's
// ProtobufTraceSerializer (issue #31, third round): compared byte for byte on batches of every shape
// the platform makes, and on a batch large enough to grow the buffer and long lengths.
import { createTraceState, type SpanContext } from '@opentelemetry/api';
import { resources } from '@opentelemetry/sdk-node';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { platformProtobufSerializer, type Resource } from './otlp-proto';
import { PlatformSpan, newSpanId, newTraceId, type SpanShared } from './span';
import { SCOPE } from './tracer';

const { resourceFromAttributes } = resources;
const resource = resourceFromAttributes({
  'service.name': 'identity',
  'process.pid': 4242,
  'process.command_args': ['/usr/bin/node', '/app/main.js'],
  'host.name': 'näme-ü', // not ASCII
  'probe.negative': -7,
  'probe.double': 0.25,
  'probe.big': 2 ** 40,
  'probe.flag': true,
});
const shared: SpanShared = { sink: { add: () => {} }, resource, scope: SCOPE, attributeCountLimit: 128, attributeValueLengthLimit: Infinity };
const sdk = (spans: PlatformSpan[]) => Buffer.from(ProtobufTraceSerializer.serializeRequest(spans as never)!);

function request(remote?: SpanContext, status = 200) {
  const server = remote
    ? new PlatformSpan(shared, 'POST', 1, remote.traceId, newSpanId(), 1, remote.traceState, remote, { 'http.request.method': 'POST', 'url.path': '/identity/v2/project-group/get' }, undefined)
    : new PlatformSpan(shared, 'POST', 1, newTraceId(), newSpanId(), 1, undefined, undefined, { 'http.request.method': 'POST', 'url.path': '/identity/v2/project-group/get' }, undefined);
  const sql = new PlatformSpan(shared, 'SELECT identity', 2, server.traceId, newSpanId(), 1, server.traceState, server.spanContext(), {
    'db.system.name': 'postgresql',
    'db.query.text': 'SELECT * FROM project_group WHERE domain_id = $1 AND project_group_id = $2',
    'db.namespace': 'identity',
  }, undefined);
  sql.end();
  server.updateName('POST /identity/v2/project-group/get');
  server.setAttribute('http.route', '/identity/v2/project-group/get');
  server.setAttribute('http.response.status_code', status);
  if (status >= 500) server.setStatus({ code: 2 });
  server.end();
  return [sql, server];
}

describe('platformProtobufSerializer', () => {
  const ours = platformProtobufSerializer(resource as unknown as Resource, SCOPE);

  it("writes the SDK serializer's bytes for the platform's spans: roots, a caller's remote parent and tracestate, kinds, statuses, attributes of every type", () => {
    const remote: SpanContext = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1, isRemote: true, traceState: createTraceState('v=1,w=2') };
    const job = new PlatformSpan(shared, 'collect process', 4, newTraceId(), newSpanId(), 1, undefined, undefined, { 'messaging.batch.message_count': 3, ratio: 0.5, ok: false, tags: ['a', 'b'], text: 'x'.repeat(3000), 'naïve': 'välue' }, undefined);
    job.setStatus({ code: 2, message: 'failed: ümlaut' });
    job.end();
    const internal = new PlatformSpan(shared, 'op', 0, newTraceId(), newSpanId(), 1, undefined, undefined, undefined, undefined);
    internal.setStatus({ code: 1 });
    internal.end();
    const batches = [[...request()], [...request(remote, 503)], [job, internal], [...request(), ...request(remote), ...request()]];
    for (const spans of batches) {
      const bytes = ours.serialize(spans);
      expect(bytes).toBeDefined();
      expect(Buffer.from(bytes!).equals(sdk(spans))).toBe(true);
    }
    // Again, from the encodings it remembered.
    for (const spans of batches) expect(Buffer.from(ours.serialize(spans)!).equals(sdk(spans))).toBe(true);
  });

  it('writes the same bytes for a batch of 512 requests (lengths of several bytes, the buffer grown)', () => {
    const spans = Array.from({ length: 512 }, (_, i) => request(undefined, i % 7 ? 200 : 500)).flat();
    const bytes = ours.serialize(spans)!;
    expect(bytes.length).toBeGreaterThan(1 << 16);
    expect(Buffer.from(bytes).equals(sdk(spans))).toBe(true);
    expect(ours.serialize([])!.length).toBe(sdk([]).length);
  });

  it("leaves a batch with an event, a link or another resource to the SDK's serializer", () => {
    const [sql, server] = request();
    const failed = new PlatformSpan(shared, 'q process', 4, newTraceId(), newSpanId(), 1, undefined, undefined, undefined, undefined);
    failed.recordException({ name: 'Error', message: 'boom' });
    failed.end();
    const linked = new PlatformSpan(shared, 'store', 4, newTraceId(), newSpanId(), 1, undefined, undefined, undefined, [{ context: sql.spanContext() }]);
    linked.end();
    const other = new PlatformSpan({ ...shared, resource: resourceFromAttributes({ 'service.name': 'other' }) }, 'x', 0, newTraceId(), newSpanId(), 1, undefined, undefined, undefined, undefined);
    other.end();
    for (const odd of [failed, linked, other]) expect(ours.serialize([sql, odd, server])).toBeUndefined();
  });
});
