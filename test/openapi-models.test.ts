import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildOpenApi } from '../src/api/openapi.ts';
import { operations } from '../src/api/operations/index.ts';
import { STORED_NOTE } from '../src/api/schemas.ts';
import { PAGE_ROUTE_DOCS } from '../src/server/docs-routes.ts';

// What a client generator gets from the document: every JSON answer is a named
// model of components.schemas, and every time field says what it promises.

type Json = Record<string, any>;

const doc = buildOpenApi(operations, PAGE_ROUTE_DOCS) as unknown as Json;
const REF = /^#\/components\/schemas\/(.+)$/;

/** The resources issue 18 names, each a model of its own. */
const NAMED_RESOURCES = [
  'TrendPoint', 'TrendPointPage',
  'DiskSnapshot', 'DiskSnapshotPage',
  'PulseEntry', 'PulseEntryPage',
  'BuildDigest',
  'EstateEvent', 'EstateEventPage',
  'WorkCompletion', 'WorkCompletionPage',
  'PublishedEntry', 'PublishedEntryPage',
  'TrainingRun',
  'Health',
  'Summary',
];

/** Every 2xx JSON answer of the document, by method, path and status. */
function successSchemas(): { where: string; schema: Json }[] {
  const out: { where: string; schema: Json }[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) {
      for (const [status, response] of Object.entries((operation as Json).responses as Json)) {
        const schema = (response as Json).content?.['application/json']?.schema;
        if (/^2\d\d$/.test(status) && schema) out.push({ where: `${method.toUpperCase()} ${path} ${status}`, schema });
      }
    }
  }
  return out;
}

/** The component a `{ $ref }` names; undefined for anything else. */
function refName(schema: Json | undefined): string | undefined {
  const keys = schema ? Object.keys(schema) : [];
  return keys.length === 1 && keys[0] === '$ref' ? REF.exec(schema?.$ref)?.[1] : undefined;
}

test('every JSON success answer is a named model of components.schemas', async (t) => {
  const answers = successSchemas();
  assert.ok(answers.length >= operations.length - 1, `${answers.length} JSON success answers found`);
  for (const { where, schema } of answers) {
    await t.test(where, () => {
      const name = refName(schema) ?? (schema.type === 'array' ? refName(schema.items) : undefined);
      assert.ok(name, `inline schema: ${JSON.stringify(schema).slice(0, 200)}`);
      assert.ok(doc.components.schemas[name], `${name} is not in components.schemas`);
    });
  }
  assert.deepEqual(doc.paths['/training/runs'].get.responses['200'].content['application/json'].schema, {
    type: 'array',
    items: { $ref: '#/components/schemas/TrainingRun' },
  }, 'GET /training/runs is a bare array of TrainingRun');
});

test('the main resources, and a page of each list, are named', () => {
  const missing = NAMED_RESOURCES.filter((name) => doc.components.schemas[name] === undefined);
  assert.deepEqual(missing, []);
  for (const name of Object.keys(doc.components.schemas).filter((n) => /(Page|List)$/.test(n))) {
    const items = doc.components.schemas[name].properties?.items;
    assert.equal(items?.type, 'array', `${name} has an items array`);
    assert.ok(refName(items.items), `${name}'s items are a named model, not ${JSON.stringify(items.items).slice(0, 120)}`);
  }
});

/** Every property of every schema in `node`, with where it is. */
function eachProperty(node: unknown, where: string, out: { where: string; name: string; schema: Json }[] = []) {
  if (Array.isArray(node)) node.forEach((child, i) => eachProperty(child, `${where}[${i}]`, out));
  else if (node !== null && typeof node === 'object') {
    const properties = (node as Json).properties;
    if (properties && typeof properties === 'object' && !Array.isArray(properties)) {
      for (const [name, schema] of Object.entries(properties as Json)) if (schema && typeof schema === 'object') out.push({ where: `${where}.properties.${name}`, name, schema });
    }
    for (const [key, child] of Object.entries(node)) eachProperty(child, `${where}.${key}`, out);
  }
  return out;
}

/** The schema and, through any depth of anyOf/oneOf (nullable, passed through), its branches. */
const branches = (schema: Json): Json[] => [schema, ...[...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap(branches)];

const TIME_NAME = /^(ts|since|until)$|_(at|ts)$/;

/** The time fields issue 23 found without a format, by where they sit in the document. */
const NAMED_TIMES: [string, (doc: Json) => Json | undefined][] = [
  ['TrendPoint.ts', (d) => d.components.schemas.TrendPoint.properties.ts],
  ['DiskSnapshot.ts', (d) => d.components.schemas.DiskSnapshot.properties.ts],
  ['PulseEntry.ts', (d) => d.components.schemas.PulseEntry.properties.ts],
  ['Repo.updated_at', (d) => d.components.schemas.Repo.properties.updated_at],
  ['ForgeRepo.updated_at', (d) => d.components.schemas.ForgeRepo.properties.updated_at],
  ['ForgeIssue.created_at', (d) => d.components.schemas.ForgeIssue.properties.created_at],
  ['ForgeIssue.updated_at', (d) => d.components.schemas.ForgeIssue.properties.updated_at],
  ['ForgeIssue.closed_at', (d) => d.components.schemas.ForgeIssue.properties.closed_at],
  ['Summary.publishing.latest.ts', (d) => branches(d.components.schemas.Summary.properties.publishing.properties.latest).find((b) => b.type === 'object')?.properties.ts],
  ['GardenPiece.published_at', (d) => d.components.schemas.GardenPiece.properties.published_at],
  ...['/builds', '/builds/recent'].map((route): [string, (doc: Json) => Json | undefined] => [
    `${route} by_project[].last_ts`,
    (d) => {
      const ref = d.paths[route].get.responses['200'].content['application/json'].schema.$ref as string;
      return d.components.schemas[REF.exec(ref)?.[1] as string].properties.by_project.items.properties.last_ts;
    },
  ]),
];

const isDateTime = (schema: Json) => branches(schema).some((s) => s.type === 'string' && s.format === 'date-time');
/** A passed-through time says so: the note of storedTime, on the field or one of its branches. */
const saysStored = (schema: Json) => branches(schema).some((s) => typeof s.description === 'string' && s.description.endsWith(STORED_NOTE));

test('the time fields of live answers carry format date-time, directly or in an anyOf branch', async (t) => {
  for (const [name, find] of NAMED_TIMES) {
    await t.test(name, () => {
      const schema = find(doc);
      assert.ok(schema, `${name} is not in the document`);
      assert.ok(isDateTime(schema), `no format: date-time: ${JSON.stringify(schema)}`);
    });
  }
});

test('every time field has format date-time; one passed through as stored also says so and admits other values', async (t) => {
  const times = eachProperty(doc, '#').filter(({ name }) => TIME_NAME.test(name));
  assert.ok(times.length >= 30, `${times.length} time fields found`);
  for (const { where, schema } of times) {
    await t.test(where, () => {
      assert.ok(isDateTime(schema), `no format: date-time: ${JSON.stringify(schema)}`);
      if (!saysStored(schema)) return;
      // What the output check lets through must be in the schema too: some branch without the format.
      assert.ok(branches(schema).some((s) => s.format === undefined && s.type !== 'null' && !s.anyOf), `passed through, yet only date-times are allowed: ${JSON.stringify(schema)}`);
    });
  }
});
