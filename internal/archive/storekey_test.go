package archive

import (
	"path/filepath"
	"testing"
)

// TestStoresSharingADirectory: two stores in one directory (Goose's
// sessions.db and its older session files) are told apart by name, not
// by directory: the files of twasm's own storage found in one store are
// taken from that store's count only (keyed by directory, both stores
// lost the skipped files of each, and doctor gave one store's database
// sessions to the other).
func TestStoresSharingADirectory(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "twasm")
	db := &Location{Name: "Goose", Kind: "sqlite", Dir: dir}
	files := &Location{Name: "Goose session files", Dir: dir}
	stores := []StoreReport{{Location: *db, Found: true, Sessions: 1}, {Location: *files, Found: true, Sessions: 3}}
	sessions := []Session{
		{Loc: db, Path: filepath.Join(dir, "sessions.db")},
		{Loc: files, Path: filepath.Join(dir, "a.jsonl")},
		{Loc: files, Path: filepath.Join(own, "b.jsonl")},
		{Loc: files, Path: filepath.Join(own, "c.jsonl")},
	}
	kept := WithoutStorage(own, stores, sessions)
	if len(kept) != 2 {
		t.Fatalf("kept %d sessions, want 2", len(kept))
	}
	if stores[0].Sessions != 1 || len(stores[0].Problems) != 0 {
		t.Errorf("the database's store: %d sessions, problems %q; want 1, none", stores[0].Sessions, stores[0].Problems)
	}
	if stores[1].Sessions != 1 || len(stores[1].Problems) != 1 {
		t.Errorf("the files' store: %d sessions, problems %q; want 1 and the skipped files named", stores[1].Sessions, stores[1].Problems)
	}
}
