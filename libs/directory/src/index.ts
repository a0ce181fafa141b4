// The directory: what other modules read of identity's domains, workspaces, projects and groups
// (client.ts: the publisher and the cached reader), the project scope of a caller, and the revocations.
export * from './client';
export * from './project-scope';
export * from './revocations';
