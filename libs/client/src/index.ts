export * from './client';
export * from './errors';
export * from './resources';
export type { ErrorEnvelope, OperationPath, RequestOf, ResponseOf } from './types';
export type { Components, Paths } from './generated';
export { MODULE_NAMES, OPERATION_PATHS, REQUIRED_KEYS } from './generated';
