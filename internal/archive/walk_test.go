package archive

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// walkDirFiles is what walkFiles lists, found with filepath.WalkDir and
// a stat of each file by its whole path (how walkFiles found them
// before it opened each directory relative to its parent).
func walkDirFiles(t *testing.T, loc *Location) []Session {
	var out []Session
	err := filepath.WalkDir(loc.Dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(loc.Dir, p)
		require.NoError(t, err)
		if !loc.Match(filepath.ToSlash(rel)) {
			return nil
		}
		info, err := d.Info()
		require.NoError(t, err)
		out = append(out, Session{Loc: loc, Path: p, Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	require.NoError(t, err)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// TestWalkFiles: a store's walk lists what filepath.WalkDir lists (the
// files its pattern matches, by path relative to the store, with their
// size and mtime), however deep, without following links, and a store
// whose directory is a link lists nothing, as WalkDir did.
func TestWalkFiles(t *testing.T) {
	re, err := globRegexp("**/*.jsonl")
	require.NoError(t, err)
	sub, err := subAgentRegexp("{stem}/subagents/**/agent-*.jsonl")
	require.NoError(t, err)
	deep := ""
	for i := range maxHeldDirs + 8 {
		deep = filepath.Join(deep, "d"+strings.Repeat("x", i%3))
	}
	// More entries than one read of a directory holds (readDir's buffer
	// is 8 KiB; each entry here takes 64 bytes of it), in two
	// directories.
	var many []string
	for i := range 400 {
		many = append(many, fmt.Sprintf("many/session-%04d-%s.jsonl", i, strings.Repeat("n", 20)), fmt.Sprintf("many/sub/s%d.jsonl", i))
	}
	cases := []struct {
		name  string
		files []string
		match func(string) bool
	}{
		{"more entries than one read", many, re.MatchString},
		{"flat and nested", []string{"s1.jsonl", "p1/s2.jsonl", "p1/notes.txt", "p2/q/r/s3.jsonl", "p2/.hidden.jsonl", "empty/"}, re.MatchString},
		{"deeper than the directories held open", []string{"top.jsonl", filepath.Join(deep, "s.jsonl"), filepath.Join(deep, "a", "s.jsonl")}, re.MatchString},
		{"a pattern on the relative path", []string{"s1.jsonl", "s1/subagents/agent-a.jsonl", "s1/subagents/x/agent-b.jsonl", "s1/other/agent-c.jsonl"}, sub.MatchString},
		{"nothing", nil, re.MatchString},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, f := range c.files {
				if strings.HasSuffix(f, "/") {
					require.NoError(t, os.MkdirAll(filepath.Join(dir, f), 0o700))
					continue
				}
				writeAged(t, filepath.Join(dir, f), []byte(strings.Repeat("x", i+1)), time.Duration(i+1)*time.Minute)
			}
			outside := t.TempDir()
			writeAged(t, filepath.Join(outside, "o.jsonl"), []byte("{}\n"), time.Hour)
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, "linked-dir")))
			require.NoError(t, os.Symlink(filepath.Join(outside, "o.jsonl"), filepath.Join(dir, "linked.jsonl")))
			loc := &Location{Provider: "claude", Dir: dir, Match: c.match}
			got, problems, err := walkFiles(loc)
			require.NoError(t, err)
			assert.Empty(t, problems)
			assert.Equal(t, walkDirFiles(t, loc), got)
			n := 0
			for _, f := range c.files {
				if !strings.HasSuffix(f, "/") && c.match(filepath.ToSlash(f)) {
					n++
				}
			}
			assert.Len(t, got, n)

			unclean := &Location{Provider: "claude", Dir: dir + "/./", Match: c.match}
			got, _, err = walkFiles(unclean)
			require.NoError(t, err)
			assert.Equal(t, walkDirFiles(t, unclean), got, "the store's directory given unclean")

			link := filepath.Join(t.TempDir(), "store")
			require.NoError(t, os.Symlink(dir, link))
			got, _, err = walkFiles(&Location{Provider: "claude", Dir: link, Match: c.match})
			require.NoError(t, err)
			assert.Empty(t, got)
		})
	}
}

// TestUnder: under joins as filepath.Join does a clean directory and a
// name read from it.
func TestUnder(t *testing.T) {
	for _, c := range [][2]string{{"/", "a"}, {"/h/s", "a.jsonl"}, {".", "a"}, {"rel/dir", "b"}, {"..", "c"}} {
		assert.Equal(t, filepath.Join(c[0], c[1]), under(c[0], c[1]), "%q %q", c[0], c[1])
	}
}

// TestWalkLinkedStore: a store whose own directory is a link to a
// directory lists what the directory holds, with the paths under the
// link (the one link followed, as find -H does; none below it), for a
// file store and a folder store: such a store listed nothing before, and
// its sessions were never archived.
func TestWalkLinkedStore(t *testing.T) {
	files, err := globRegexp("**/*.jsonl")
	require.NoError(t, err)
	folders, err := globRegexp("*")
	require.NoError(t, err)
	cases := []struct {
		name  string
		loc   Location
		files []string
		want  []string // relative to the store
	}{
		{"file store", Location{Provider: "claude", Kind: KindFile, Match: files.MatchString},
			[]string{"p1/s1.jsonl", "p2/q/s2.jsonl", "p2/notes.txt"}, []string{"p1/s1.jsonl", "p2/q/s2.jsonl"}},
		{"folder store", Location{Provider: "cline", Kind: KindFolder, Match: folders.MatchString, Files: []string{"ui_messages.json"}},
			[]string{"1700000000000/ui_messages.json", "1700000000001/ui_messages.json", "empty/other.txt"}, []string{"1700000000000", "1700000000001"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			real := t.TempDir()
			for i, f := range c.files {
				writeAged(t, filepath.Join(real, f), []byte(strings.Repeat("x", i+1)), time.Hour)
			}
			outside := t.TempDir()
			writeAged(t, filepath.Join(outside, "o.jsonl"), []byte("{}\n"), time.Hour)
			require.NoError(t, os.Symlink(outside, filepath.Join(real, "linked-dir")), "a link below the store's directory is not followed")
			link := filepath.Join(t.TempDir(), "store")
			require.NoError(t, os.Symlink(real, link))

			direct := c.loc
			direct.Dir = real
			want, _, err := Walk(&direct)
			require.NoError(t, err)
			require.Len(t, want, len(c.want))

			linked := c.loc
			linked.Dir = link
			got, problems, err := Walk(&linked)
			require.NoError(t, err)
			assert.Empty(t, problems)
			require.Len(t, got, len(want))
			for i, s := range got {
				assert.Equal(t, filepath.Join(link, filepath.FromSlash(c.want[i])), s.Path)
				assert.Same(t, &linked, s.Loc)
				assert.Equal(t, want[i].Size, s.Size)
				assert.Equal(t, want[i].ModTime, s.ModTime)
			}
		})
	}
}
