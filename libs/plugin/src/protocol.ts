import { Root, type INamespace, type Method, type Service, type Type } from 'protobufjs';
import { MessageCodec } from './codec';
import { descriptor } from './generated/descriptor';

/**
 * The protocol's services, compiled from libs/plugin/proto into src/generated (nothing is read from
 * disk at run time, so the esbuild bundles and the Docker images need no .proto file).
 */
let root: Root | undefined;
function protocolRoot(): Root {
  root ??= Root.fromJSON(descriptor as INamespace);
  return root;
}

/** Struct / ListValue nesting the codecs accept by default (PLUGIN_MAX_JSON_DEPTH). */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/** One RPC of the protocol: its gRPC path and the codecs of its request and response. */
export interface RpcMethod<Req = unknown, ReqInput = unknown, Res = unknown, ResInput = unknown> {
  /** `/spaceone.api.cost_analysis.plugin.Cost/get_data` */
  path: string;
  service: string;
  name: string;
  responseStream: boolean;
  request: MessageCodec<Req, ReqInput>;
  response: MessageCodec<Res, ResInput>;
}

const methods = new Map<string, RpcMethod>();

/** A service's definition, by full name (`spaceone.api.cost_analysis.plugin.Cost`). */
export function serviceOf(fullName: string): Service {
  return protocolRoot().lookupService(fullName);
}

/**
 * The method `name` of service `service`, with codecs bounded by `maxDepth`. Cached per (method, depth).
 * Request streams are not part of the protocol and are refused.
 */
export function rpcMethod<Req, ReqInput, Res, ResInput>(service: string, name: string, maxDepth = DEFAULT_MAX_JSON_DEPTH): RpcMethod<Req, ReqInput, Res, ResInput> {
  const key = `${service}/${name}#${maxDepth}`;
  const known = methods.get(key);
  if (known) return known as RpcMethod<Req, ReqInput, Res, ResInput>;
  const svc = serviceOf(service);
  const m: Method | undefined = svc.methods[name];
  if (!m) throw new Error(`${service} has no method ${name}`);
  m.resolve();
  if (m.requestStream) throw new Error(`${service}/${name}: request streams are not part of the protocol`);
  const method: RpcMethod<Req, ReqInput, Res, ResInput> = {
    path: `/${service}/${name}`,
    service,
    name,
    responseStream: Boolean(m.responseStream),
    request: new MessageCodec<Req, ReqInput>(m.resolvedRequestType as Type, { maxDepth }),
    response: new MessageCodec<Res, ResInput>(m.resolvedResponseType as Type, { maxDepth }),
  };
  methods.set(key, method as RpcMethod);
  return method;
}

/** The protocol's package names. */
export const PACKAGES = {
  costAnalysis: 'spaceone.api.cost_analysis.plugin',
  monitoring: 'spaceone.api.monitoring.plugin',
  identity: 'spaceone.api.identity.plugin',
  core: 'spaceone.api.core.v1',
  health: 'grpc.health.v1',
} as const;
