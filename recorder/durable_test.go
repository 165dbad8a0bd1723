package recorder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/twasm/twasm/internal/durable"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/transcript"
)

// syncLog records the real fsyncs a recorder makes, file or directory, as
// "file" or "dir:<path relative to root>"; the directory syncs may come
// from the background one.
type syncLog struct {
	mu   sync.Mutex
	root string
	log  []string
	// block, when set, holds the first directory sync until it is closed
	// (entered is closed when that sync is held); fail makes the first one
	// fail.
	block   chan struct{}
	entered chan struct{}
	fail    bool
	calls   int
}

func (l *syncLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, s)
}

// since returns the syncs logged from n on, and the new length.
func (l *syncLog) since(n int) ([]string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.log[n:]), len(l.log)
}

func (l *syncLog) dirSync(dir string) error {
	l.mu.Lock()
	l.calls++
	first := l.calls == 1
	l.mu.Unlock()
	if first && l.block != nil {
		close(l.entered)
		<-l.block
	}
	if first && l.fail {
		return errors.New("boom")
	}
	rel, err := filepath.Rel(l.root, dir)
	if err != nil {
		return err
	}
	l.add("dir:" + filepath.ToSlash(rel))
	return durable.SyncDir(dir)
}

// openWatched opens a run in st with the policy, its fsyncs logged.
func openWatched(t *testing.T, st Store, id string, o Options, l *syncLog) *Recorder {
	t.Helper()
	o.Logger = quietLog()
	ro := o.resolve()
	ro.dirSync = l.dirSync
	path, err := st.TranscriptPath(id)
	if err != nil {
		t.Fatal(err)
	}
	r, err := open(context.Background(), path, id, ro)
	if err != nil {
		t.Fatal(err)
	}
	r.fileSyncHook = func() error {
		l.add("file")
		return r.wf.Sync()
	}
	return r
}

// TestSyncOrder watches the real fsyncs of a run under each policy, on a
// fresh storage (whose transcripts/ is created) and on one that exists,
// with the background sync of the file's entry done by the first
// promise: Open starts that sync (of transcripts/, whoever created the
// file); the first fsync that makes a promise (the first boundary, every
// event under always, Close of unsynced lines) syncs the file alone;
// FsyncNever syncs nothing.
func TestSyncOrder(t *testing.T) {
	started := &transcript.Event{Type: transcript.StepStarted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.KindAgent}}
	completed := &transcript.Event{Type: transcript.StepCompleted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.KindAgent, Status: "ok"}}
	entry := []string{"dir:transcripts"}
	tests := []struct {
		name   string
		policy FsyncPolicy
		fresh  bool // a storage Open creates, else one with transcripts/
		cont   bool // continue a run another recorder created (MustExist)
		evs    []*transcript.Event
		want   [][]string // the syncs Open made, each Record, then Close
	}{
		{"boundary", FsyncOnBoundary, false, false, []*transcript.Event{started, assistantEvent("x"), completed, started, completed},
			[][]string{entry, nil, nil, {"file"}, nil, {"file"}, nil}},
		{"boundary fresh storage", FsyncOnBoundary, true, false, []*transcript.Event{started, completed},
			[][]string{{"dir:..", "dir:.", "dir:transcripts"}, nil, {"file"}, nil}},
		{"boundary, continued run", FsyncOnBoundary, false, true, []*transcript.Event{started, completed},
			[][]string{entry, nil, {"file"}, nil}},
		{"boundary, closed unsynced", FsyncOnBoundary, false, false, []*transcript.Event{started},
			[][]string{entry, nil, {"file"}}},
		{"always", FsyncAlways, false, false, []*transcript.Event{started, assistantEvent("x"), completed},
			[][]string{entry, {"file"}, {"file"}, {"file"}, nil}},
		{"never", FsyncNever, true, false, []*transcript.Event{started, completed},
			[][]string{nil, nil, nil, nil}},
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
			opts := Options{Fsync: tt.policy}
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
			l := &syncLog{root: root}
			r := openWatched(t, st, id, opts, l)
			if r.dirBG != nil {
				<-r.dirBG.done // the entry's background sync, done before the first promise
			}
			row, n := l.since(0)
			got := [][]string{row}
			for _, ev := range tt.evs {
				ev := *ev
				if err := r.Record(context.Background(), &ev); err != nil {
					t.Fatal(err)
				}
				row, n = l.since(n)
				got = append(got, row)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			row, _ = l.since(n)
			got = append(got, row)
			for i := range got {
				if len(got[i]) == 0 {
					got[i] = nil
				}
			}
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Fatalf("syncs by Open, each Record, Close:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestEntrySyncFallback: when the background sync of the file's entry
// has not succeeded by the first promise (still under way, or failed),
// the promise syncs the entry itself, after the file; a failed
// background sync is that promise's error (ErrNotDurable); a directory sync
// that fails then makes the promise fail with ErrNotDurable (the line is
// written) and stays pending: the next fsync, or Close, tries it again.
func TestEntrySyncFallback(t *testing.T) {
	completed := &transcript.Event{Type: transcript.StepCompleted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.KindAgent, Status: "ok"}}
	for _, tt := range []struct {
		name  string
		block bool
		fail  bool
	}{
		{"under way", true, false},
		{"failed", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := NewStore(t.TempDir())
			if err := os.Mkdir(filepath.Join(st.Root, "transcripts"), 0o700); err != nil {
				t.Fatal(err)
			}
			l := &syncLog{root: st.Root, fail: tt.fail}
			if tt.block {
				l.block, l.entered = make(chan struct{}), make(chan struct{})
			}
			r := openWatched(t, st, runid.New(), Options{}, l)
			if tt.fail {
				<-r.dirBG.done
			}
			if tt.block {
				// The background sync is the one held: wait until it is,
				// or a slow start would let the promise's own sync be
				// the first, held forever.
				<-l.entered
			}
			ev := *completed
			err := r.Record(context.Background(), &ev)
			switch {
			case tt.fail && (!errors.Is(err, ErrNotDurable) || !strings.Contains(err.Error(), "boom")):
				// The background sync's failure is the promise's, even
				// though the entry's sync here succeeds: after a failed
				// fsync the kernel reports the failure once, so a later
				// success proves nothing.
				t.Fatalf("got %v, want ErrNotDurable naming the background sync's failure", err)
			case !tt.fail && err != nil:
				t.Fatal(err)
			}
			if ev.Seq != 1 {
				t.Fatalf("the line is written: seq %d", ev.Seq)
			}
			if got, _ := l.since(0); !slices.Equal(got, []string{"file", "dir:transcripts"}) {
				t.Fatalf("syncs %q", got)
			}
			if tt.block {
				close(l.block)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("the promise's own sync fails", func(t *testing.T) {
		st := NewStore(t.TempDir())
		if err := os.Mkdir(filepath.Join(st.Root, "transcripts"), 0o700); err != nil {
			t.Fatal(err)
		}
		l := &syncLog{root: st.Root, fail: true}
		r := openWatched(t, st, runid.New(), Options{}, l)
		<-r.dirBG.done // failed
		boom := errors.New("boom")
		fail := true
		watched := r.dirs.Fsync
		r.dirs.Fsync = func(dir string) error {
			if fail {
				return boom
			}
			return watched(dir)
		}
		ev := *completed
		err := r.Record(context.Background(), &ev)
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
		if got, _ := l.since(0); !slices.Equal(got, []string{"file", "file", "dir:transcripts"}) {
			t.Fatalf("syncs %q", got)
		}
	})
}
