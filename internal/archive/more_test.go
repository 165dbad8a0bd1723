package archive

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/transcript"
)

// golden reads a session log of the project's testdata.
func golden(t *testing.T, provider, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", provider, name))
	require.NoError(t, err)
	return b
}

// syncedSession archives the claude golden session log name as a new
// run into a fresh archive: the set-up of the tests below. It returns the
// archive's root, the session file, its bytes, the archiver and the
// outcome of the sync.
func syncedSession(t *testing.T, name string) (root, src string, session []byte, a *Archiver, o Outcome) {
	t.Helper()
	root = t.TempDir()
	session = golden(t, "claude", name)
	src = filepath.Join(t.TempDir(), "s.jsonl")
	writeAged(t, src, session, time.Hour)
	a = newArchiver(t, root, nil)
	o = a.SyncFile(context.Background(), "claude", src)
	require.Equal(t, ActionNew, o.Action, o.Reason)
	return root, src, session, a, o
}

func TestBusyErrorAndExpandHome(t *testing.T) {
	e := &BusyError{PID: "42"}
	assert.Contains(t, e.Error(), "(pid 42)")
	assert.Contains(t, e.Error(), "--wait")
	assert.ErrorIs(t, e, ErrBusy)
	assert.NotContains(t, (&BusyError{}).Error(), "pid")
	var nilLock *Lock
	assert.NoError(t, nilLock.Release())

	assert.Equal(t, "/h", expandHome("~", "/h"))
	assert.Equal(t, "/h/a", expandHome("~/a", "/h"))
	assert.Equal(t, "/abs", expandHome("/abs", "/h"))
}

// jsonlFiles matches every .jsonl file.
func jsonlFiles(rel string) bool { return strings.HasSuffix(rel, ".jsonl") }

// Walk reports what it cannot read and goes on; a store that is a file
// or missing is an error of its own.
func TestWalkProblems(t *testing.T) {
	dir := t.TempDir()
	loc := &Location{Provider: "claude", Dir: dir, Match: jsonlFiles}
	writeAged(t, filepath.Join(dir, "a", "s1.jsonl"), []byte("{}\n"), time.Hour)
	writeAged(t, filepath.Join(dir, "b", "s2.jsonl"), []byte("{}\n"), time.Hour)
	writeAged(t, filepath.Join(dir, "b", "notes.txt"), []byte("x\n"), time.Hour)
	require.NoError(t, os.Symlink("/nonexistent", filepath.Join(dir, "a", "link.jsonl")))
	sessions, problems, err := Walk(loc)
	require.NoError(t, err)
	require.Len(t, sessions, 2, "a symlink or a non-matching file is no session")
	assert.Empty(t, problems)
	if os.Geteuid() != 0 {
		require.NoError(t, os.Chmod(filepath.Join(dir, "b"), 0))
		t.Cleanup(func() { os.Chmod(filepath.Join(dir, "b"), 0o700) })
		sessions, problems, err = Walk(loc)
		require.NoError(t, err)
		assert.Len(t, sessions, 1)
		assert.NotEmpty(t, problems, "an unreadable directory is reported")
	}
	_, _, err = Walk(&Location{Dir: filepath.Join(dir, "a", "s1.jsonl"), Match: jsonlFiles})
	assert.ErrorContains(t, err, "not a directory")
	_, _, err = Walk(&Location{Dir: filepath.Join(dir, "gone"), Match: jsonlFiles})
	assert.ErrorIs(t, err, ErrStoreMissing)
}

