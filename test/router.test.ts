import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { checkOperations } from '../src/api/check-operations.ts';
import { defineOperation, type Operation } from '../src/api/define-operation.ts';
import { compilePath, Router } from '../src/server/router.ts';

test('compilePath turns {params} into named groups and escapes the rest', () => {
  const re = compilePath('/state/{file_name}.json');
  assert.deepEqual({ ...re.exec('/state/heartbeat.json')?.groups }, { file_name: 'heartbeat' });
  assert.equal(re.test('/state/heartbeatXjson'), false);
  assert.equal(re.test('/state/a/b.json'), false);
});

test('Router matches, reports allowed methods, and decodes params', () => {
  const r = new Router<string>().add('GET', '/a/{id}', 'get').add('POST', '/a/{id}', 'post').add('GET', '/b', 'b');
  const cases: [string, string, unknown][] = [
    ['GET', '/a/x%20y', { kind: 'found', value: 'get', params: { id: 'x y' } }],
    ['HEAD', '/a/1', { kind: 'found', value: 'get', params: { id: '1' } }],
    ['POST', '/a/1', { kind: 'found', value: 'post', params: { id: '1' } }],
    ['DELETE', '/a/1', { kind: 'wrong_method', allowed: ['GET', 'HEAD', 'POST'] }],
    ['GET', '/a/%E0%A4%A', { kind: 'found', value: 'get', params: { id: '%E0%A4%A' } }],
    ['GET', '/c', { kind: 'not_found' }],
    ['GET', '/b/', { kind: 'not_found' }],
  ];
  for (const [method, path, expected] of cases) assert.deepEqual(r.match(method, path), expected, `${method} ${path}`);
});

test('Router: a route added earlier wins, also over a path without parameters', () => {
  const paramFirst = new Router<string>().add('GET', '/s/{id}', 'param').add('GET', '/s/list', 'static').add('POST', '/s/list', 'post');
  assert.deepEqual(paramFirst.match('GET', '/s/list'), { kind: 'found', value: 'param', params: { id: 'list' } });
  assert.deepEqual(paramFirst.match('POST', '/s/list'), { kind: 'found', value: 'post', params: {} });
  const staticFirst = new Router<string>().add('GET', '/s/list', 'static').add('GET', '/s/{id}', 'param').add('GET', '/s/list', 'again');
  assert.deepEqual(staticFirst.match('GET', '/s/list'), { kind: 'found', value: 'static', params: {} });
  assert.deepEqual(staticFirst.match('HEAD', '/s/list'), { kind: 'found', value: 'static', params: {} });
  assert.deepEqual(staticFirst.match('DELETE', '/s/list'), { kind: 'wrong_method', allowed: ['GET', 'HEAD'] });
});

function op(over: Partial<Parameters<typeof defineOperation>[0]> = {}): Operation {
  return defineOperation({
    id: 'x',
    method: 'GET',
    path: '/x',
    access: 'public',
    tag: 't',
    summary: 's',
    output: z.object({}),
    handler: () => ({}),
    cli: false,
    ...over,
  } as Parameters<typeof defineOperation>[0]);
}

test('checkOperations rejects an inconsistent table at load', () => {
  const cases: [string, Operation[], RegExp][] = [
    ['duplicate id', [op(), op({ path: '/y' })], /duplicate id x/],
    ['duplicate route', [op(), op({ id: 'y' })], /duplicate route GET \/x/],
    ['same route, other param name', [op({ path: '/x/{a}', input: { path: z.object({ a: z.string() }) } }), op({ id: 'y', path: '/x/{b}', input: { path: z.object({ b: z.string() }) } })], /duplicate route/],
    ['param missing from schema', [op({ path: '/x/{id}' })], /path parameter \{id\} is missing/],
    ['schema field not in path', [op({ input: { path: z.object({ id: z.string() }) } })], /input path field id is not in \/x/],
    [
      'duplicate CLI command',
      [op({ cli: { command: 'x', examples: [] } }), op({ id: 'y', path: '/y', cli: { command: 'x', examples: [] } })],
      /CLI command "x" is used by both x and y/,
    ],
    ['CLI arg not a path param', [op({ cli: { command: 'x', args: ['id'], examples: [] } })], /CLI argument id is not a path parameter/],
  ];
  for (const [name, ops, error] of cases) assert.throws(() => checkOperations(ops), error, name);
  assert.doesNotThrow(() => checkOperations([op(), op({ id: 'y', method: 'POST' })]));
});
