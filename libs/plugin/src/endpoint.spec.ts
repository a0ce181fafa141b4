import { DEFAULT_PLUGIN_CLIENT_CONFIG, parseEndpoint, pluginClientConfigFromEnv } from './index';

describe('plugin endpoints', () => {
  it('takes grpc:// and grpcs:// with a host and a port, private and loopback addresses included', () => {
    expect(parseEndpoint('grpc://127.0.0.1:50051')).toEqual({ url: 'grpc://127.0.0.1:50051', tls: false, target: '127.0.0.1:50051', host: '127.0.0.1', port: 50051 });
    expect(parseEndpoint('GRPCS://Plugin-AWS.plugins.svc.cluster.local:443')).toMatchObject({ url: 'grpcs://plugin-aws.plugins.svc.cluster.local:443', tls: true });
    expect(parseEndpoint('grpc://[::1]:50051')).toMatchObject({ target: '[::1]:50051', host: '::1' });
    expect(parseEndpoint('grpc://10.0.0.7:50051/')).toMatchObject({ target: '10.0.0.7:50051' });
  });

  it('refuses everything else with ERROR_INVALID_PLUGIN_ENDPOINT', () => {
    for (const bad of ['', 'http://x:1', 'https://x:1', 'unix:///tmp/s', 'grpc://x', 'grpc://x:0', 'grpc://x:65536', 'grpc://u@x:1', 'grpc://x:1/path', 'grpc://x:1?a=b', 'grpc://x:1#f', 'grpc://:1', `grpc://${'a'.repeat(600)}:1`, 'x:1', 'grpc:/x:1']) {
      expect(() => parseEndpoint(bad)).toThrow(expect.objectContaining({ status: 400, code: 'ERROR_INVALID_PLUGIN_ENDPOINT' }));
    }
  });
});

describe('client configuration', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('defaults, and PLUGIN_* variables override each value', () => {
    expect(pluginClientConfigFromEnv()).toEqual(DEFAULT_PLUGIN_CLIENT_CONFIG);
    process.env.PLUGIN_TIMEOUT_GET_TASKS_MS = '1234';
    process.env.PLUGIN_STREAM_IDLE_MS = '99';
    process.env.PLUGIN_MAX_RECEIVE_BYTES = '1000';
    const c = pluginClientConfigFromEnv();
    expect([c.timeouts.getTasks, c.timeouts.init, c.stream.idleMs, c.maxReceiveBytes]).toEqual([1234, 60_000, 99, 1000]);
  });

  it('refuses a value that is not a positive integer', () => {
    process.env.PLUGIN_RETRY_ATTEMPTS = '0';
    expect(() => pluginClientConfigFromEnv()).toThrow(/PLUGIN_RETRY_ATTEMPTS must be a positive integer/);
  });
});
