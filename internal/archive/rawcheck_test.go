package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/transcript"
)

// oldFeed is what the feedDated of a twasm before 2873b2b fed the raw
// capture and the plugin for data, read 256 KiB at a time: its code, as
// it was. Once a line cut short at a read's end had grown carry's array
// to 256 KiB, a chunk after a read without a line end was built in that
// array, and moving the chunk's own cut-short line to carry's front
// overwrote the chunk's first bytes before they were fed.
func oldFeed(data []byte) []byte {
	r := bytes.NewReader(data)
	buf := make([]byte, 256<<10)
	var carry, fed []byte
	for {
		n, err := r.Read(buf)
		chunk := append(carry, buf[:n]...)
		carry = carry[:0]
		if err == nil {
			if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 && i < len(chunk)-1 {
				carry = append(carry, chunk[i+1:]...)
				chunk = chunk[:i+1]
			}
		}
		fed = append(fed, chunk...)
		if err != nil {
			return fed
		}
	}
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// damagedStore is a storage as a twasm before 2873b2b left it after
// syncing the session data at path (a Claude Code session with a line of
// 512 KiB): the run's raw capture and transcript hold oldFeed's bytes,
// and its part's source sha256 is the file's (hashed from the file, not
// from what was fed). It is made by syncing oldFeed's bytes, then putting
// the agent's bytes back in the file and the file's sha256 in the part's
// result; the ledger is rebuilt from the transcripts.
func damagedStore(t *testing.T, data []byte, path string) (root, runID string, bad []byte) {
	t.Helper()
	bad = oldFeed(data)
	require.Len(t, bad, len(data), "the old bug overwrote bytes, it did not drop any")
	require.NotEqual(t, sha(data), sha(bad), "the old code path damages this session")
	root = t.TempDir()
	writeAged(t, path, bad, time.Hour)
	a := newArchiver(t, root, nil)
	o := a.SyncFile(context.Background(), "claude", path)
	require.Equal(t, ActionNew, o.Action, o.Reason)
	require.NoError(t, a.Close())
	writeAged(t, path, data, time.Hour)
	tp := filepath.Join(root, "transcripts", o.RunID+".jsonl")
	tb, err := os.ReadFile(tp)
	require.NoError(t, err)
	from := fmt.Sprintf(`"to":%d,"sha256":"%s"`, len(data), sha(bad))
	require.Equal(t, 1, bytes.Count(tb, []byte(from)), "the part's source reference")
	tb = bytes.Replace(tb, []byte(from), fmt.Appendf(nil, `"to":%d,"sha256":"%s"`, len(data), sha(data)), 1)
	require.NoError(t, os.WriteFile(tp, tb, 0o600))
	require.NoError(t, os.Remove(LedgerFile(root)))
	return root, o.RunID, bad
}

// firstDiff is where a and b first differ, and its line (from 1).
func firstDiff(a, b []byte) RawSpot {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return RawSpot{Byte: int64(i), Line: bytes.Count(a[:i], []byte("\n")) + 1}
}

// firstNotJSON is the first line of b that is not a JSON value.
func firstNotJSON(b []byte) *RawSpot {
	off := 0
	for i, l := range bytes.SplitAfter(b, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && !json.Valid(t) {
			return &RawSpot{Byte: int64(off), Line: i + 1}
		}
		off += len(l)
	}
	return nil
}

func checkRaw(t *testing.T, root string) RawCheck {
	t.Helper()
	l, _, err := OpenLedger(root, true)
	require.NoError(t, err)
	defer l.Close()
	rc, err := CheckRaw(context.Background(), root, l)
	require.NoError(t, err)
	return rc
}

// TestCheckRaw: the raw capture of a session run is checked against the
// bytes its source held, with the agent's file (read, never written) or
// without it. A run a twasm before 2873b2b damaged is found, with where
// it differs from the file; an intact run is not; a run whose file is
// gone or changed is found and said not repairable, with the first line
// of its capture that is not JSON.
func TestCheckRaw(t *testing.T) {
	data := framesSession(t)
	for _, tc := range []struct {
		name    string
		damaged bool
		after   func(t *testing.T, path string) // the agent's file after the sync
		source  string
		repair  bool
		redact  bool // synced with --redact: checked against what was written only
	}{
		{name: "intact", damaged: false},
		{name: "intact, masked", damaged: false, redact: true},
		{name: "damaged, the file holds its bytes", damaged: true, source: SourceHolds, repair: true},
		{name: "damaged, the file grew", damaged: true, source: SourceHolds, repair: true, after: func(t *testing.T, path string) {
			writeAged(t, path, append(slices.Clone(data), data[:4096]...), time.Hour)
		}},
		{name: "damaged, the file is gone", damaged: true, source: SourceGone, after: func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
		}},
		{name: "damaged, the file was rewritten", damaged: true, source: SourceChanged, after: func(t *testing.T, path string) {
			writeAged(t, path, append([]byte("{}\n"), data...), time.Hour)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			var root, runID string
			var bad []byte
			if tc.damaged {
				root, runID, bad = damagedStore(t, data, path)
			} else {
				root = t.TempDir()
				writeAged(t, path, data, time.Hour)
				a := newArchiver(t, root, func(o *Options) { o.Redact = tc.redact })
				o := a.SyncFile(context.Background(), "claude", path)
				require.Equal(t, ActionNew, o.Action, o.Reason)
				require.NoError(t, a.Close())
			}
			if tc.after != nil {
				tc.after(t, path)
			}
			var before string
			if b, err := os.ReadFile(path); err == nil {
				before = sha(b)
			}
			rc := checkRaw(t, root)
			assert.Equal(t, 1, rc.Checked)
			assert.Equal(t, map[bool]int{true: 1}[tc.redact], rc.Masked)
			if b, err := os.ReadFile(path); err == nil {
				assert.Equal(t, before, sha(b), "the agent's file is unchanged")
			}
			if !tc.damaged {
				assert.Empty(t, rc.Damaged)
				return
			}
			require.Len(t, rc.Damaged, 1)
			d := rc.Damaged[0]
			assert.Equal(t, runID, d.RunID)
			assert.Equal(t, path, d.Path)
			assert.Equal(t, 0, d.Part)
			assert.Contains(t, d.Problem, "other bytes than the source's first")
			assert.Equal(t, tc.source, d.Source)
			assert.Equal(t, tc.repair, d.Repairable, d.Repair)
			if tc.source == SourceHolds {
				want := firstDiff(data, bad)
				require.NotNil(t, d.Differs)
				assert.Equal(t, want, *d.Differs)
				assert.Greater(t, want.Byte, int64(2*256<<10), "in the long line's tail")
				assert.Nil(t, d.NotJSON)
			} else {
				assert.Nil(t, d.Differs)
				want := firstNotJSON(bad)
				require.NotNil(t, want, "the old bug merged lines")
				require.NotNil(t, d.NotJSON)
				assert.Equal(t, *want, *d.NotJSON)
				assert.Contains(t, d.Repair, fmt.Sprintf("line %d", want.Line))
			}
		})
	}
}

