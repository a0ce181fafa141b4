import { Client } from 'pg';
import { z } from 'zod';
import { OutboundRefused, resolveAllowedAddress } from '@platform/net';
import type { StoragePlugin, VerifyInput } from './registry';

const identifier = z.string().trim().min(1).max(63);

/**
 * Statistics kept in a PostgreSQL database. verify connects to the given host and database with the
 * secret's credentials and runs a probe: 1.0.0 a `SELECT 1`; 1.1.0 also checks that the schema exists
 * and that the user may create tables in it (where the statistics tables go). Every failure, from a
 * refused address to a missing privilege, is the uniform OutboundRefused: the answer tells no closed
 * port from a refused login or a missing database (the platform's connection is no scanner); the log
 * has what happened.
 */
export const postgresqlStoragePlugin: StoragePlugin = {
  plugin_id: 'plugin-postgresql-stat-storage',
  name: 'PostgreSQL storage',
  versions: ['1.0.0', '1.1.0'],
  capability: { supported_schema: ['postgresql_password'], storage_type: 'POSTGRESQL' },
  options: z.strictObject({
    host: z.string().trim().min(1).max(253).regex(/^[A-Za-z0-9.\-:[\]]+$/, 'a host name or an IP address'),
    port: z.number().int().min(1).max(65535).default(5432),
    database: identifier,
    schema: identifier.default('public'),
    ssl: z.boolean().default(false),
  }),
  secretData: z.strictObject({
    username: z.string().min(1).max(63),
    password: z.string().max(1024).optional(),
  }),
  metadata(version) {
    return {
      required_keys: ['secret_data.username'],
      probe: version === '1.0.0' ? 'connect' : 'connect, schema create privilege',
    };
  },
  async verify(input: VerifyInput) {
    const options = input.options as { host: string; port: number; database: string; schema: string; ssl: boolean };
    const secret = input.secretData as { username: string; password?: string };
    const host = options.host.replace(/^\[(.*)\]$/, '$1');
    const key = 'plugin_info.options.host';
    const { address } = await resolveAllowedAddress(host, input.outbound, key);
    const client = new Client({
      host: address,
      port: options.port,
      database: options.database,
      user: secret.username,
      // Never fall back to this process' own PGPASSWORD or .pgpass: an empty password is an empty password.
      password: secret.password ?? '',
      ssl: options.ssl ? { servername: host, rejectUnauthorized: true } : false,
      connectionTimeoutMillis: input.timeoutMs,
      query_timeout: input.timeoutMs,
      statement_timeout: input.timeoutMs,
      application_name: 'platform-statistics-verify',
    });
    client.on('error', () => {});
    try {
      await client.connect();
      if (input.version === '1.0.0') {
        await client.query('SELECT 1');
        return;
      }
      const { rows } = await client.query<{ can_create: boolean }>(
        `SELECT has_schema_privilege(current_user, n.oid, 'CREATE') AS can_create FROM pg_namespace n WHERE n.nspname = $1`,
        [options.schema],
      );
      if (!rows.length) throw new OutboundRefused(key, `schema "${options.schema}" does not exist in database "${options.database}"`);
      if (!rows[0].can_create) throw new OutboundRefused(key, `user "${secret.username}" may not create tables in schema "${options.schema}"`);
    } catch (e) {
      if (e instanceof OutboundRefused) throw e;
      const err = e as Error & { code?: string };
      throw new OutboundRefused(key, `cannot use ${host}:${options.port}/${options.database}: ${err.code ?? ''} ${(err.message || String(e)).slice(0, 200)}`);
    } finally {
      await client.end().catch(() => {});
    }
  },
};
