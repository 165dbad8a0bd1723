package archive

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOwnStorageThroughLinks: a path is in the storage whichever side a
// link is on (the storage root given through a link, a store reaching
// the storage through a link to it or to a directory above it), and a
// path beside the storage or not existing is not, each directory
// resolved once however many paths are asked (the cache is shared by a
// sync's workers).
func TestOwnStorageThroughLinks(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(base, "data", "twasm")
	require.NoError(t, os.MkdirAll(filepath.Join(real, "transcripts"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(base, "home", "store"), 0o700))
	require.NoError(t, os.Symlink(real, filepath.Join(base, "rootlink")))
	require.NoError(t, os.Symlink(filepath.Join(real, "transcripts"), filepath.Join(base, "home", "store", "t")))
	require.NoError(t, os.Symlink(filepath.Join(base, "data"), filepath.Join(base, "home", "data")))
	cases := []struct {
		root, path string
		in         bool
	}{
		{"data/twasm", "data/twasm/transcripts/r.jsonl", true},
		{"data/twasm", "rootlink/transcripts/r.jsonl", true},
		{"rootlink", "data/twasm/transcripts/r.jsonl", true},
		{"data/twasm", "home/store/t/r.jsonl", true},
		{"data/twasm", "home/data/twasm/transcripts/r.jsonl", true},
		{"data/twasm", "home/data/twasm/none/deeper/r.jsonl", true},
		{"rootlink", "home/store/t/r.jsonl", true},
		{"data/twasm", "home/store/s.jsonl", false},
		{"data/twasm", "data/twasm2/s.jsonl", false},
		{"data/twasm", "home/none/s.jsonl", false},
		{"data/twasm", "data/twasm", true},
		{"data/twasm", "home/data/twasm", true},
		{"rootlink", "home/data/twasm", true},
		{"data/twasm", "home/data/twasmx", false},
		{"data/twasm", "home/data", false},
	}
	for _, c := range cases {
		o := newOwnStorage(filepath.Join(base, c.root))
		for range 2 { // the second answer from the cache
			assert.Equal(t, c.in, o.contains(filepath.Join(base, c.path)), "%s in %s", c.path, c.root)
		}
	}
}

// TestUnderJoin: underJoin answers what under of the joined path does.
func TestUnderJoin(t *testing.T) {
	o := &ownStorage{roots: []string{"/s/twasm", "/real/twasm"}, below: []string{"/s/twasm/", "/real/twasm/"}}
	for _, dir := range []string{"/", "/s", "/s/twasm", "/s/twasm/t", "/s/twasmx", "/real", "/other", "/s/tw"} {
		for _, name := range []string{"twasm", "twasmx", "asm", "t", "r.jsonl", "", ".", "..", "/", "a/b"} {
			assert.Equal(t, o.under(filepath.Join(dir, name)), o.underJoin(dir, name), "%q %q", dir, name)
		}
	}
}

// TestOwnStorageHolds: for every file a store's walk finds, holds (one
// answer per store where the walk follows no link) says what contains
// says of the file, whether the store is beside the storage, holds it,
// is in it, or reaches it through a link to the store's directory or to
// a directory above it, with the storage root given as it is or through
// a link; and without keeps the same files.
func TestOwnStorageHolds(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(base, "home", "data", "twasm")
	for _, f := range []string{
		"home/data/twasm/transcripts/r1.jsonl", "home/data/twasm/raw/r1/x.jsonl",
		"home/store/s1.jsonl", "home/store/deeper/s2.jsonl", "home/s0.jsonl", "elsewhere/e.jsonl",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(base, f)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(base, f), []byte("{}\n"), 0o600))
	}
	require.NoError(t, os.Symlink(real, filepath.Join(base, "rootlink")))
	require.NoError(t, os.Symlink(filepath.Join(real, "transcripts"), filepath.Join(base, "tlink")))
	require.NoError(t, os.Symlink(filepath.Join(base, "home", "data"), filepath.Join(base, "datalink")))
	// A link below a store's directory is not followed by the walk.
	require.NoError(t, os.Symlink(real, filepath.Join(base, "home", "store", "in")))
	for _, root := range []string{"home/data/twasm", "rootlink"} {
		for _, c := range []struct {
			dir  string
			kind string
			own  int // files of the store in the storage
		}{
			{"home/store", KindFile, 0},
			{"elsewhere", KindFile, 0},
			{"home", KindFile, 2},
			{"home/data", KindFile, 2},
			{"home/data/twasm/transcripts", KindFile, 1},
			{"tlink", KindFile, 1},
			{"datalink", KindFile, 2},
			{"datalink/twasm", "sqlite", 2},
			{"home", KindSections, 2},
		} {
			loc := &Location{Provider: "claude", Kind: c.kind, Dir: filepath.Join(base, c.dir), Pattern: "**/*.jsonl", Match: jsonlFiles}
			sessions, _, err := Walk(loc)
			require.NoError(t, err, c.dir)
			require.NotEmpty(t, sessions, c.dir)
			o := newOwnStorage(filepath.Join(base, root))
			n := 0
			for i := range sessions {
				for range 2 { // the second answer from the cache
					assert.Equal(t, o.contains(sessions[i].Path), o.holds(&sessions[i]), "%s in %s (store %s)", sessions[i].Path, root, c.dir)
				}
				if o.holds(&sessions[i]) {
					n++
				}
			}
			assert.Equal(t, c.own, n, "store %s, root %s", c.dir, root)
			stores := []StoreReport{{Location: *loc, Sessions: len(sessions)}}
			kept := WithoutStorage(filepath.Join(base, root), stores, slices.Clone(sessions))
			assert.Len(t, kept, len(sessions)-c.own, "store %s, root %s", c.dir, root)
			assert.Equal(t, len(kept), stores[0].Sessions)
		}
	}
}
