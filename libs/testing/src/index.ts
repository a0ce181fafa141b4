export * from './database';
export * from './tokens';
export * from './redis';
export * from './wait';
export * from './partial-request';
export * from './platform';
export * from './browser';
export * from './totp';
