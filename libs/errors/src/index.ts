export * from './errors';
export * from './zod-issue';
