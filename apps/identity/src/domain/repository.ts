import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** The client, or a transaction's. */
type Db = PrismaClient | Prisma.TransactionClient;

/** A `domain` row as stored. */
export interface DomainRow {
  domain_id: string;
  name: string;
  state: string;
  tags: unknown;
  created_at: Date;
}

/** Every read and write of the `domain` table (domains have no API of their own: the admin CLI creates them; logins and grants read them). */
export class DomainRepository {
  /** `db`: the client, or the transaction the calls run in. */
  constructor(private readonly db: Db) {}

  /** The domain; `db`: the client to read through (a grant's transaction). */
  find(domainId: string, db: Db = this.db): Promise<DomainRow | null> {
    return db.domain.findUnique({ where: { domain_id: domainId } });
  }

  /** Whether a domain of this id, ignoring case, exists ('Acme' beside 'acme'). */
  async existsIgnoringCase(domainId: string): Promise<boolean> {
    const rows = await this.db.$queryRawUnsafe<unknown[]>('SELECT 1 FROM domain WHERE lower(domain_id) = lower($1)', domainId);
    return rows.length > 0;
  }

  insert(d: { domain_id: string; name: string }): Promise<DomainRow> {
    return this.db.domain.create({ data: { domain_id: d.domain_id, name: d.name } });
  }
}
