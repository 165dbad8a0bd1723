package recorder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/transcript"
)

// watchSyncs makes r log every fsync it makes, file or directory, as
// "file" or "dir:<path relative to root>", and still make it.
func watchSyncs(t *testing.T, r *Recorder, root string) *[]string {
	t.Helper()
	var log []string
	r.fileSyncHook = func() error {
		log = append(log, "file")
		return r.wf.Sync()
	}
	if fsync := r.dirs.Fsync; fsync != nil {
		r.dirs.Fsync = func(dir string) error {
			rel, err := filepath.Rel(root, dir)
			if err != nil {
				t.Fatal(err)
			}
			log = append(log, "dir:"+filepath.ToSlash(rel))
			return fsync(dir)
		}
	}
	return &log
}

// TestSyncOrder watches the real fsyncs of a run under each policy, on a
// fresh storage (whose transcripts/ is created) and on one that exists:
// Open syncs nothing; the first fsync that makes a promise (the first
// boundary, every event under always, Close of unsynced lines) syncs the
// file first and then its entry in transcripts/, whoever created it,
// before Record returns; later ones sync the file alone; FsyncNever syncs
// nothing.
func TestSyncOrder(t *testing.T) {
	started := &transcript.Event{Type: transcript.StepStarted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.KindAgent}}
	completed := &transcript.Event{Type: transcript.StepCompleted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.KindAgent, Status: "ok"}}
	dirs := []string{"dir:transcripts"}
	tests := []struct {
		name   string
		policy FsyncPolicy
		fresh  bool // a storage Open creates, else one with transcripts/
		cont   bool // continue a run another recorder created (MustExist)
		evs    []*transcript.Event
		want   [][]string // the syncs each Record made; the last row is Close's
	}{
		{"boundary", FsyncOnBoundary, false, false, []*transcript.Event{started, assistantEvent("x"), completed, started, completed},
			[][]string{nil, nil, append([]string{"file"}, dirs...), nil, {"file"}, nil}},
		{"boundary fresh storage", FsyncOnBoundary, true, false, []*transcript.Event{started, completed},
			[][]string{nil, append([]string{"file"}, dirs...), nil}},
		{"boundary, continued run", FsyncOnBoundary, false, true, []*transcript.Event{started, completed},
			[][]string{nil, append([]string{"file"}, dirs...), nil}},
		{"boundary, closed unsynced", FsyncOnBoundary, false, false, []*transcript.Event{started},
			[][]string{nil, append([]string{"file"}, dirs...)}},
		{"always", FsyncAlways, false, false, []*transcript.Event{started, assistantEvent("x"), completed},
			[][]string{append([]string{"file"}, dirs...), {"file"}, {"file"}, nil}},
		{"never", FsyncNever, true, false, []*transcript.Event{started, completed},
			[][]string{nil, nil, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			st := NewStore(root)
			if tt.fresh {
				st = NewStore(filepath.Join(root, "new"))
				root = st.Root
			} else if err := os.Mkdir(filepath.Join(root, "transcripts"), 0o700); err != nil {
				t.Fatal(err)
			}
			id := runid.New()
			opts := Options{Fsync: tt.policy, Logger: quietLog()}
			if tt.cont {
				first, err := st.Open(context.Background(), id, Options{Fsync: FsyncNever, Logger: quietLog()})
				if err != nil {
					t.Fatal(err)
				}
				if err := first.Close(); err != nil {
					t.Fatal(err)
				}
				opts.MustExist = true
			}
			r, err := st.Open(context.Background(), id, opts)
			if err != nil {
				t.Fatal(err)
			}
			log := watchSyncs(t, r, root)
			var got [][]string
			for _, ev := range tt.evs {
				ev := *ev
				n := len(*log)
				if err := r.Record(context.Background(), &ev); err != nil {
					t.Fatal(err)
				}
				got = append(got, slices.Clone((*log)[n:]))
				if pend := r.dirs.Pending(); (*log)[n:] != nil && len(pend) > 0 {
					t.Fatalf("after %s: entries %v still not durable", ev.Type, pend)
				}
			}
			n := len(*log)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			got = append(got, slices.Clone((*log)[n:]))
			for i := range got {
				if len(got[i]) == 0 {
					got[i] = nil
				}
			}
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Fatalf("syncs per call:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestDirSyncFailure: a directory entry that cannot be synced makes the
// promise fail with ErrNotDurable (the line is written), and stays
// pending: the next fsync, or Close, tries it again.
func TestDirSyncFailure(t *testing.T) {
	st := NewStore(t.TempDir())
	if err := os.Mkdir(filepath.Join(st.Root, "transcripts"), 0o700); err != nil {
		t.Fatal(err)
	}
	r, err := st.Open(context.Background(), runid.New(), Options{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	log := watchSyncs(t, r, st.Root)
	boom := errors.New("boom")
	watched := r.dirs.Fsync
	fail := true
	r.dirs.Fsync = func(dir string) error {
		if fail {
			return boom
		}
		return watched(dir)
	}
	completed := &transcript.Event{Type: transcript.StepCompleted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.KindAgent, Status: "ok"}}
	err = r.Record(context.Background(), completed)
	if !errors.Is(err, ErrNotDurable) || !errors.Is(err, boom) {
		t.Fatalf("got %v, want ErrNotDurable and boom", err)
	}
	if len(r.dirs.Pending()) != 1 || !r.unsynced {
		t.Fatalf("pending %v, unsynced %v", r.dirs.Pending(), r.unsynced)
	}
	fail = false
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"file", "file", "dir:transcripts"}; !slices.Equal(*log, want) {
		t.Fatalf("syncs %q, want %q", *log, want)
	}
}
