export * from './operation';
export * from './validation';
export * from './app';
export * from './schemas';
export * from './serve';
export * from './standard';
