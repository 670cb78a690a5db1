// Strict validation of rendered Kubernetes objects (`helm template` output), for .ci/chart.sh:
//
//   node .ci/chart-validate.mjs <models-folder> <rendered.yaml>...
//
// Each object is validated by kubernetes-models (types, required fields, formats; ServiceMonitor and
// HTTPRoute by @kubernetes-models/prometheus-operator and gateway-api), which accepts unknown fields.
// So each object is also walked against the TypeScript declarations of its kind (the field lists of the
// same OpenAPI schemas), and every field they do not declare is an error: `spec.bogus`, a misspelt
// `readinesProbe`, a key at the wrong depth. Exit status 1 when any object fails, naming it and the path.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';

const [models, ...files] = process.argv.slice(2);
if (!models || files.length === 0) {
  console.error('usage: node .ci/chart-validate.mjs <models-folder> <rendered.yaml>...');
  process.exit(2);
}
/** A file of an installed models package (their `exports` maps hide the paths we need). */
const fileOf = (module, extension) => join(models, 'node_modules', `${module}${extension}`);

/** The module (without extension) declaring one apiVersion/kind in the models packages. */
function moduleOf(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (group === 'monitoring.coreos.com') return `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`;
  if (group === 'gateway.networking.k8s.io') return `@kubernetes-models/gateway-api/${group}/${version}/${kind}`;
  return `kubernetes-models/${group ? `${group}/` : ''}${version}/${kind}`;
}

const program = { checker: undefined, files: new Map() };
/** The declared interface `I<Kind>` of a module's .d.ts, through one TypeScript program over every kind used. */
function declaredType(module, kind) {
  const file = fileOf(module, '.d.ts');
  if (!program.files.has(file)) {
    program.files.set(file, undefined);
    const built = ts.createProgram([...program.files.keys()], { noEmit: true, skipLibCheck: true, moduleResolution: ts.ModuleResolutionKind.Node10 });
    program.built = built;
    program.checker = built.getTypeChecker();
  }
  const source = program.built.getSourceFile(file);
  const symbol = program.checker.getSymbolAtLocation(source);
  const declared = program.checker.getExportsOfModule(symbol).find((s) => s.name === `I${kind}`);
  if (!declared) throw new Error(`${module}: no interface I${kind}`);
  return program.checker.getDeclaredTypeOfSymbol(declared);
}

/** Paths of fields `value` holds that `type` does not declare. */
function unknownFields(value, type, path, out) {
  const checker = program.checker;
  if (value === null || typeof value !== 'object') return out;
  let t = checker.getNonNullableType(type);
  if (t.isUnion()) {
    const objects = t.types.filter((member) => member.flags & ts.TypeFlags.Object);
    if (objects.length !== 1) return out; // a scalar-or-object union (IntOrString, Quantity): nothing to walk
    t = objects[0];
  }
  if (Array.isArray(value)) {
    const element = checker.getIndexTypeOfType(t, ts.IndexKind.Number);
    if (element) value.forEach((item, i) => unknownFields(item, element, `${path}[${i}]`, out));
    return out;
  }
  const byName = checker.getIndexTypeOfType(t, ts.IndexKind.String);
  const properties = new Map(checker.getPropertiesOfType(t).map((p) => [p.name, p]));
  if (properties.size === 0 && !byName) return out; // free-form (`any`, `{}`): nothing declared to hold it to
  for (const [key, child] of Object.entries(value)) {
    const property = properties.get(key);
    if (property) unknownFields(child, checker.getTypeOfSymbol(property), `${path}.${key}`, out);
    else if (byName) unknownFields(child, byName, `${path}.${key}`, out);
    else out.push(`${path}.${key}`);
  }
  return out;
}

let failures = 0;
let objects = 0;
for (const file of files) {
  for (const document of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const object = document.toJS();
    if (!object) continue;
    objects++;
    const name = `${file}: ${object.kind}/${object.metadata?.name}`;
    try {
      const module = moduleOf(object.apiVersion, object.kind);
      const { [object.kind]: Model } = await import(pathToFileURL(fileOf(module, '.js')).href);
      new Model(object).validate();
      const unknown = unknownFields(object, declaredType(module, object.kind), '', []);
      if (unknown.length > 0) throw new Error(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((p) => p.slice(1)).join(', ')}`);
      console.log(`ok      ${name}`);
    } catch (error) {
      failures++;
      console.log(`INVALID ${name}: ${error.message}`);
    }
  }
}
console.log(`${objects} objects, ${failures} invalid`);
process.exit(failures > 0 || objects === 0 ? 1 : 0);
