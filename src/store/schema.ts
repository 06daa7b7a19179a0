// Row types of every table, as Kysely sees them. Times are ISO 8601 UTC text
// (fixed width, so they order and compare the same in SQLite and PostgreSQL);
// booleans are 0/1 integers and JSON is text, for the same reason.

export interface DevelopersTable {
  id: string;
  email: string;
  password_hash: string;
  plan: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  developer_id: string;
  mode: 'live' | 'test';
  key_hash: string;
  prefix: string;
  created_at: string;
}

export interface SessionsTable {
  id: string;
  developer_id: string;
  token_hash: string;
  expires_at: string;
  created_at: string;
}

export interface UsageCountersTable {
  developer_id: string;
  period_start: string;
  live_pauses: number;
}

export interface Database {
  developers: DevelopersTable;
  api_keys: ApiKeysTable;
  sessions: SessionsTable;
  usage_counters: UsageCountersTable;
}
