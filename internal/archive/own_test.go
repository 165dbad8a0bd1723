package archive

import (
	"os"
	"path/filepath"
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
