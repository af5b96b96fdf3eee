import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './helpers/data-dir.ts';
import { HAS_PROMTOOL } from './helpers/exposition.ts';
import { skipWithout } from './helpers/required-tool.ts';

// docs/metrics.md's scrape config and alerting rules, as they stand there,
// checked by promtool (Debian's prometheus package).

async function yamlBlocks(): Promise<string[]> {
  const text = await readFile(path.join(ROOT, 'docs', 'metrics.md'), 'utf8');
  return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

test("docs/metrics.md's alerting rules and scrape config pass promtool check", async (t) => {
  if (skipWithout(t, HAS_PROMTOOL ? false : 'promtool is not installed (apt-get install prometheus)')) return;
  const blocks = await yamlBlocks();
  const config = blocks.find((b) => b.startsWith('scrape_configs:'));
  const rules = blocks.find((b) => b.startsWith('groups:'));
  assert.ok(config && rules, 'the page has a scrape config and a rules file');
  assert.match(rules, /estate_disk_used_ratio/);
  assert.match(rules, /estate_node_stale/);
  assert.match(rules, /estate_schedule_state/);
  assert.match(rules, /estate_notify_attempts_total/);

  const dir = await mkdtemp(path.join(os.tmpdir(), 'estate-promtool-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, 'rules.yml'), rules);
  const checkedRules = spawnSync('promtool', ['check', 'rules', path.join(dir, 'rules.yml')], { encoding: 'utf8' });
  assert.equal(checkedRules.status, 0, checkedRules.stdout + checkedRules.stderr);
  assert.match(checkedRules.stdout, /SUCCESS: 4 rules found/);

  // The key file the config names, here in the temp dir.
  await writeFile(path.join(dir, 'estate.key'), 'not-a-real-key\n');
  await writeFile(path.join(dir, 'prometheus.yml'), config.replace('/etc/prometheus/estate.key', path.join(dir, 'estate.key')));
  const checkedConfig = spawnSync('promtool', ['check', 'config', path.join(dir, 'prometheus.yml')], { encoding: 'utf8' });
  assert.equal(checkedConfig.status, 0, checkedConfig.stdout + checkedConfig.stderr);
});
