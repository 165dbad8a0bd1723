package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// TestLooseSubAgentRelinked: a Gemini CLI sub-agent's chat synced while
// its invoke_agent call ran (the CLI records a call once it completed,
// so the session's file does not hold it yet) is linked at the session's
// latest part (Entry.LooseAt); once a later part of the session's run
// holds the call and the session's records name the chat by its agentId
// (abi.Store.SubAgentCalls), the next sync archives the chat again,
// whole, as a child run linked at the call, superseding the first, which
// ends saying so: one sub-agent counted once, at its call, and a further
// sync changes nothing. A session that grows without the record looks
// for it once per new part (LooseAt follows the parts), and a store that
// declares no such records, or a chat linked at its call at once, is
// never archived again. Before, the first link stayed, away from its
// call, for good. The chats are the goldens written from the CLI's
// source (testdata/golden/gemini/README.md).
func TestLooseSubAgentRelinked(t *testing.T) {
	const (
		sessionID = "5a1d2c3e-0f4b-4c6d-8e9f-0a1b2c3d4e5f"
		childID   = "9c8b7a6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
		callID    = "invoke_agent__invoke_agent_1795168802900_0"
	)
	parent := bytes.SplitAfter(fixture(t, "testdata/golden/gemini/session_jsonl_subagent_parent.jsonl"), []byte("\n"))
	child := fixture(t, "testdata/golden/gemini/session_jsonl_subagent_child.jsonl")
	running := bytes.Join(parent[:5], nil) // up to the call's response: no record of the call
	idle := append([]byte(nil), running...)
	idle = append(idle, `{"$set":{"lastUpdated":"2026-11-20T10:00:04.000Z"}}`+"\n"...)
	whole := bytes.Join(parent, nil)
	noCalls := geminiStore
	noCalls.SubAgentCalls = nil
	for _, c := range []struct {
		name  string
		store abi.Store
		// sessions are the session file's versions, each synced in
		// turn, the chat written before the first sync.
		sessions [][]byte
		// relinked: the chat archived again at the call by the last
		// sync; looseAt: the chat's ledger entry's LooseAt then.
		relinked bool
		looseAt  int
	}{
		{name: "the call recorded after the chat was linked", store: geminiStore, sessions: [][]byte{running, whole}, relinked: true},
		{name: "the session grew without the call", store: geminiStore, sessions: [][]byte{running, idle}, looseAt: 2},
		{name: "linked at the call at once", store: geminiStore, sessions: [][]byte{whole}},
		{name: "a store declaring no call records", store: noCalls, sessions: [][]byte{running, whole}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			tmp := filepath.Join(t.TempDir(), ".gemini", "tmp")
			chats := filepath.Join(tmp, "h1", "chats")
			session := filepath.Join(chats, "session-2026-11-20T10-00-5a1d2c3e.jsonl")
			sub := filepath.Join(chats, sessionID, childID+".jsonl")
			d := Declared{Provider: "gemini", Plugin: "gemini", Store: c.store}
			locs := []Location{declaredLocation(d, compileStore(d), filepath.Dir(tmp), "test")}
			root := t.TempDir()
			a := newArchiver(t, root, nil)
			writeAged(t, sub, child, time.Hour)
			var first, last Outcome
			for i, s := range c.sessions {
				writeAged(t, session, s, time.Hour-time.Duration(i)*time.Minute)
				outs := byPath(a.SyncStores(ctx, locs, time.Time{}, nil))
				if i == 0 {
					first = outs[sub]
					require.Equal(t, ActionNew, first.Action, first.Reason)
				}
				last = outs[sub]
			}
			parentRun := a.ledger.ByPath(session).RunID
			e := a.ledger.ByPath(sub)
			require.NotNil(t, e)
			if !c.relinked {
				if len(c.sessions) > 1 {
					assert.Equal(t, ActionUnchanged, last.Action, last.Reason)
				}
				assert.Equal(t, first.RunID, e.RunID)
				assert.Equal(t, c.looseAt, e.LooseAt, "LooseAt")
				linkedTo(t, root, parentRun, e.RunID)
				return
			}
			require.Equal(t, ActionNew, last.Action, last.Reason)
			require.NotEqual(t, first.RunID, last.RunID)
			assert.Equal(t, last.RunID, e.RunID, "the chat's path is the new run's")
			assert.Zero(t, e.LooseAt, "linked at the call")
			old := a.ledger.byRun(first.RunID)
			require.NotNil(t, old)
			assert.Equal(t, []any{true, last.RunID}, []any{old.Closed, old.SupersededBy}, "the first child run ended, superseded")
			var link *transcript.Event
			for _, ev := range readRun(t, root, parentRun).events {
				if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID == last.RunID {
					link = ev
				}
			}
			require.NotNil(t, link)
			var supersedes string
			_ = json.Unmarshal(link.Step().Extra[lifecycle.SupersedesField], &supersedes)
			assert.Equal(t, []any{"agent." + childID + "_" + callID, 1, first.RunID}, []any{link.Path, link.Iteration, supersedes},
				"linked at the call, in the part holding it, superseding the first run")
			// The sub-agent's 215 output tokens once, beside the
			// session's 150.
			f := figures(t, root)
			require.NotNil(t, f.all.OutputTokens)
			assert.Equal(t, []any{[]string{parentRun}, int64(150 + 215)}, []any{f.listed, *f.all.OutputTokens})
			again := byPath(a.SyncStores(ctx, locs, time.Time{}, nil))
			assert.Equal(t, []string{ActionUnchanged, ActionUnchanged}, []string{again[session].Action, again[sub].Action}, "a further sync")
		})
	}
}
