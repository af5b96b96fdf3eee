// The PostgreSQL store's schema, as ordered migrations. Each is applied once,
// in its own transaction with the others pending, by `estate migrate`
// (migrate.ts); `schema_version` holds one row per applied version. Never
// edit a migration that has shipped: append the next one.
//
// Tables:
// - completions, entries: the keyed record logs. `event_id` orders records
//   by commit (writers take a transaction lock per log, so a reader that has
//   seen event N has seen every event below it) and is what a subscriber or
//   a resumed stream catches up from. `id` is the record's id (`wc_…`,
//   `pub_…`), unique; the key pair is unique; `record` is the stored JSON.
// - training_runs: one row per run, listed per user.
// - api_keys: the credential store (hashes only), in creation order by `seq`.
// - token_secret: the one token signing key (row id 1).
// - tally_groups, tally_distinct, tally_buckets (version 2): the counts of
//   each record log (KeyedRecords.tally), kept by a trigger in the
//   transaction of every INSERT into completions or entries, so the
//   dashboard's aggregates read a few rows whatever the log's size. Rows are
//   only ever inserted into the logs (estate neither updates nor deletes
//   them); a row deleted by hand stays counted. See postgres-tally.ts.
// - series_trends, series_disk, series_pulse (version 3): the series of
//   DESIGN.md 7a, one row per record: `record` is the record as it came
//   (json, not jsonb: its fields in their order, as the data dir returns
//   them), `node`, `ts` (and `mount`) its string fields (null when absent
//   or not strings), `seq` the write order. A sample's record is unique by
//   (node, ts) (disk: (node, ts, mount)); records without them are allowed
//   and not unique. Indexes on (node, seq) (disk also (node, mount, seq) and
//   (mount, seq)) read one node's newest rows without touching others'.
// - series_nodes: every node with a record in a series, kept by a trigger
//   in each insert's transaction (Series.nodes reads it, not the records).
// - series_heartbeat: the heartbeat document (row id 1), merged under its
//   row lock (postgres-series.ts).
// - series_rollups, series_measure and the rollup triggers (version 5): the
//   1-minute and 1-hour buckets of the range routes (DESIGN.md 7b), kept by a
//   trigger in each insert's transaction, the rows stored before counted once.
// - series_ts_time(ts) and an index on it per series table (version 4): the
//   instant a row's `ts` names when it is an RFC 3339 date-time, NULL for
//   any other text, so retention (Series.prune) finds the rows dated before
//   a cutoff through the index, reading only those, and keeps the undated.
// - work_starts (version 6): the starts of runs (DESIGN.md 7c), a keyed
//   record log as completions is, key (board, task_id); no tally.
// - provider_probes (version 7): the probes `estate serve` makes of the
//   configured providers (postgres-probes.ts), one row per probe, unique by
//   (provider, ts), `record` the probe as it came (json), `seq` the write
//   order, an index on (provider, seq) for one provider's newest; the
//   provider_down / provider_recovered events are derived from them.
// - notify_targets, notify_deliveries (version 8): the webhook outbox
//   (postgres-outbox.ts, docs/notify.md). One row per delivery of an event to
//   a target, `id` its webhook-id (stable: enqueued once whichever replica
//   sees the event first); `lease_owner`/`lease_until` the replica attempting
//   it, claimed with FOR UPDATE SKIP LOCKED so one replica at a time does.
//   notify_targets holds when each target's notifications start.
// - watched_events (version 9): the watched events (events/stored-events.ts),
//   a keyed record log as completions is, key (kind, occurrence: subject@ts),
//   each stored once by whichever replica noticed it first; no tally.

