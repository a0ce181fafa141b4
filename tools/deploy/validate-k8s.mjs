#!/usr/bin/env node
// Validates Kubernetes manifests against the Kubernetes OpenAPI schemas (kubernetes-models).
//   node tools/deploy/validate-k8s.mjs file.yaml ...   prints one line per invalid object; exit 1 if any
import { readFileSync } from 'node:fs';
import YAML from 'yaml';

let invalid = 0;
let checked = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of YAML.parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJSON()).filter(Boolean)) {
    const [group, version] = doc.apiVersion?.includes('/') ? doc.apiVersion.split('/') : ['', doc.apiVersion];
    let Model;
    try {
      Model = (await import(`kubernetes-models/${group ? `${group}/` : ''}${version}`))[doc.kind];
    } catch {
      Model = undefined;
    }
    checked++;
    if (!Model) {
      invalid++;
      console.log(`${file}: ${doc.kind} ${doc.metadata?.name}: unknown kind ${doc.apiVersion}/${doc.kind}`);
      continue;
    }
    try {
      new Model(doc).validate();
    } catch (e) {
      invalid++;
      console.log(`${file}: ${doc.kind} ${doc.metadata?.name}: ${e.message}`);
    }
  }
}
console.log(`${checked} objects checked, ${invalid} invalid`);
process.exit(invalid ? 1 : 0);
