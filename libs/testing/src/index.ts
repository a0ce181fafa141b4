export * from './database';
export * from './tokens';
export * from './redis';
export * from './wait';
