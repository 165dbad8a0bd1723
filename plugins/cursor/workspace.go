package cursor

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// workspaceRoots are the candidates for the directory of the IDE's
// per-workspace databases, workspaceStorage/<hash>/state.vscdb, beside
// globalStorage (ideRoots).
var workspaceRoots = []abi.Root{
	{Env: "XDG_CONFIG_HOME", Path: "Cursor/User/workspaceStorage", OS: "linux"},
	{Path: "~/.config/Cursor/User/workspaceStorage", OS: "linux"},
	{Path: "~/Library/Application Support/Cursor/User/workspaceStorage", OS: "darwin"},
	{Env: "APPDATA", Path: "Cursor/User/workspaceStorage", OS: "windows"},
}

// workspaceItems is the two ItemTable values an older Cursor (2024 to
// early 2025) kept its conversations in, each as one JSON document of a
// workspace's state.vscdb.
const workspaceItems = `WITH t AS MATERIALIZED (
  SELECT key AS k, CAST(value AS TEXT) AS v FROM ItemTable
  WHERE key IN ('composer.composerData', 'workbench.panel.aichat.view.aichat.chatdata')
    AND value IS NOT NULL AND json_valid(CAST(value AS TEXT))
), c AS (
  SELECT json_extract(j.value, '$.composerId') AS id, j.value AS v FROM t, json_each(t.v, '$.allComposers') AS j
  WHERE t.k = 'composer.composerData' AND json_type(t.v, '$.allComposers') = 'array'
    AND json_type(j.value, '$.composerId') = 'text'
    AND json_type(j.value, '$.conversation') = 'array' AND json_array_length(j.value, '$.conversation') > 0
), tab AS (
  SELECT json_extract(j.value, '$.tabId') AS id, j.value AS v FROM t, json_each(t.v, '$.tabs') AS j
  WHERE t.k = 'workbench.panel.aichat.view.aichat.chatdata' AND json_type(t.v, '$.tabs') = 'array'
    AND json_type(j.value, '$.tabId') = 'text'
    AND json_type(j.value, '$.bubbles') = 'array' AND json_array_length(j.value, '$.bubbles') > 0
)
`

// workspaceItem is one session's element of an older Cursor's workspace
// document (key: its ItemTable key, array: its array member, id: the
// element's id member, cond: what makes an element a session, on v), as
// the rows "v" of the table "c", read for each session (:session). The
// host asks a session's rows one session at a time, and the scan of
// the whole document (workspaceItems: every element made text and
// parsed again for every member asked) for each made a workspace of N
// composers cost N parses of a document of N composers. Now:
//
//   - near: the element is found in the document's bytes by its text,
//     '{"<id>":"<session>"' (as Cursor writes it: the id its first
//     member, no spaces), up to where the next element begins
//     (',{"<id>":', which no JSON string holds unescaped), and parsed
//     alone; it is taken when that is valid JSON, its id is the
//     session's, and it is a session (cond). The document is searched,
//     not parsed.
//   - otherwise (another layout, the last element, a first match that
//     is not the element): the document is turned into JSONB once, each
//     element a slice of it, and the one whose id is the session's made
//     text.
//
// Either way the row's value is the element as the document's parse
// makes it (json(): minified), the same text and rows as workspaceItems
// gives (TestWorkspaceItemSameRows), so the runs archived before are
// extended alike. Each session still reads the whole document
// (quadratic in the composers, with a smaller factor: 1.7 against 6.5
// CPU-ms a session over 400 composers, BenchmarkWorkspaceSession);
// reading a document's sessions in one query needs the host to.
func workspaceItem(key, array, id, cond string) string {
	return `WITH at AS MATERIALIZED (
  SELECT substr(b, i) AS rest FROM (
    SELECT b, instr(b, CAST('{"` + id + `":' || json_quote(:session) AS BLOB)) AS i FROM (
      SELECT CAST(value AS BLOB) AS b FROM ItemTable WHERE key = '` + key + `' AND value IS NOT NULL))
  WHERE i > 0
), el AS MATERIALIZED (
  SELECT CAST(substr(rest, 1, instr(rest, CAST(',{"` + id + `":' AS BLOB)) - 1) AS TEXT) AS e FROM at
), near AS MATERIALIZED (
  SELECT json(e) AS v FROM el
  WHERE e != '' AND CASE WHEN json_valid(e) THEN json_extract(e, '$.` + id + `') = :session END
), t AS MATERIALIZED (
  SELECT jsonb(CAST(value AS TEXT)) AS b FROM ItemTable
  WHERE key = '` + key + `' AND value IS NOT NULL
    AND CASE WHEN EXISTS (SELECT 1 FROM near WHERE ` + cond + `) THEN 0 ELSE json_valid(CAST(value AS TEXT)) END
), c AS (
  SELECT v FROM near WHERE ` + cond + `
  UNION ALL
  SELECT json(j.value) AS v FROM t, jsonb_each(t.b, '$.` + array + `') AS j
  WHERE json_type(t.b, '$.` + array + `') = 'array' AND j.value ->> '$.` + id + `' = :session
)
`
}

