package archive

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResyncReadsWhatChanged: a sync after a first one reads a session
// file only when its size or mtime is not what the ledger saw last (the
// walk's stat decides, the file is not even opened), and still sees
// every session that grew, was changed in place (same size, another
// mtime), truncated or replaced by another file (renamed onto it), and a
// new session beside the others. The home (resyncHome) holds three
// sessions, p0 the first half of one; a case changes p0 after the first
// sync (or adds p3). A session changed is archived once: a third sync
// finds every session unchanged.
// "removed after the walk" removes each file once the walk has listed it
// (the worker's hook, before the session's turn): an unchanged session
// is unchanged without being opened (it failed, "no such file", when
// every session was opened).
func TestResyncReadsWhatChanged(t *testing.T) {
	unchanged := "unchanged since the last sync"
	rewritten := "the file was rewritten"
	cases := []struct {
		name   string
		change func(t *testing.T, p0 string, whole []byte)
		hook   bool
		// p0 is p0's outcome: action and reason.
		p0, p0Reason string
	}{
		{"nothing", nil, false, ActionUnchanged, unchanged},
		{"removed after the walk", nil, true, ActionUnchanged, unchanged},
		{"grown", func(t *testing.T, p0 string, whole []byte) {
			writeAged(t, p0, whole, 30*time.Minute)
		}, false, ActionGrown, ""},
		{"grown, mtime kept", func(t *testing.T, p0 string, whole []byte) {
			st, err := os.Stat(p0)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p0, whole, 0o600))
			require.NoError(t, os.Chtimes(p0, st.ModTime(), st.ModTime()))
		}, false, ActionGrown, ""},
		{"touched, same bytes", func(t *testing.T, p0 string, _ []byte) {
			when := time.Now().Add(-30 * time.Minute)
			require.NoError(t, os.Chtimes(p0, when, when))
		}, false, ActionUnchanged, "nothing new"},
		{"changed in place, same size", func(t *testing.T, p0 string, _ []byte) {
			b, err := os.ReadFile(p0)
			require.NoError(t, err)
			i := bytes.LastIndex(b, []byte(`"type":"user"`))
			require.Positive(t, i)
			b = append([]byte(nil), b...)
			copy(b[i:], `"type":"USER"`)
			writeAged(t, p0, b, 30*time.Minute)
		}, false, ActionNew, rewritten},
		{"truncated", func(t *testing.T, p0 string, _ []byte) {
			b, err := os.ReadFile(p0)
			require.NoError(t, err)
			writeAged(t, p0, b[:bytes.IndexByte(b, '\n')+1], 30*time.Minute)
		}, false, ActionNew, rewritten},
		{"replaced by another session", func(t *testing.T, p0 string, _ []byte) {
			other := fixture(t, "testdata/captures/claude/irrlicht_session_log_v2.1.101_foreground_agents.jsonl")
			tmp := p0 + ".new"
			writeAged(t, tmp, other, 30*time.Minute)
			require.NoError(t, os.Rename(tmp, p0))
		}, false, ActionNew, ""},
		{"a new session beside", func(t *testing.T, p0 string, _ []byte) {
			other := fixture(t, "testdata/captures/claude/irrlicht_session_log_v2.1.101_foreground_agents.jsonl")
			writeAged(t, filepath.Join(filepath.Dir(filepath.Dir(p0)), "p3", "s.jsonl"), other, 30*time.Minute)
		}, false, ActionUnchanged, unchanged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			locs, whole := resyncHome(t)
			root := t.TempDir()
			a := newArchiver(t, root, func(o *Options) { o.Workers = 2 })
			rep := a.SyncStores(ctx, locs, time.Time{}, nil)
			require.Zero(t, rep.Counts[ActionFailed], "%v", rep.Outcomes)
			require.NoError(t, a.Close())

			p0 := filepath.Join(locs[0].Dir, "p0", "s.jsonl")
			if c.change != nil {
				c.change(t, p0, whole)
			}
			b := newArchiver(t, root, func(o *Options) { o.Workers = 2 })
			if c.hook {
				b.sessionHook = func(i int, after bool) {
					if !after {
						require.NoError(t, os.Remove(filepath.Join(locs[0].Dir, "p"+strconv.Itoa(i), "s.jsonl")))
					}
				}
			}
			rep = b.SyncStores(ctx, locs, time.Time{}, nil)
			if c.name == "a new session beside" {
				require.Len(t, rep.Outcomes, 4, "%v", rep.Outcomes)
				require.Equal(t, ActionNew, rep.Outcomes[3].Action, "%v", rep.Outcomes[3])
				require.Equal(t, filepath.Join(locs[0].Dir, "p3", "s.jsonl"), rep.Outcomes[3].Path)
				rep.Outcomes = rep.Outcomes[:3]
			}
			require.Len(t, rep.Outcomes, 3, "%v", rep.Outcomes)
			for i, o := range rep.Outcomes {
				if i == 0 {
					assert.Equal(t, c.p0, o.Action, "p0: %s", o.Reason)
					if c.p0Reason != "" {
						assert.True(t, strings.HasPrefix(o.Reason, c.p0Reason), "p0: %q, want %q first", o.Reason, c.p0Reason)
					}
					continue
				}
				assert.Equal(t, ActionUnchanged, o.Action, "%s: %s", o.Path, o.Reason)
				if c.p0 == ActionUnchanged {
					assert.Equal(t, unchanged, o.Reason, o.Path)
				}
			}
			if c.p0 != ActionUnchanged {
				rep = b.SyncStores(ctx, locs, time.Time{}, nil)
				assert.Equal(t, 3, rep.Counts[ActionUnchanged], "the grown session is archived once: %v", rep.Outcomes)
			}
		})
	}
}

// resyncHome writes a Claude Code store of three sessions: p0 the first
// half of a session (whole is the session whole), p1 and p2 two others.
func resyncHome(t *testing.T) ([]Location, []byte) {
	t.Helper()
	s := fixture(t, "testdata/captures/claude/agentcmd_session_log_v2.0.26_plan_rejected.jsonl")
	other := fixture(t, "testdata/captures/claude/irrlicht_session_log_v2.1.143_api_error_rate_limit_retries.jsonl")
	third := fixture(t, "testdata/captures/claude/irrlicht_session_log_v2.1.150_background_task_notification.jsonl")
	half := s[:bytes.IndexByte(s[len(s)/2:], '\n')+len(s)/2+1]
	return claudeHome(t, half, other, third), s
}
