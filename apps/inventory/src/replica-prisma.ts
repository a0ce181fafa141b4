import { createPrisma, type Pool } from '@platform/db';
import { PrismaClient } from './generated/prisma/client';

/** inventory's Prisma client on the read replica's pool: ReadRouter.withClient makes it once, on first use (gets read through it). */
export const replicaPrisma = (pool: Pool) => createPrisma(PrismaClient, pool);