// TestRepairRaw: `sync --repair` archives a damaged session again from
// the agent's file, into a new run that supersedes the damaged one: the
// new run's raw capture is the file's bytes and its plugin read every
// line, the old run is ended saying why, a second repair or sync does
// nothing more, the usage is the session's once, and the agent's file is
// unchanged. A damaged run whose file is gone is kept as it is.
func TestRepairRaw(t *testing.T) {
	ctx := context.Background()
	data := framesSession(t)
	t.Run("file holds its bytes", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		root, old, _ := damagedStore(t, data, path)
		fresh := func() storageFigures {
			r := t.TempDir()
			a := newArchiver(t, r, nil)
			require.Equal(t, ActionNew, a.SyncFile(ctx, "claude", path).Action)
			require.NoError(t, a.Close())
			return figures(t, r)
		}()
		lines := bytes.Count(data, []byte("\n"))
		require.Equal(t, lines-1, readRun(t, root, old).parts[0].Lines, "the damaged run's plugin read two lines as one")
		rc := checkRaw(t, root)
		require.Len(t, rc.Damaged, 1)

		a := newArchiver(t, root, nil)
		require.Empty(t, a.Repair(ctx, rc.Damaged))
		o := a.SyncFile(ctx, "claude", path)
		require.Equal(t, ActionNew, o.Action, o.Reason)
		assert.Contains(t, o.Reason, "run "+old+"'s raw capture is damaged")
		assert.NotEqual(t, old, o.RunID)
		assert.Empty(t, a.Repaired())
		again := a.SyncFile(ctx, "claude", path)
		assert.Equal(t, ActionUnchanged, again.Action, again.Reason)
		assert.Equal(t, o.RunID, again.RunID)
		require.NoError(t, a.Close())

		nv := readRun(t, root, o.RunID)
		require.Len(t, nv.parts, 1)
		back, err := rawfile.ReadFile(filepath.Join(root, filepath.FromSlash(nv.parts[0].Raw.Path)))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data, back), "the new run's raw capture holds the session's bytes")
		assert.Equal(t, lines, nv.parts[0].Lines, "the plugin read every line")
		ov := readRun(t, root, old)
		last := ov.events[len(ov.events)-1]
		require.Equal(t, transcript.RunCompleted, last.Type)
		var by string
		require.NoError(t, json.Unmarshal(last.Step().Extra[lifecycle.SupersededByField], &by))
		assert.Equal(t, o.RunID, by)
		validRun(t, root, old)
		validRun(t, root, o.RunID)

		f := figures(t, root)
		assert.ElementsMatch(t, []string{old, o.RunID}, f.listed, "ls lists the old run, ended, and the new one")
		assert.Equal(t, fresh.all, f.all, "the session's usage once, as a fresh sync counts it")
		assert.Empty(t, checkRaw(t, root).Damaged, "nothing left to repair")

		// A second repair, with a ledger rebuilt from the transcripts:
		// nothing more.
		require.NoError(t, os.Remove(LedgerFile(root)))
		a = newArchiver(t, root, nil)
		require.Empty(t, a.Repair(ctx, checkRaw(t, root).Damaged))
		o2 := a.SyncFile(ctx, "claude", path)
		assert.Equal(t, ActionUnchanged, o2.Action, o2.Reason)
		assert.Equal(t, o.RunID, o2.RunID)
		require.NoError(t, a.Close())
		assert.Equal(t, fresh.all, figures(t, root).all)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, sha(data), sha(b), "the agent's file is unchanged")
	})
	t.Run("a repair cut short", func(t *testing.T) {
		// Killed after the new run was written, before the damaged run
		// was ended: the next repair ends it, superseded by that run,
		// and archives nothing again.
		path := filepath.Join(t.TempDir(), "s.jsonl")
		root, old, _ := damagedStore(t, data, path)
		tp := filepath.Join(root, "transcripts", old+".jsonl")
		before, err := os.ReadFile(tp)
		require.NoError(t, err)
		a := newArchiver(t, root, nil)
		a.Repair(ctx, checkRaw(t, root).Damaged)
		o := a.SyncFile(ctx, "claude", path)
		require.Equal(t, ActionNew, o.Action, o.Reason)
		require.NoError(t, a.Close())
		require.NoError(t, os.WriteFile(tp, before, 0o600))
		require.NoError(t, os.Remove(LedgerFile(root)))

		rc := checkRaw(t, root)
		require.Len(t, rc.Damaged, 1)
		a = newArchiver(t, root, nil)
		outs := a.Repair(ctx, rc.Damaged)
		require.Len(t, outs, 1)
		assert.Equal(t, ActionClosed, outs[0].Action, outs[0].Reason)
		assert.Contains(t, outs[0].Reason, "run "+o.RunID+" holds the session again")
		again := a.SyncFile(ctx, "claude", path)
		assert.Equal(t, ActionUnchanged, again.Action, again.Reason)
		assert.Equal(t, o.RunID, again.RunID)
		require.NoError(t, a.Close())
		assert.Empty(t, checkRaw(t, root).Damaged)
		f := figures(t, root)
		assert.ElementsMatch(t, []string{old, o.RunID}, f.listed)
		validRun(t, root, old)
	})
	t.Run("file gone", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		root, old, _ := damagedStore(t, data, path)
		require.NoError(t, os.Remove(path))
		tp := filepath.Join(root, "transcripts", old+".jsonl")
		before, err := os.ReadFile(tp)
		require.NoError(t, err)
		a := newArchiver(t, root, nil)
		outs := a.Repair(ctx, checkRaw(t, root).Damaged)
		require.Len(t, outs, 1)
		assert.Equal(t, ActionDamaged, outs[0].Action)
		assert.Equal(t, old, outs[0].RunID)
		assert.Contains(t, outs[0].Reason, "the agent's file is gone: the run is kept as it is")
		assert.Empty(t, a.Repaired())
		require.NoError(t, a.Close())
		after, err := os.ReadFile(tp)
		require.NoError(t, err)
		assert.Equal(t, before, after, "the run is kept as it is")
		assert.Len(t, checkRaw(t, root).Damaged, 1, "and found again")
	})
}

