package index

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/testing/viewstest"
)

// otherDatabase makes a SQLite database of something else, in rollback
// journal mode (header bytes 18 and 19 are 1; WAL would make them 2).
func otherDatabase(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	_, err = db.Exec(`PRAGMA journal_mode=DELETE; CREATE TABLE accounts(name TEXT, balance INTEGER); INSERT INTO accounts VALUES('alice', 100)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
}

// TestOpenNeverWritesThroughLinks: an index.db (or its -wal, -shm or -journal)
// that is a link to another file, symbolic or hard, is found not to be
// the index before anything is written: the other database is left
// byte for byte as it was (its journal mode included), no WAL appears
// beside it, and the index is made anew as a regular file, saying why.
// Before the fix SQLite set the journal mode to WAL through the link
// before the schema check found the database foreign.
func TestOpenNeverWritesThroughLinks(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, why string
		link      func(t *testing.T, other, root string)
	}{
		{"symbolic link", "symbolic link", func(t *testing.T, other, root string) {
			require.NoError(t, os.Symlink(other, File(root)))
		}},
		{"hard link", "hard links", func(t *testing.T, other, root string) {
			require.NoError(t, os.Link(other, File(root)))
		}},
		{"wal a symbolic link", "index.db-wal was a symbolic link", func(t *testing.T, other, root string) {
			require.NoError(t, os.Symlink(other, File(root)+"-wal"))
		}},
		{"journal a symbolic link", "index.db-journal was a symbolic link", func(t *testing.T, other, root string) {
			require.NoError(t, os.Symlink(other, File(root)+"-journal"))
		}},
		{"journal a hard link", "index.db-journal had 2 hard links", func(t *testing.T, other, root string) {
			require.NoError(t, os.Link(other, File(root)+"-journal"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, elsewhere := t.TempDir(), t.TempDir()
			viewstest.WriteStore(t, root)
			other := filepath.Join(elsewhere, "accounts.db")
			otherDatabase(t, other)
			before, err := os.ReadFile(other)
			require.NoError(t, err)
			require.Equal(t, []byte{1, 1}, before[18:20], "rollback journal mode")
			tc.link(t, other, root)

			ix, why, err := Open(ctx, root)
			require.NoError(t, err)
			defer ix.Close()
			assert.Contains(t, why, tc.why)
			st, err := ix.Update(ctx)
			require.NoError(t, err)
			assert.Equal(t, 2, st.Indexed)

			after, err := os.ReadFile(other)
			require.NoError(t, err)
			assert.Equal(t, before, after, "the other database is unchanged")
			for _, suffix := range []string{"-wal", "-shm", "-journal"} {
				_, err := os.Lstat(other + suffix)
				assert.True(t, os.IsNotExist(err), "%s beside the other database: %v", suffix, err)
			}
			info, err := os.Lstat(File(root))
			require.NoError(t, err)
			assert.True(t, info.Mode().IsRegular(), "index.db is a file of its own: %v", info.Mode())
		})
	}
}
