export * from './errors';
export * from './zod-issue';
export * from './plugin-error';
