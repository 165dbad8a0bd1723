//go:build !wasip1

package cursor

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/twasm/twasm/internal/testing/benchtest"
)

// workspaceDB writes an older Cursor's workspace database holding n
// composers (every third without its conversation, a newer Cursor's
// index) and n/2 chat tabs (every third without bubbles), each with a
// few bubbles, and returns it open. Each element has its id as its first
// member, as Cursor writes them; with mixed, every other one has it
// last, and every fourth composer holds a reference to the one two
// after it ({"composerId": ...} alone, earlier in the document than that
// composer).
func workspaceDB(t testing.TB, n int, mixed bool) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "state.vscdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	text := strings.Repeat(`some words of a conversation, \"quoted\" é `, 12)
	bubbles := func(id string, k int, tab bool) string {
		var bs []string
		for j := 0; j < k; j++ {
			if tab {
				bs = append(bs, fmt.Sprintf(`{"type":"%s","id":"%s-%d","text":"%s","modelType":"claude-3.5-sonnet"}`, map[bool]string{true: "user", false: "ai"}[j%2 == 0], id, j, text))
			} else {
				bs = append(bs, fmt.Sprintf(`{"type":%d,"bubbleId":"%s-%d","text":"%s","relevantFiles":[],"context":{"notepads":[]}}`, 1+j%2, id, j, text))
			}
		}
		return strings.Join(bs, ",")
	}
	var cs, tabs []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("c%06d", i)
		if i%3 == 2 {
			cs = append(cs, `{"composerId":"`+id+`","name":"an index","lastUpdatedAt":1731799000000,"createdAt":1731799000000}`)
			continue
		}
		c := fmt.Sprintf(`{"composerId":"%s","status":"completed","richText":"","conversation":[%s],"createdAt":%d,"capabilities":[]}`, id, bubbles(id, 6, false), 1731798728424+i)
		if mixed && i%2 == 1 {
			c = fmt.Sprintf(`{"status":"completed","richText":"","conversation":[%s],"createdAt":%d,"capabilities":[],"composerId":"%s"}`, bubbles(id, 6, false), 1731798728424+i, id)
		}
		if mixed && i%4 == 0 {
			c = strings.TrimSuffix(c, "}") + fmt.Sprintf(`,"context":{"composers":[{"composerId":"c%06d"}]}}`, i+2)
		}
		cs = append(cs, c)
	}
	for i := 0; i < n/2; i++ {
		id := fmt.Sprintf("t%06d", i)
		b := bubbles(id, 4, true)
		if i%3 == 2 {
			b = ""
		}
		tab := fmt.Sprintf(`{"tabId":"%s","chatTitle":"a title","lastSendTime":%d,"bubbles":[%s]}`, id, 1731814419726+i, b)
		if mixed && i%2 == 1 {
			tab = fmt.Sprintf(`{"chatTitle":"a title","lastSendTime":%d,"bubbles":[%s],"tabId":"%s"}`, 1731814419726+i, b, id)
		}
		tabs = append(tabs, tab)
	}
	for _, s := range []string{
		`CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`,
		`INSERT INTO ItemTable VALUES ('composer.composerData', '{"allComposers":[` + strings.Join(cs, ",") + `],"selectedComposerId":"","composerDataVersion":0}')`,
		`INSERT INTO ItemTable VALUES ('workbench.panel.aichat.view.aichat.chatdata', '{"tabs":[` + strings.Join(tabs, ",") + `],"selectedTabId":""}')`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// rowsOf runs a table's query for one session, each row as text.
func rowsOf(t testing.TB, db *sql.DB, query, session string) []string {
	t.Helper()
	r, err := db.Query(query, sql.Named("session", session), sql.Named("since", 0))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for r.Next() {
		var id, version, at, value any
		if err := r.Scan(&id, &version, &at, &value); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v|%v|%v|%s", id, version, at, value))
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// byScan is a table's query as it was before workspaceItem: every
// element of the document made text and parsed, the session's picked.
func byScan(table string) string {
	if table == "composer" {
		return workspaceItems + `SELECT id, length(v) AS version, CAST(json_extract(v, '$.createdAt') AS INTEGER) AS created_ms, v AS value FROM c WHERE id = :session`
	}
	return workspaceItems + `SELECT id, length(v) AS version, CAST(json_extract(v, '$.lastSendTime') AS INTEGER) AS time_ms, v AS value FROM tab WHERE id = :session`
}

// TestWorkspaceItemSameRows: for every session the workspace store
// lists, and for the elements it does not (a composer without its
// conversation, a tab without bubbles, an id no element has), each
// table's query gives the rows the scan of the whole document gives,
// byte for byte, whether the element is found by its text (its id
// first) or not (its id last; a reference to it earlier in the
// document): the raw captures of runs archived before stay those a
// later sync extends.
func TestWorkspaceItemSameRows(t *testing.T) {
	db := workspaceDB(t, 60, true)
	r, err := db.Query(WorkspaceQueries.Sessions)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for r.Next() {
		var k string
		var c int64
		if err := r.Scan(&k, &c); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	r.Close()
	if len(keys) != 40+20 {
		t.Fatalf("%d sessions listed, want 40 composers and 20 tabs", len(keys))
	}
	keys = append(keys, "c000002", "t000002", "nobody")
	for _, tb := range WorkspaceQueries.Tables {
		found := 0
		for _, k := range keys {
			got, want := rowsOf(t, db, tb.Query, k), rowsOf(t, db, byScan(tb.Table), k)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s %s: rows differ:\n%.300q\nwant\n%.300q", tb.Table, k, got, want)
			}
			found += len(got)
		}
		if want := map[string]int{"composer": 40, "chattab": 20}[tb.Table]; found != want {
			t.Errorf("%s: %d rows, want %d", tb.Table, found, want)
		}
	}
	// Both ways were taken: the element found by its text (its id first,
	// no reference before it), and the document's parse.
	near := 0
	for _, k := range keys {
		var n int
		q := workspaceItem("composer.composerData", "allComposers", "composerId", composerHolds) + `SELECT count(*) FROM near WHERE ` + composerHolds
		if err := db.QueryRow(q, sql.Named("session", k)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		near += n
	}
	// Of the 60 composers, 40 hold a conversation: some are found by
	// their text, the others (their id last, the next element's id last,
	// a reference to them before) by the document's parse.
	if near == 0 || near >= 40 {
		t.Errorf("%d of the 40 composers found by their text: want both ways taken", near)
	}
}

// BenchmarkWorkspaceSession reads every composer of a workspace document
// of 400 composers (written as Cursor writes them) one session at a
// time, as a sync does, with the store's query and with the scan of the
// whole document it replaced: CPU per session (this process's).
func BenchmarkWorkspaceSession(b *testing.B) {
	db := workspaceDB(b, 400, false)
	for _, q := range []struct{ name, query string }{{"store", WorkspaceQueries.Tables[0].Query}, {"scan", byScan("composer")}} {
		b.Run(q.name, func(b *testing.B) {
			var cpu time.Duration
			sessions := 0
			for i := 0; i < b.N; i++ {
				start := benchtest.CPUTime()
				for c := 0; c < 400; c++ {
					if c%3 != 2 {
						rowsOf(b, db, q.query, fmt.Sprintf("c%06d", c))
						sessions++
					}
				}
				cpu += benchtest.CPUTime() - start
			}
			b.ReportMetric(cpu.Seconds()*1e3/float64(sessions), "cpu-ms/session")
		})
	}
}
