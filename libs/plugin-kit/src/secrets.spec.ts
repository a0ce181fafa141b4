import { PluginClients } from '@platform/plugin';
import type { ApiError } from '@platform/errors';
import { fail, serveAuth, serveCostDataSource, type PluginServer } from './index';
import { clientConfig } from './test-support';

/**
 * A plugin's error text may quote what it was sent, credentials included: what comes back (the
 * envelope's message, the error's message and stack, its details) never holds a secret.
 */
describe("secrets in a plugin's error text", () => {
  const clients = new PluginClients(clientConfig());
  const servers: PluginServer[] = [];
  afterAll(async () => {
    clients.close();
    for (const s of servers) s.kill();
  });

  const everything = (e: ApiError) => `${JSON.stringify(e.toEnvelope())} ${e.message} ${e.stack} ${JSON.stringify(e.details)}`;
  const SECRET = 'AKIAVERYSECRETKEY/with+special=chars"\'';

  it('every string of secret_data, and secret-looking options, are redacted in every form a message quotes them', async () => {
    const s = await serveCostDataSource({
      init: () => ({}),
      getTasks: () => ({}),
      getData: function* () {},
      // upstream plugins often put the request or the cloud SDK's message in the error
      verify: (req) => {
        const echo = [JSON.stringify(req), String(req.secret_data.aws_secret_access_key), encodeURIComponent(String(req.secret_data.aws_secret_access_key)),
          Buffer.from(String(req.options.api_token)).toString('base64'), String(req.secret_data.nested && (req.secret_data.nested as { pin: number }).pin)].join(' | ');
        throw fail.invalidParameter('secret_data', echo);
      },
    });
    servers.push(s);
    const e: ApiError = await clients
      .cost(s.endpoint)
      .dataSource.verify({
        options: { region: 'eu-west-1', api_token: 'tok-123456789', database: { password: 'hunter22' } },
        secret_data: { aws_access_key_id: 'AKIA0000PUBLIC', aws_secret_access_key: SECRET, nested: { pin: 98765 } },
      })
      .catch((err) => err);
    expect([e.status, e.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    const text = everything(e);
    for (const secret of [SECRET, JSON.stringify(SECRET).slice(1, -1), encodeURIComponent(SECRET), 'AKIA0000PUBLIC', 'tok-123456789', Buffer.from('tok-123456789').toString('base64').replace(/=+$/, ''), 'hunter22', '98765', 'VERYSECRET']) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('***');
    expect(text).toContain('eu-west-1'); // what is not secret stays readable
  });

  it("the user's credentials and the auth plugin's secret are redacted from an authorize failure", async () => {
    const s = await serveAuth({
      init: () => ({}),
      authorize: (req) => {
        throw fail.authenticateFailure(`login failed for ${JSON.stringify(req.credentials)} with client secret ${String(req.secret_data.client_secret)}`);
      },
    });
    servers.push(s);
    const e: ApiError = await clients
      .identity(s.endpoint)
      .externalAuth.authorize({ credentials: { user_id: 'alice', password: 'correct horse battery' }, secret_data: { client_secret: 'oidc-client-secret-xyz' } })
      .catch((err) => err);
    expect([e.status, e.code]).toEqual([400, 'ERROR_AUTHENTICATE_FAILURE']);
    const text = everything(e);
    expect(text).not.toContain('correct horse battery');
    expect(text).not.toContain('oidc-client-secret-xyz');
    expect(text).not.toContain('alice'); // every credential value is secret, the user id included
  });

  it("a plugin's message is bounded, and a secret at the bound is not cut in two and let through", async () => {
    const s = await serveCostDataSource({
      init: () => ({}),
      verify: (req) => {
        if (req.secret_data.key !== 'SECRET-0123456789') throw new Error('the secret did not arrive');
        throw fail.invalidArgument(`${'x'.repeat(Number(req.options.pad))}${req.secret_data.key}${'y'.repeat(5000)}`);
      },
      getTasks: () => ({}),
      getData: function* () {},
    });
    servers.push(s);
    for (const pad of [0, 500, 990, 16_370]) {
      const e: ApiError = await clients.cost(s.endpoint).dataSource.verify({ options: { pad }, secret_data: { key: 'SECRET-0123456789' } }).catch((err) => err);
      expect([e.status, e.code]).toEqual([400, 'ERROR_INVALID_ARGUMENT']);
      expect(e.message.length).toBeLessThanOrEqual(1000);
      expect(e.message).not.toContain('SECRET-0123');
      expect(e.message).not.toContain('0123456789');
    }
  });
});
