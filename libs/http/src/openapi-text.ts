// The words of the OpenAPI documents that are read by people: each operation's description (what it
// does, who may call it, its notable errors) and each resource tag's. Generated from the operation table
// so that every operation has one; an operation's own `summary` comes first where it has one.
import type { Operation } from './operation';

/** What each resource is, for the document's top-level tags. */
const RESOURCES: Record<string, string> = {
  token: 'Access and refresh tokens: issue one with credentials, grant a scoped access token with a refresh token.',
  user: 'The users of a domain: local accounts with a password, or EXTERNAL ones that log in through the single sign-on provider.',
  workspace: 'Workspaces: the unit of isolation inside a domain; projects, data sources and resources belong to one.',
  project: 'Projects inside a workspace, with their members.',
  'project-group': 'Project groups: a tree that organises the projects of a workspace, with its members.',
  role: 'Roles: what a role binding grants (DOMAIN_ADMIN, WORKSPACE_OWNER, WORKSPACE_MEMBER).',
  'role-binding': 'Role bindings: which user holds which role, in the domain or in one workspace.',
  endpoint: "The platform's service endpoints, as clients discover them.",
  'external-auth': "A domain's single sign-on configuration (an OIDC provider).",
  'data-source': 'Data sources: where a module collects its data from, through a built-in or published plugin.',
  job: "A data source's collection runs (sync jobs) and their state.",
  'job-task': 'The tasks of a collection job (one per account or period).',
  'unified-cost': 'Costs unified across data sources, with currency conversion, for analysis.',
  'exchange-rate': 'Currency exchange rates used to convert costs.',
  storage: 'Statistics storages: external stores the statistics module queries through a plugin.',
  schema: 'JSON schemas of the platform (the repository module), kept in sync from their sources.',
  'cloud-service': 'Cloud services in the inventory: the resources collected from providers.',
  webhook: 'Webhooks: URLs monitoring tools post alerts to; each delivery becomes events.',
  event: 'Events: what happened, as a webhook or an integration delivered it.',
  supervisor: 'Supervisors: whoever runs plugin containers and publishes where they answer.',
  plugin: 'Plugins: where a published plugin answers, for a domain and a version.',
};

const human = (resource: string) => resource.replace(/-/g, ' ');

/** What a verb does to its resource, in one sentence. */
function action(verb: string, resource: string): string {
  const r = human(resource);
  const table: Record<string, string> = {
    create: `Creates a ${r}.`,
    register: `Registers a ${r}: its plugin is initialised and its metadata stored.`,
    update: `Changes the given fields of a ${r}; fields left out (or at their proto3 defaults) keep their values.`,
    delete: `Deletes a ${r}.`,
    deregister: `Deregisters a ${r}, with what belongs to it.`,
    get: `Answers one ${r} by its id.`,
    list: `Lists the ${r}s the caller may see, filtered, sorted and paged by \`query\` (Query); \`count_only\` answers the count alone.`,
    stat: `Aggregates the ${r}s the caller may see with a statistics query (distinct values, or aggregate stages).`,
    analyze: `Analyzes the ${r}s by period: group-by keys and fields summed or counted per period.`,
    enable: `Enables a ${r}.`,
    disable: `Disables a ${r}.`,
    sync: `Starts a collection of the ${r} now; answers at once, the work runs in the background.`,
    cancel: `Cancels a ${r} in progress; its unfinished tasks stop.`,
    set: `Sets the ${r}, replacing what was set.`,
    unset: `Removes the ${r}.`,
    reset: `Resets the ${r}.`,
    issue: `Issues an access and a refresh token for credentials (a password, or a single sign-on token).`,
    grant: `Grants a scoped access token (user, domain or workspace) for a refresh token.`,
    export: `Exports the ${r}s a query selects as a file (CSV or Excel), streamed.`,
    'add-users': `Adds users to a ${r}.`,
    'remove-users': `Removes users from a ${r}.`,
    'update-plugin': `Moves a ${r} to another plugin version or options; the plugin is initialised again.`,
    'verify-plugin': `Verifies a ${r}'s plugin with its options and secret.`,
    'update-role': `Changes the role a ${r} grants; the user's tokens from the old role stop working.`,
    'update-project-type': `Changes who may see a ${r} (PRIVATE: its members; PUBLIC: the whole workspace).`,
    'change-project-group': `Moves a ${r} into another project group.`,
    'change-parent-group': `Moves a ${r} under another parent group.`,
    publish: `Publishes a ${r}: records where its plugins answer.`,
    'list-plugins': `Lists the plugins a ${r} published.`,
    'get-plugin-endpoint': `Answers where a plugin answers for a version (or the newest, AUTO).`,
    'list-basic-role': `Lists the basic roles.`,
  };
  return table[verb] ?? `Runs \`${verb}\` on a ${r}.`;
}

/** Who may call an operation, in one sentence. */
function callers(op: Operation<any>): string {
  if (op.access === 'public') return 'Needs no token.';
  const roles = op.access.roles.join(', ');
  const permission = op.access.permission ? `permission \`${op.access.permission}\`` : 'no permission needed';
  return `Callable with an access token of ${roles} (${permission}); a caller never reaches another domain's data.`;
}

/** The errors particular to an operation (the shared ones are in every operation's responses). */
function notableErrors(op: Operation<any>): string {
  const list = Object.entries(op.errors ?? {})
    .sort(([a], [b]) => Number(a) - Number(b))
    .flatMap(([status, codes]) => (codes ?? []).map((c) => `${status} ${c}`));
  return list.length ? `Notable errors: ${list.join(', ')}.` : 'Errors: the validation and authentication errors every operation can give.';
}

/** An operation's description: what it does, who may call it and its notable errors. */
export function operationDescription(op: Operation<any>, cut = false): string {
  const [, , , resource, verb] = op.path.split('/');
  const does = op.summary ? `${op.summary.replace(/\.?$/, '.')}` : action(verb ?? '', resource ?? '');
  const only = cut ? ' `only` (or `query.only`, `query.minimal`) cuts the answer to some fields.' : '';
  return `${does}${only} ${callers(op)} ${notableErrors(op)}`;
}

/** A resource tag's description. */
export function tagDescription(service: string, resource: string): string {
  return RESOURCES[resource] ?? `The ${human(resource)} resource of the ${service} module.`;
}
