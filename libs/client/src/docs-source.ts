/** The OpenAPI document of each module, fetched from where it is served (`urlOf(module)` is that app's or the gateway's base URL). */
export async function fetchOpenApiDocs(modules: readonly string[], urlOf: (module: string) => string): Promise<Record<string, { paths?: Record<string, unknown> }>> {
  const docs: Record<string, { paths?: Record<string, unknown> }> = {};
  for (const m of modules) {
    const res = await fetch(`${urlOf(m)}/${m}/openapi.json`);
    if (!res.ok) throw new Error(`${m}/openapi.json answered ${res.status}`);
    docs[m] = (await res.json()) as { paths?: Record<string, unknown> };
  }
  return docs;
}
