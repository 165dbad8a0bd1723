package archive

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/plugins/goose"
)

// TestGooseQueriesEverySchema: Goose migrates sessions.db only when it
// opens it, so a database an older Goose last wrote keeps an older
// schema. The goose plugin's queries read schema v5 (block/goose 0164300:
// no messages.message_id, no sessions.parent_session_id) and today's
// (plugins/goose/testdata/schema.sql): each session is listed, with its
// parent where the schema has one, and its messages are keyed by
// message_id where the row has one, else by row id.
func TestGooseQueriesEverySchema(t *testing.T) {
	tests := []struct {
		schema     string
		withIDs    bool   // the schema has message_id and parent_session_id
		wantParent string // the sub-agent session's parent
		wantKey    string // the first message's key
	}{
		{"schema_v5.sql", false, "", `"key":"row-1"`},
		{"schema.sql", true, "20251102_1", `"key":"msg_1"`},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			ddl, err := os.ReadFile(filepath.Join("..", "..", "plugins", "goose", "testdata", tt.schema))
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "sessions.db")
			db, err := sql.Open("sqlite", "file:"+path)
			require.NoError(t, err)
			exec := func(q string, args ...any) {
				t.Helper()
				_, err := db.Exec(q, args...)
				require.NoError(t, err, q)
			}
			exec(string(ddl))
			exec(`INSERT INTO sessions (id, description, working_dir, created_at, updated_at, accumulated_total_tokens) VALUES ('20251102_1', 'fix it', '/home/me/proj', '2025-11-02 10:00:00', '2025-11-02 10:00:05', 1200)`)
			exec(`INSERT INTO sessions (id, description, working_dir, created_at, updated_at) VALUES ('20251102_2', 'a task', '/home/me/proj', '2025-11-02 10:01:00', '2025-11-02 10:01:00')`)
			if tt.withIDs {
				exec(`UPDATE sessions SET parent_session_id = '20251102_1' WHERE id = '20251102_2'`)
				exec(`INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) VALUES ('msg_1', '20251102_1', 'user', '[{"type":"text","text":"Run the tests."}]', 1762077600)`)
			} else {
				exec(`INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('20251102_1', 'user', '[{"type":"text","text":"Run the tests."}]', 1762077600)`)
			}
			exec(`INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('20251102_1', 'assistant', '[{"type":"text","text":"They pass."}]', 1762077605)`)
			require.NoError(t, db.Close())

			ctx := context.Background()
			d, err := openSQLite(ctx, path, goose.Queries)
			require.NoError(t, err)
			defer d.Close()
			sessions, err := d.sessions(ctx, goose.Queries)
			require.NoError(t, err)
			require.Len(t, sessions, 2)
			assert.Equal(t, "20251102_1", sessions[0].Key)
			assert.Empty(t, sessions[0].Parent)
			assert.Equal(t, tt.wantParent, sessions[1].Parent)
			lines, n, _, _, err := d.rowsOf(ctx, goose.Queries, "20251102_1", 0)
			require.NoError(t, err)
			assert.Equal(t, 3, n, "the session row and its two messages")
			assert.Contains(t, string(lines), tt.wantKey)
			assert.Contains(t, string(lines), `"key":"row-2"`)
			assert.NotContains(t, string(lines), "message_id:1", "the NULL default is no column of the row")
			assert.Equal(t, 3, strings.Count(string(lines), "\n"))
		})
	}
}
