import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PluginClients } from '@platform/plugin';
import { servePlugin, type PluginServer } from './index';
import { clientConfig } from './test-support';

/**
 * grpcs:// endpoints: TLS, with the plugin's certificate checked against the configured CA
 * (PLUGIN_TLS_CA_FILE); a certificate the client does not trust is a 503, never a plaintext fallback.
 * The CA and the certificate are made here with openssl, for 127.0.0.1.
 */
describe('grpcs:// plugins', () => {
  let dir: string;
  let server: PluginServer;
  let ca: Buffer;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'plugin-tls-'));
    const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    writeFileSync(path.join(dir, 'san.cnf'), 'subjectAltName = IP:127.0.0.1\n');
    run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=plugin test CA');
    run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
    run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.cnf');
    ca = readFileSync(path.join(dir, 'ca.pem'));
    server = await servePlugin([], { tls: { cert: readFileSync(path.join(dir, 'server.pem')), key: readFileSync(path.join(dir, 'server.key')) }, version: 'tls' });
  });
  afterAll(() => {
    server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers over TLS when the CA is configured', async () => {
    expect(server.endpoint).toMatch(/^grpcs:\/\/127\.0\.0\.1:\d+$/);
    const clients = new PluginClients(clientConfig({ tlsCa: ca }));
    try {
      await expect(clients.version(server.endpoint)).resolves.toBe('tls');
    } finally {
      clients.close();
    }
  });

  it('refuses a certificate it does not trust (503), and plaintext to a TLS port fails too', async () => {
    const clients = new PluginClients(clientConfig({ retryAttempts: 1 }));
    try {
      await expect(clients.version(server.endpoint, { timeoutMs: 3000 })).rejects.toMatchObject({ status: 503, code: 'ERROR_PLUGIN_UNAVAILABLE' });
      await expect(clients.version(server.endpoint.replace('grpcs', 'grpc'), { timeoutMs: 3000 })).rejects.toMatchObject({ status: 503 });
    } finally {
      clients.close();
    }
  });
});