// A ledger with unreadable lines is rebuilt from the transcripts; a
// pending entry (a sync killed between its two writes) is settled from
// its transcript, or dropped when its run was never begun.
func TestLedgerRebuildAndPending(t *testing.T) {
	root, src, session, a, o := syncedSession(t, "session_log.jsonl")
	require.NoError(t, a.Close())

	// Damaged: rebuilt, and the file is still known.
	f, err := os.OpenFile(LedgerFile(root), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{not json\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	l, why, err := OpenLedger(root, false)
	require.NoError(t, err)
	assert.Contains(t, why, "unreadable ledger line")
	e := l.ByPath(src)
	require.NotNil(t, e)
	assert.Equal(t, o.RunID, e.RunID)
	assert.Equal(t, int64(len(session)), e.Offset)

	// Pending entries: one of the real run, one of a run never begun.
	e.Pending, e.Offset = true, 1
	require.NoError(t, l.Put(e))
	ghost := &Entry{RunID: "11111111-1111-4111-8111-111111111111", Head: "h", Path: "/nowhere", Pending: true}
	require.NoError(t, l.Put(ghost))
	require.NoError(t, l.Close())
	l, _, err = OpenLedger(root, true)
	require.NoError(t, err)
	got := l.ByPath(src)
	require.NotNil(t, got)
	assert.False(t, got.Pending)
	assert.Equal(t, int64(len(session)), got.Offset, "settled from the transcript")
	assert.Equal(t, int64(-1), got.Size, "looked at again")
	assert.Nil(t, l.ByPath("/nowhere"), "a run never begun is dropped")
	assert.Error(t, l.Put(got), "a read-only ledger writes nothing")
	assert.Len(t, l.Entries(), 1)
	assert.Len(t, l.ByHead(got.Head), 1)
}

// Dry runs say what would happen and write nothing, closing included; a
// file that is not a regular file or cannot be opened fails with a
// reason.
func TestDryRunAndFailures(t *testing.T) {
	ctx := context.Background()
	root, src, _, a, _ := syncedSession(t, "session_log.jsonl")
	require.NoError(t, a.Close())

	dry := newArchiver(t, root, func(o *Options) { o.DryRun = true; o.CloseIdle = 0 })
	o := dry.SyncFile(ctx, "claude", src)
	assert.Equal(t, ActionClosed, o.Action, "an idle run would be ended")
	assert.True(t, o.DryRun)
	evs := readRun(t, root, o.RunID).events
	assert.NotEqual(t, transcript.RunCompleted, evs[len(evs)-1].Type, "a dry run ends nothing")
	assert.Empty(t, dry.CloseGone(ctx, func(string) bool { return true }, nil))

	o = dry.SyncFile(ctx, "claude", filepath.Join(t.TempDir(), "missing.jsonl"))
	assert.Equal(t, ActionFailed, o.Action)
	o = dry.SyncFile(ctx, "claude", t.TempDir())
	assert.Equal(t, ActionFailed, o.Action)
	assert.Contains(t, o.Reason, "not a regular file")

	// A plugin that cannot be had fails the part, with its reason.
	other := filepath.Join(t.TempDir(), "o.jsonl")
	writeAged(t, other, []byte(`{"type":"user","message":{"role":"user","content":"hello there, a new session"},"uuid":"u1","timestamp":"2026-01-01T00:00:00Z"}`+"\n"), time.Hour)
	b := newArchiver(t, t.TempDir(), func(o *Options) {
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return nil, errors.New("no such plugin") }
	})
	o = b.SyncFile(ctx, "nosuch", other)
	assert.Equal(t, ActionFailed, o.Action)
	assert.Contains(t, o.Reason, "no such plugin")
}

// An ended run's session that grows continues in a new run; the ended
// run's status and error are the last part's. A deleted session's run is
// ended by a store of its provider only.
func TestClosedStatus(t *testing.T) {
	ctx := context.Background()
	root, src, _, a, o := syncedSession(t, "session_log_rejected_and_interrupted.jsonl")
	require.NoError(t, os.Remove(src))
	// Another agent's store in the same directory (Aider's history in a
	// project that holds Crush's database) does not look for it.
	assert.Empty(t, a.CloseGone(ctx, func(string) bool { return false }, []StoreDir{{Provider: "aider", Dir: filepath.Dir(src)}}))
	outs := a.CloseGone(ctx, func(string) bool { return false }, []StoreDir{{Provider: "claude", Dir: filepath.Dir(src)}})
	require.Len(t, outs, 1)
	assert.Equal(t, ActionClosed, outs[0].Action)
	evs := readRun(t, root, o.RunID).events
	last := evs[len(evs)-1]
	require.Equal(t, transcript.RunCompleted, last.Type)
	if o.Status != transcript.StatusOK {
		assert.Equal(t, transcript.StatusError, last.Step().Status)
		assert.Contains(t, last.Step().Error, o.Status)
	}
	var src2 SourceRef
	require.NoError(t, json.Unmarshal(evs[0].Step().Extra[SourceField], &src2))
	assert.Equal(t, "claude", src2.Provider)
	// Closing again is a no-op.
	assert.Empty(t, a.CloseGone(ctx, func(string) bool { return false }, []StoreDir{{Provider: "claude", Dir: filepath.Dir(src)}}))
	assert.True(t, strings.HasPrefix(runName("copilot", "/x/abc/events.jsonl", ""), "copilot session abc"))
}
