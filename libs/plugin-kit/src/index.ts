export * from './errors';
export * from './server';
export * from './services';