export interface Migration {
  version: number;
  /** What it changes, for `estate migrate`'s report. */
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'record logs, training runs, credentials and the token secret',
    sql: `
CREATE TABLE completions (
  event_id bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  board text NOT NULL,
  task_id text NOT NULL,
  record jsonb NOT NULL,
  UNIQUE (board, task_id)
);
CREATE INDEX completions_board ON completions (board, event_id);

CREATE TABLE entries (
  event_id bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  target_site text NOT NULL,
  slug text NOT NULL,
  content_type text NOT NULL,
  record jsonb NOT NULL,
  UNIQUE (target_site, slug)
);
CREATE INDEX entries_target_site ON entries (target_site, event_id);
CREATE INDEX entries_content_type ON entries (content_type, event_id);

CREATE TABLE training_runs (
  run_id text PRIMARY KEY,
  user_id text NOT NULL,
  created_at text NOT NULL,
  run jsonb NOT NULL
);
CREATE INDEX training_runs_user ON training_runs (user_id, created_at, run_id);

CREATE TABLE api_keys (
  seq bigserial NOT NULL UNIQUE,
  key_id text PRIMARY KEY,
  hash bytea NOT NULL,
  user_id text NOT NULL,
  name text,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz
);

CREATE TABLE token_secret (
  id smallint PRIMARY KEY CHECK (id = 1),
  secret bytea NOT NULL CHECK (length(secret) = 32),
  created_at timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 2,
    description: 'counts of completions and entries kept on every write, for the aggregates; counted now for the rows already stored',
    sql: `
-- Per log (its table's name) and group (the value of its grouping field, an
-- agent's name; '' for records in no group): how many records, the event id
-- of the newest, the earliest time (compared as text: estate writes times
-- as toISOString() gives them).
CREATE TABLE tally_groups (
  log text NOT NULL,
  grp text NOT NULL,
  count bigint NOT NULL,
  newest bigint NOT NULL,
  earliest text COLLATE "C",
  PRIMARY KEY (log, grp)
);
-- Per group, the distinct values of another field (the boards an agent worked on).
CREATE TABLE tally_distinct (
  log text NOT NULL,
  grp text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (log, grp, value)
);
-- How many records of a group have a time that begins with \`bucket\`, its
-- first \`width\` characters: 10 (the day), 13 (the hour), 16 (the minute)
-- or 19 (the second). A count since any instant adds up a few buckets of
-- each width and the records of one second (postgres-tally.ts).
CREATE TABLE tally_buckets (
  log text NOT NULL,
  width smallint NOT NULL,
  bucket text COLLATE "C" NOT NULL,
  grp text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (log, width, bucket, grp)
);
-- The records of one second, found by their time.
CREATE INDEX completions_time ON completions (((record->>'completed_at') COLLATE "C"));
CREATE INDEX entries_time ON entries (((record->>'registered_at') COLLATE "C"));

-- The statement that counts the rows of \`source\` (a table, or a trigger's
-- transition table) into the tally tables. A field's value counts only when
-- it is a non-empty JSON string, as the data dir's index counts it. With
-- \`fresh\` (tables that hold nothing of the log yet) it adds rows without
-- looking for rows to update: much faster over a whole table.
CREATE FUNCTION tally_statement(log text, source text, time_field text, by_field text, distinct_field text, fresh boolean) RETURNS text
LANGUAGE sql IMMUTABLE AS $f$
SELECT format($s$
WITH r AS (
  SELECT event_id,
    CASE WHEN %3$L <> '' AND jsonb_typeof(record->%3$L) = 'string' THEN record->>%3$L ELSE '' END AS grp,
    CASE WHEN %4$L <> '' AND jsonb_typeof(record->%4$L) = 'string' THEN record->>%4$L ELSE '' END AS other,
    CASE WHEN jsonb_typeof(record->%2$L) = 'string' THEN (record->>%2$L) COLLATE "C" END AS at
  FROM %5$I
), groups AS (
  INSERT INTO tally_groups AS t (log, grp, count, newest, earliest)
  SELECT %1$L, grp, count(*), max(event_id), min(at) FROM r GROUP BY grp
  %6$s
), distincts AS (
  INSERT INTO tally_distinct (log, grp, value)
  SELECT DISTINCT %1$L, grp, other FROM r WHERE grp <> '' AND other <> ''
  %7$s
)
INSERT INTO tally_buckets AS t (log, width, bucket, grp, count)
SELECT %1$L, w.width, left(r.at, w.width), r.grp, count(*)
FROM r CROSS JOIN (VALUES (10), (13), (16), (19)) AS w (width)
WHERE r.at IS NOT NULL
GROUP BY 2, 3, 4
%8$s
$s$, log, time_field, by_field, distinct_field, source,
  CASE WHEN NOT fresh THEN 'ON CONFLICT (log, grp) DO UPDATE SET count = t.count + excluded.count, newest = greatest(t.newest, excluded.newest), earliest = least(t.earliest, excluded.earliest)' ELSE '' END,
  CASE WHEN NOT fresh THEN 'ON CONFLICT DO NOTHING' ELSE '' END,
  CASE WHEN NOT fresh THEN 'ON CONFLICT (log, width, bucket, grp) DO UPDATE SET count = t.count + excluded.count' ELSE '' END)
$f$;

-- After each INSERT statement on a log, in its transaction (writers hold the
-- log's lock there): its new rows counted. Arguments: the log, its time
-- field, its grouping field and the field whose distinct values each group
-- keeps ('' for none).
CREATE FUNCTION tally_inserted() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE tally_statement(TG_ARGV[0], 'inserted', TG_ARGV[1], TG_ARGV[2], TG_ARGV[3], false);
  RETURN NULL;
END
$f$;

CREATE TRIGGER completions_tally AFTER INSERT ON completions REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION tally_inserted('completions', 'completed_at', 'assignee', 'board');
CREATE TRIGGER entries_tally AFTER INSERT ON entries REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION tally_inserted('entries', 'registered_at', '', '');

-- The rows stored before this version, counted once (the migration holds
-- the logs' tables locked, so no write runs between the count and the trigger).
LOCK TABLE completions, entries IN SHARE ROW EXCLUSIVE MODE;
SET LOCAL work_mem = '64MB';
DO $d$ BEGIN
  EXECUTE tally_statement('completions', 'completions', 'completed_at', 'assignee', 'board', true);
  EXECUTE tally_statement('entries', 'entries', 'registered_at', '', '', true);
END $d$;
`,
  },
  {
    version: 3,
    description: 'the series (trend points, disk snapshots, pulse entries), their nodes and the heartbeat',
    sql: `
CREATE TABLE series_trends (
  seq bigserial PRIMARY KEY,
  node text,
  ts text,
  record json NOT NULL,
  UNIQUE (node, ts)
);
CREATE INDEX series_trends_node ON series_trends (node, seq);
-- Records without a key, found by their text (a store copy stores each once).
CREATE INDEX series_trends_unkeyed ON series_trends (md5(record::text)) WHERE node IS NULL OR ts IS NULL;

CREATE TABLE series_disk (
  seq bigserial PRIMARY KEY,
  node text,
  ts text,
  mount text,
  record json NOT NULL,
  UNIQUE (node, ts, mount)
);
CREATE INDEX series_disk_node ON series_disk (node, seq);
CREATE INDEX series_disk_node_mount ON series_disk (node, mount, seq);
CREATE INDEX series_disk_mount ON series_disk (mount, seq);
CREATE INDEX series_disk_unkeyed ON series_disk (md5(record::text)) WHERE node IS NULL OR ts IS NULL OR mount IS NULL;

CREATE TABLE series_pulse (
  seq bigserial PRIMARY KEY,
  node text,
  ts text,
  record json NOT NULL,
  UNIQUE (node, ts)
);
CREATE INDEX series_pulse_node ON series_pulse (node, seq);
CREATE INDEX series_pulse_unkeyed ON series_pulse (md5(record::text)) WHERE node IS NULL OR ts IS NULL;

CREATE TABLE series_nodes (
  node text PRIMARY KEY
);

-- After each INSERT statement on a series, in its transaction: its nodes
-- (in one order, so concurrent writers of new nodes wait, never deadlock).
CREATE FUNCTION series_nodes_seen() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  INSERT INTO series_nodes (node) SELECT DISTINCT node FROM inserted WHERE node IS NOT NULL ORDER BY node ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$f$;
CREATE TRIGGER series_trends_nodes AFTER INSERT ON series_trends REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION series_nodes_seen();
CREATE TRIGGER series_disk_nodes AFTER INSERT ON series_disk REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION series_nodes_seen();
CREATE TRIGGER series_pulse_nodes AFTER INSERT ON series_pulse REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION series_nodes_seen();

CREATE TABLE series_heartbeat (
  id smallint PRIMARY KEY CHECK (id = 1),
  data json NOT NULL,
  modified_at timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 4,
    description: 'an index on the series rows\' time, for retention (estate prune, collect.retention)',
    sql: `
-- The instant of an RFC 3339 date-time (a date, T, a time to the second, any
-- fraction, Z or an offset); NULL for anything else, a 30 February included.
-- With its offset given, the text names one instant whatever the session's
-- time zone: the function is immutable, and can be indexed.
CREATE FUNCTION series_ts_time(ts text) RETURNS timestamptz LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
BEGIN
  IF ts IS NULL OR ts !~ '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})$' THEN
    RETURN NULL;
  END IF;
  RETURN ts::timestamptz;
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$f$;
CREATE INDEX series_trends_time ON series_trends (series_ts_time(ts));
CREATE INDEX series_disk_time ON series_disk (series_ts_time(ts));
CREATE INDEX series_pulse_time ON series_pulse (series_ts_time(ts));
`,
  },
  {
    version: 5,
    description: 'rollups of the trend points and disk snapshots (1-minute and 1-hour buckets) for the range routes, counted now for the rows already stored',
    sql: `
-- A JSON number as a double, NULL when a double cannot hold it (1e999, 1e-400).
CREATE FUNCTION series_measure(value json) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT CASE WHEN json_typeof(value) = 'number' AND abs(value::text::numeric) < 1e308 AND (value::text::numeric = 0 OR abs(value::text::numeric) > 1e-307)
    THEN value::text::numeric::float8 END
$f$;

-- One row per series, tier, bucket, group (node, and mount for disk; '' when
-- a record has none) and numeric field: the samples that hold the field, their
-- sum, min and max. The field '' counts every sample of the bucket.
CREATE TABLE series_rollups (
  series text NOT NULL,
  tier text NOT NULL,
  bucket timestamptz NOT NULL,
  node text NOT NULL,
  mount text NOT NULL,
  field text NOT NULL,
  n bigint NOT NULL,
  sum float8 NOT NULL,
  min float8 NOT NULL,
  max float8 NOT NULL,
  PRIMARY KEY (series, tier, bucket, node, mount, field)
);
CREATE INDEX series_rollups_node ON series_rollups (series, tier, node, bucket);

-- The rollup rows of some records of a series (rows of node, ts, record):
-- what the trigger and a rebuild add.
CREATE FUNCTION series_rollup_rows(series text, node text, ts text, record json)
RETURNS TABLE (tier text, bucket timestamptz, node text, mount text, field text, value float8)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT t.tier, to_timestamp(floor(extract(epoch FROM series_ts_time(ts)) / t.width) * t.width),
    coalesce(node, ''),
    CASE WHEN series = 'disk' AND json_typeof(record->'mount') = 'string' THEN record->>'mount' ELSE '' END,
    v.field, v.value
  FROM (VALUES ('1m', 60), ('1h', 3600)) AS t(tier, width)
  CROSS JOIN LATERAL (
    SELECT '' AS field, 0::float8 AS value
    UNION ALL
    SELECT e.key, series_measure(e.value) FROM json_each(record) e WHERE series_measure(e.value) IS NOT NULL
  ) v
  WHERE series_ts_time(ts) IS NOT NULL
$f$;

-- After each INSERT statement on trends or disk, in its transaction: the
-- rollups of its rows, summed per bucket first, merged in (in one order, so
-- concurrent writers wait, never deadlock).
CREATE FUNCTION series_rollups_add() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  INSERT INTO series_rollups AS r (series, tier, bucket, node, mount, field, n, sum, min, max)
  SELECT TG_ARGV[0], x.tier, x.bucket, x.node, x.mount, x.field, count(*), sum(x.value), min(x.value), max(x.value)
  FROM inserted i CROSS JOIN LATERAL series_rollup_rows(TG_ARGV[0], i.node, i.ts, i.record) x
  GROUP BY x.tier, x.bucket, x.node, x.mount, x.field
  ORDER BY x.tier, x.bucket, x.node, x.mount, x.field
  ON CONFLICT (series, tier, bucket, node, mount, field) DO UPDATE
    SET n = r.n + excluded.n, sum = r.sum + excluded.sum, min = least(r.min, excluded.min), max = greatest(r.max, excluded.max);
  RETURN NULL;
END
$f$;
CREATE TRIGGER series_trends_rollups AFTER INSERT ON series_trends REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION series_rollups_add('trends');
CREATE TRIGGER series_disk_rollups AFTER INSERT ON series_disk REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION series_rollups_add('disk');

-- The rows stored before this version, counted once (writes wait meanwhile).
INSERT INTO series_rollups (series, tier, bucket, node, mount, field, n, sum, min, max)
SELECT 'trends', x.tier, x.bucket, x.node, x.mount, x.field, count(*), sum(x.value), min(x.value), max(x.value)
FROM series_trends s CROSS JOIN LATERAL series_rollup_rows('trends', s.node, s.ts, s.record) x
GROUP BY x.tier, x.bucket, x.node, x.mount, x.field;
INSERT INTO series_rollups (series, tier, bucket, node, mount, field, n, sum, min, max)
SELECT 'disk', x.tier, x.bucket, x.node, x.mount, x.field, count(*), sum(x.value), min(x.value), max(x.value)
FROM series_disk s CROSS JOIN LATERAL series_rollup_rows('disk', s.node, s.ts, s.record) x
GROUP BY x.tier, x.bucket, x.node, x.mount, x.field;
`,
  },
  {
    version: 6,
    description: 'the starts of runs (POST /work/start), once per board and task_id',
    sql: `
CREATE TABLE work_starts (
  event_id bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  board text NOT NULL,
  task_id text NOT NULL,
  record jsonb NOT NULL,
  UNIQUE (board, task_id)
);
CREATE INDEX work_starts_board ON work_starts (board, event_id);
`,
  },
  {
    version: 7,
    description: 'provider probes (provider_down, provider_recovered)',
    sql: `
CREATE TABLE provider_probes (
  seq bigserial PRIMARY KEY,
  provider text NOT NULL,
  ts text NOT NULL,
  record json NOT NULL,
  UNIQUE (provider, ts)
);
CREATE INDEX provider_probes_provider ON provider_probes (provider, seq);
`,
  },
  {
    version: 8,
    description: 'the webhook outbox: deliveries of events to notify targets, leased to one replica at a time',
    sql: `
CREATE TABLE notify_targets (
  target text PRIMARY KEY,
  since timestamptz NOT NULL
);
CREATE TABLE notify_deliveries (
  seq bigserial UNIQUE,
  id text PRIMARY KEY,
  target text NOT NULL,
  type text NOT NULL,
  subject text NOT NULL,
  event_ts text NOT NULL,
  body text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempt_count integer NOT NULL DEFAULT 0,
  attempts jsonb NOT NULL DEFAULT '[]',
  next_at timestamptz,
  delivered_at timestamptz,
  lease_owner text,
  lease_until timestamptz
);
CREATE INDEX notify_deliveries_due ON notify_deliveries (next_at) WHERE status = 'pending';
CREATE INDEX notify_deliveries_target ON notify_deliveries (target, seq);
CREATE INDEX notify_deliveries_finished ON notify_deliveries (created_at) WHERE status <> 'pending';
`,
  },
  {
    version: 9,
    description: 'the watched events (node_stale, schedule_*, pulse_*, provider_*), stored once when they happen',
    sql: `
CREATE TABLE watched_events (
  event_id bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  kind text NOT NULL,
  occurrence text NOT NULL,
  subject text NOT NULL,
  record jsonb NOT NULL,
  UNIQUE (kind, occurrence)
);
CREATE INDEX watched_events_subject ON watched_events (subject, event_id);
`,
  },
];

/** The schema version this build of estate needs: the last migration's. */
export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
