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
];

/** The schema version this build of estate needs: the last migration's. */
export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
