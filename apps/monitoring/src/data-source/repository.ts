import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** A `data_source` row as stored. */
export interface DataSourceRow {
  domain_id: string;
  data_source_id: string;
  name: string;
  state: string;
  monitoring_type: string;
  provider: string;
  capability: unknown;
  plugin_info: unknown;
  tags: unknown;
  created_at: Date;
}

/** What a new data source is stored with (state and created_at take their defaults). */
export interface NewDataSource {
  domain_id: string;
  data_source_id: string;
  name: string;
  monitoring_type: string;
  provider: string;
  capability: Prisma.InputJsonValue;
  plugin_info: Prisma.InputJsonValue;
  tags: Prisma.InputJsonValue;
}

type DataSourceKey = Pick<DataSourceRow, 'domain_id' | 'data_source_id'>;

/** Every read and write of the `data_source` table (the query DSL's list and stat read through fields.ts). */
export class DataSourceRepository {
  constructor(private readonly prisma: PrismaClient) {}

  find(domainId: string, dataSourceId: string) {
    return this.prisma.dataSource.findUnique({ where: { domain_id_data_source_id: { domain_id: domainId, data_source_id: dataSourceId } } });
  }

  create(data: NewDataSource) {
    return this.prisma.dataSource.create({ data });
  }

  update(row: DataSourceKey, data: Prisma.DataSourceUpdateInput) {
    return this.prisma.dataSource.update({ where: { domain_id_data_source_id: { domain_id: row.domain_id, data_source_id: row.data_source_id } }, data });
  }

  delete(row: DataSourceKey) {
    return this.prisma.dataSource.delete({ where: { domain_id_data_source_id: { domain_id: row.domain_id, data_source_id: row.data_source_id } } });
  }
}
