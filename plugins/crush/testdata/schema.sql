-- Crush's crush.db as its migrations leave it (see schema.source.txt).
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  parent_session_id TEXT,
  title TEXT NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  cost REAL NOT NULL DEFAULT 0.0,
  updated_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  summary_message_id TEXT,
  todos TEXT
);
CREATE TABLE files (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  path TEXT NOT NULL,
  content TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE(path, session_id, version)
);
CREATE TABLE messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  role TEXT NOT NULL,
  parts TEXT NOT NULL DEFAULT '[]',
  model TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER,
  provider TEXT,
  is_summary_message INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_messages_session_id ON messages (session_id);
CREATE INDEX idx_messages_created_at ON messages (created_at);
CREATE TABLE read_files (
  session_id TEXT NOT NULL,
  path TEXT NOT NULL,
  read_at INTEGER NOT NULL,
  PRIMARY KEY (path, session_id)
);
CREATE TRIGGER update_session_message_count_on_insert AFTER INSERT ON messages
BEGIN
  UPDATE sessions SET message_count = message_count + 1 WHERE id = new.session_id;
END;
