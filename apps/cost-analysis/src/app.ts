import { createServiceApp } from '@platform/http';
import { postgresCheck } from '@platform/db';
import type { CostAnalysisDeps } from './deps';
import { dataSourceOperations } from './data-source/operations';
import { DataSourceService } from './data-source/service';
import { exchangeRateOperations } from './exchange-rate/operations';
import { ExchangeRateService } from './exchange-rate/service';
import { jobOperations } from './job/operations';
import { JobService } from './job/service';
import { jobTaskOperations } from './job-task/operations';
import { JobTaskService } from './job-task/service';
import { unifiedCostOperations } from './unified-cost/operations';
import { UnifiedCostService } from './unified-cost/service';

/** cost-analysis' Express app: the resource tables handed to the shared router. No I/O here. */
export function createApp(deps: CostAnalysisDeps) {
  return createServiceApp({
    service: 'cost-analysis',
    logger: deps.logger,
    verifier: deps.verifier,
    readiness: { postgres: postgresCheck(deps.pool), redis: () => deps.redis.ping() },
    queues: [deps.queue],
    operations: [
      ...unifiedCostOperations(new UnifiedCostService(deps.pool, deps.directory)),
      ...jobTaskOperations(new JobTaskService(deps.pool)),
      ...exchangeRateOperations(new ExchangeRateService(deps.prisma, deps.config)),
      ...dataSourceOperations(new DataSourceService(deps)),
      ...jobOperations(new JobService(deps.pool, deps.queue)),
    ],
  });
}
