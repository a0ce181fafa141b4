export * from './secret-box';
export * from './keys';
export * from './stored';
export * from './backfill';
