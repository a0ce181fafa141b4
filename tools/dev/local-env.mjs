// What `npm start` (start-all.mjs) adds to the environment of every app and worker it runs.

/**
 * The apps' listen address (libs/http serve: `HOST`). A local platform is reached through its gateway
 * (127.0.0.1:8080, `GATEWAY_HOST`), so its apps listen on loopback: nobody else on the network reaches
 * an app port and goes round the gateway's rate limit (issue #32). `HOST` set by the caller wins
 * (`HOST=0.0.0.0 npm start` opens them). Production sets none: a pod listens on every interface and
 * the NetworkPolicy keeps the ports inside the cluster.
 */
export function listenEnv(env) {
  return { HOST: env.HOST?.trim() || '127.0.0.1' };
}
