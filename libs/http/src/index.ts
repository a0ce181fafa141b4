export * from './operation';
export * from './validation';
export * from './app';
export * from './schemas';
export * from './serve';
export * from './standard';
export * from './faults';
export { BODY_LIMITS, parseBytes, parseJsonText, readBody } from './body';
export { pathRedactor } from './redact';
