// The NetworkPolicies of k8s/base/network-policy.yaml (written by generate.mjs).

const PART_OF = { 'app.kubernetes.io/part-of': 'cloud-ops-platform' };

/**
 * Who may open a connection to an app's port, besides the kubelet's probes (node traffic, which the
 * usual CNIs allow): the ingress controller, which is the gateway and its rate limit, and Prometheus,
 * which scrapes `/metrics`. Both as the common installs label them; a cluster that runs them elsewhere
 * changes these two selectors (docs/decisions/deployment.md).
 */
export const APP_PORT_PEERS = {
  gateway: { namespace: 'ingress-nginx', pod: { 'app.kubernetes.io/name': 'ingress-nginx' } },
  prometheus: { namespace: 'monitoring', pod: { 'app.kubernetes.io/name': 'prometheus' } },
};

const peer = (p) => ({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': p.namespace } }, podSelector: { matchLabels: p.pod } });

/**
 * The apps listen on every interface in a pod (the Service reaches them over the cluster network), so
 * without a policy any pod of the cluster reaches an app's port and goes round the gateway's rate limit
 * (issue #32). Two policies keep the ports inside: no platform pod takes a connection (workers and
 * migration Jobs serve nothing), except an API pod on its `http` port from the gateway or Prometheus.
 */
export function networkPolicies(labels, pluginClients = []) {
  const policy = (name, spec) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, labels: labels(name, 'network') }, spec });
  return [
    policy('platform-deny-ingress', { podSelector: { matchLabels: PART_OF }, policyTypes: ['Ingress'] }),
    policy('platform-api-from-gateway', {
      podSelector: { matchLabels: { ...PART_OF, 'app.kubernetes.io/component': 'api' } },
      policyTypes: ['Ingress'],
      ingress: Object.values(APP_PORT_PEERS).map((p) => ({ from: [peer(p)], ports: [{ protocol: 'TCP', port: 'http' }] })),
    }),
    // Plugin containers (component `plugin`, k8s/plugins) take gRPC from the modules that call them
    // only (their API and worker pods), on any port: upstream's images differ.
    policy('platform-plugins-from-modules', {
      podSelector: { matchLabels: { ...PART_OF, 'app.kubernetes.io/component': 'plugin' } },
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ podSelector: { matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: pluginClients }] } }] }],
    }),
  ];
}