// composerHolds and tabHolds are what makes an element of an older
// Cursor's workspace document a session (on v): a composer holding its
// conversation, a tab holding bubbles.
const (
	composerHolds = `json_type(v, '$.conversation') = 'array' AND json_array_length(v, '$.conversation') > 0`
	tabHolds      = `json_type(v, '$.bubbles') = 'array' AND json_array_length(v, '$.bubbles') > 0`
)

// WorkspaceQueries are what the host reads of an older Cursor's
// workspace database (workspaceStorage/<hash>/state.vscdb, table
// ItemTable): each composer of composer.composerData's allComposers
// that holds its conversation inline (conversation[], the bubbles) is a
// session keyed by its composerId, read as the table "composer" (the
// global database's composer rows, whose inline bubbles the plugin
// reads alike), and each chat tab of
// workbench.panel.aichat.view.aichat.chatdata (tabs[], its bubbles
// inline) a session keyed by its tabId, the table "chattab". A composer
// that holds no conversation inline (a newer Cursor's index of the
// composers it keeps in the global database) is not listed: that
// database's store archives it. The documents have no time of change: a
// session's cursor is its lastUpdatedAt (a tab's lastSendTime, else the
// composer's createdAt) times 1000 plus its length modulo 1000; a session
// whose cursor moved is read whole again and the plugin ignores a row it
// read unchanged. The workspace.json beside the database names the
// workspace (Related "workspace", on the database itself).
var WorkspaceQueries = &abi.SQLiteSource{
	Sessions: workspaceItems + `SELECT id AS key,
  coalesce(CAST(json_extract(v, '$.lastUpdatedAt') AS INTEGER), CAST(json_extract(v, '$.createdAt') AS INTEGER), 0) * 1000 + length(v) % 1000 AS cursor
FROM c
UNION ALL
SELECT id AS key, coalesce(CAST(json_extract(v, '$.lastSendTime') AS INTEGER), 0) * 1000 + length(v) % 1000 AS cursor
FROM tab
ORDER BY cursor, key`,
	Tables: []abi.SQLiteTable{
		{Table: "composer", Key: "id", Version: "version", Time: "created_ms", JSON: []string{"value"},
			Query: workspaceItem("composer.composerData", "allComposers", "composerId", composerHolds) + `SELECT :session AS id, length(v) AS version, CAST(json_extract(v, '$.createdAt') AS INTEGER) AS created_ms, v AS value
FROM c WHERE ` + composerHolds},
		{Table: "chattab", Key: "id", Version: "version", Time: "time_ms", JSON: []string{"value"},
			Query: workspaceItem("workbench.panel.aichat.view.aichat.chatdata", "tabs", "tabId", tabHolds) + `SELECT :session AS id, length(v) AS version, CAST(json_extract(v, '$.lastSendTime') AS INTEGER) AS time_ms, v AS value
FROM c WHERE ` + tabHolds},
	},
	// workspace.json beside the database names the workspace: the
	// database's own sessions, each with that file.
	Related: []abi.SQLiteRelated{{
		Table: "workspace", Glob: "state.vscdb", Key: "composer", File: "workspace.json",
		Query: workspaceItems + `SELECT id AS composer FROM c UNION ALL SELECT id AS composer FROM tab`,
	}},
}

// chatTab handles a chat tab of an older Cursor's workspace database:
// one conversation, its bubbles inline ({"type": "user"|"ai", "id",
// "text", an answer's "rawText" and "modelType", its model: the latest
// answer's is the run's). The tab states no time but its lastSendTime
// (the row's time); its bubbles none.
func (n *normalizer) chatTab(id string, t abi.Value, out *sdk.Out) {
	out.Meta(sessionMeta(id, t, "tabId"))
	it := t.Get("bubbles").Iter()
	for it.Next() {
		b := it.Value()
		if b.Get("type").Is("ai") {
			// Each answer names its model: the latest is the run's.
			out.LatestModel(b.Get("modelType"), &n.tabModel)
		}
		n.bubble(b.Get("id").String(), b, out)
	}
}
