export * from './address-guard';
export * from './fetch';
