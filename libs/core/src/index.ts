export * from './config';
export * from './logger';
export * from './ids';
export * from './time';
export * from './safe-json';
export * from './idle-gc';
export * from './csv';
export * from './retry';
