export * from './address-guard';
export * from './fetch';
export * from './policy';
export * from './refusal';