// TestRepairRawSubAgents: a damaged session run with sub-agent files'
// runs is archived again with them: each file's run again, as a child
// run of the new run. A damaged sub-agent file's run is repaired the same
// way, its session archived again (a new child run beside the old one
// would count the sub-agent twice: a sub-agent's run is counted in its
// session's). Either way the storage counts every token once, as a fresh
// sync of the same home does, and a later sync archives nothing. (The
// damage here is a raw capture changed on disk: its bytes are no longer
// those its part states.)
func TestRepairRawSubAgents(t *testing.T) {
	ctx := context.Background()
	h := newSubAgentHome(t)
	want := h.fresh(t)
	agentFiles := hashes(t, h.session, h.sub, h.compact)
	for _, tc := range []struct {
		name    string
		damaged string   // the file whose run's capture is damaged
		again   []string // the files archived again
		repair  string   // what doctor says --repair does
	}{
		{"the session's run", h.session, []string{h.session, h.sub, h.compact}, "with its 2 sub-agent file(s)"},
		{"a sub-agent file's run", h.sub, []string{h.session, h.sub, h.compact}, "archives its session (run "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			a := newArchiver(t, root, nil)
			first := byPath(a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil))
			require.NoError(t, a.Close())
			old := first[tc.damaged].RunID
			damageRaw(t, root, old, `"type":"user"`, `"type":"usex"`)

			rc := checkRaw(t, root)
			require.Len(t, rc.Damaged, 1)
			d := rc.Damaged[0]
			assert.Equal(t, old, d.RunID)
			assert.Contains(t, d.Problem, "changed since part 0 was written")
			assert.True(t, d.Repairable, d.Repair)
			assert.Contains(t, d.Repair, tc.repair)

			a = newArchiver(t, root, nil)
			require.Empty(t, a.Repair(ctx, rc.Damaged))
			outs := byPath(a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil))
			assert.Empty(t, a.Repaired())
			require.NoError(t, a.Close())
			session := first[h.session].RunID
			for _, p := range []string{h.session, h.sub, h.compact} {
				if !slices.Contains(tc.again, p) {
					assert.Equal(t, ActionUnchanged, outs[p].Action, "%s: %s", p, outs[p].Reason)
					continue
				}
				require.Equal(t, ActionNew, outs[p].Action, "%s: %s", p, outs[p].Reason)
				validRun(t, root, outs[p].RunID)
				if p == h.session {
					session = outs[p].RunID
				}
			}
			for _, p := range []string{h.sub, h.compact} {
				id := first[p].RunID
				if slices.Contains(tc.again, p) {
					id = outs[p].RunID
				}
				child := readRun(t, root, id)
				assert.Equal(t, session, child.events[0].ParentRunID, "%s: a child run of the session's run", p)
			}
			validRun(t, root, old)
			validRun(t, root, session)
			f := figures(t, root)
			assert.Equal(t, want.all, f.all, "every token once")
			assert.ElementsMatch(t, []string{first[h.session].RunID, session}, f.listed)
			assert.Empty(t, checkRaw(t, root).Damaged)
			rep := newArchiver(t, root, nil).SyncStores(ctx, h.locs(t, true), time.Time{}, nil)
			assert.Equal(t, 3, rep.Counts[ActionUnchanged], "%+v", rep.Outcomes)
			assert.Equal(t, agentFiles, hashes(t, h.session, h.sub, h.compact), "the agent's files are unchanged")
		})
	}
}

