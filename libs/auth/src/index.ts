export * from './roles';
export * from './tokens';
