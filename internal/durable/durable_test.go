package durable

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// watch returns Dirs whose Fsync logs each directory (relative to base)
// and makes the real fsync, and the log.
func watch(t *testing.T, base string) (*Dirs, *[]string) {
	var synced []string
	return &Dirs{Fsync: func(dir string) error {
		rel, err := filepath.Rel(base, dir)
		require.NoError(t, err)
		synced = append(synced, rel)
		return SyncDir(dir) // the real fsync: the directory must exist
	}}, &synced
}

func TestMkdirAllSyncsTheParentOfEveryDirectoryItCreates(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name     string
		existing string // made before, without syncs
		dir      string
		want     []string // the directories synced, in order
	}{
		{"all new", "", "a/b/c", []string{".", "a", "a/b"}},
		{"parent exists", "a/b", "a/b/c", []string{"a/b"}},
		{"all exist", "a/b/c", "a/b/c", nil},
		{"two new under an existing one", "a", "a/b/c", []string{"a", "a/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := filepath.Join(root, tt.name)
			require.NoError(t, os.Mkdir(base, 0o700))
			if tt.existing != "" {
				require.NoError(t, os.MkdirAll(filepath.Join(base, tt.existing), 0o700))
			}
			d, synced := watch(t, base)
			require.NoError(t, MkdirAll(filepath.Join(base, tt.dir), 0o700, d.Fsync))
			fi, err := os.Stat(filepath.Join(base, tt.dir))
			require.NoError(t, err)
			require.True(t, fi.IsDir())
			require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
			require.Equal(t, tt.want, *synced)
		})
	}
}

func TestDirs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a", "b"} {
		require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o700))
	}
	var never Dirs // no Fsync: records nothing
	never.Add(root)
	require.Empty(t, never.Pending())
	require.NoError(t, never.Sync())

	d, synced := watch(t, root)
	d.Add(filepath.Join(root, "a"))
	d.Add(filepath.Join(root, "b/"))
	d.Add(filepath.Join(root, "a")) // once
	require.Equal(t, []string{filepath.Join(root, "a"), filepath.Join(root, "b")}, d.Pending())
	d.Drop(filepath.Join(root, "a/")) // synced another way
	require.Equal(t, []string{filepath.Join(root, "b")}, d.Pending())
	d.Add(filepath.Join(root, "a"))

	// A failure keeps what is not synced yet, for the next Sync.
	boom := errors.New("boom")
	real := d.Fsync
	fail := filepath.Join(root, "b")
	d.Fsync = func(dir string) error {
		if dir == fail {
			return boom
		}
		return real(dir)
	}
	require.ErrorIs(t, d.Sync(), boom)
	require.Empty(t, *synced)
	require.Equal(t, []string{filepath.Join(root, "b"), filepath.Join(root, "a")}, d.Pending())
	fail = ""
	require.NoError(t, d.Sync())
	require.Equal(t, []string{"b", "a"}, *synced)
	require.Empty(t, d.Pending())
}

func TestMkdirAllErrors(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, MkdirAll(filepath.Join(root, "x/y"), 0o700, nil))
	require.DirExists(t, filepath.Join(root, "x/y"))

	file := filepath.Join(root, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	require.Error(t, MkdirAll(file, 0o700, nil), "a file where the directory goes")
	require.Error(t, MkdirAll(filepath.Join(file, "sub"), 0o700, nil), "a file where a parent goes")

	boom := errors.New("boom")
	err := MkdirAll(filepath.Join(root, "z"), 0o700, func(string) error { return boom })
	require.ErrorIs(t, err, boom, "a failed fsync is reported")

	require.Error(t, SyncDir(filepath.Join(root, "missing")))
	require.NoError(t, SyncDir(root))
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	for _, content := range []string{"first\n", "second, longer\n", ""} {
		if err := WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Fatalf("got %q, %v; want %q", got, err, content)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v", st.Mode())
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
	if err := WriteFile(filepath.Join(dir, "no", "such"), nil, 0o600); err == nil {
		t.Fatal("a missing directory was not an error")
	}
}