// damageRaw changes the first old in run runID's raw capture (its first
// part's) to new, on disk, as a disk or a wrong write might: its bytes
// are no longer those its part states.
func damageRaw(t *testing.T, root, runID, old, new string) {
	t.Helper()
	raw := filepath.Join(root, filepath.FromSlash(readRun(t, root, runID).parts[0].Raw.Path))
	b, err := rawfile.ReadFile(raw)
	require.NoError(t, err)
	require.Contains(t, string(b), old)
	b = bytes.Replace(b, []byte(old), []byte(new), 1)
	require.NoError(t, os.Remove(raw))
	w, err := rawfile.Create(raw)
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

func hashes(t *testing.T, paths ...string) []string {
	t.Helper()
	var out []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out = append(out, sha(b))
	}
	return out
}

// TestRepairRawFolder: a Cline task folder's run whose raw capture is
// damaged is archived again from the folder's files when each still
// holds what the run read of it, into a new run that supersedes it; a
// task whose documents the agent rewrote since is kept as it is. The
// task's files are only read.
func TestRepairRawFolder(t *testing.T) {
	ctx := context.Background()
	ui, api := clineDocs(t)
	for _, tc := range []struct {
		name     string
		rewrite  bool
		source   string
		repaired bool
	}{
		{"the files hold their bytes", false, SourceHolds, true},
		{"a document rewritten since", true, SourceChanged, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, home := t.TempDir(), t.TempDir()
			var loc []Location
			for _, l := range Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(cline.Plugin.Manifest), nil) {
				if l.Name == "Cline tasks" {
					loc = append(loc, l)
				}
			}
			require.Len(t, loc, 1)
			task := filepath.Join(home, ".cline", "data", "tasks", "1767225600000")
			write := func(ui, api []json.RawMessage) {
				u, err := json.Marshal(ui)
				require.NoError(t, err)
				p, err := json.Marshal(api)
				require.NoError(t, err)
				writeAged(t, filepath.Join(task, "ui_messages.json"), u, time.Hour)
				writeAged(t, filepath.Join(task, "api_conversation_history.json"), p, time.Hour)
			}
			write(ui, api)
			a := newArchiver(t, root, nil)
			first := a.SyncStores(ctx, loc, time.Time{}, nil).Outcomes
			require.NoError(t, a.Close())
			require.Len(t, first, 1)
			old := first[0].RunID
			require.Equal(t, int64(260), readRun(t, root, old).output)
			damageRaw(t, root, old, `"type":"say"`, `"type":"sax"`)
			if tc.rewrite {
				write(ui[:len(ui)-1], api)
			}
			before := hashTree(t, task)

			rc := checkRaw(t, root)
			require.Len(t, rc.Damaged, 1)
			d := rc.Damaged[0]
			assert.Equal(t, old, d.RunID)
			assert.Equal(t, task, d.Path)
			assert.Equal(t, tc.source, d.Source)
			assert.Equal(t, tc.repaired, d.Repairable, d.Repair)

			a = newArchiver(t, root, nil)
			outs := a.Repair(ctx, rc.Damaged)
			rep := a.SyncStores(ctx, loc, time.Time{}, nil)
			left := a.Repaired()
			require.NoError(t, a.Close())
			assert.Equal(t, before, hashTree(t, task), "the task folder's bytes are unchanged")
			require.Len(t, rep.Outcomes, 1)
			if !tc.repaired {
				require.Len(t, outs, 1)
				assert.Equal(t, ActionDamaged, outs[0].Action)
				assert.Empty(t, left)
				assert.Len(t, checkRaw(t, root).Damaged, 1, "kept as it is")
				return
			}
			assert.Empty(t, outs)
			assert.Empty(t, left)
			o := rep.Outcomes[0]
			require.Equal(t, ActionNew, o.Action, o.Reason)
			assert.Contains(t, o.Reason, "supersedes run "+old)
			assert.Equal(t, int64(260), readRun(t, root, o.RunID).output, "each request's output tokens once")
			validRun(t, root, old)
			validRun(t, root, o.RunID)
			f := figures(t, root)
			assert.ElementsMatch(t, []string{old, o.RunID}, f.listed)
			require.NotNil(t, f.all.OutputTokens)
			assert.Equal(t, int64(260), *f.all.OutputTokens, "counted once")
			assert.Empty(t, checkRaw(t, root).Damaged)
			again := newArchiver(t, root, nil).SyncStores(ctx, loc, time.Time{}, nil)
			assert.Equal(t, 1, again.Counts[ActionUnchanged], "%+v", again.Outcomes)
		})
	}
}
