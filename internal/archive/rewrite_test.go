package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/transcript"
)

// chatFile is a Gemini CLI chat file, its members in the order Gemini
// writes them (the head, sessionId and projectHash, stays the same from
// one rewrite to the next).
type chatFile struct {
	SessionID   string            `json:"sessionId"`
	ProjectHash string            `json:"projectHash"`
	StartTime   string            `json:"startTime"`
	LastUpdated string            `json:"lastUpdated"`
	Messages    []json.RawMessage `json:"messages"`
}

func loadChat(t *testing.T, path string) chatFile {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var c chatFile
	require.NoError(t, json.Unmarshal(b, &c))
	return c
}

// version is the chat as Gemini rewrites it after its first n messages
// (pretty-printed, no final newline), with an edit applied to messages.
func (c chatFile) version(t *testing.T, n int, edit func([]json.RawMessage)) []byte {
	t.Helper()
	v := c
	v.Messages = append([]json.RawMessage(nil), c.Messages[:n]...)
	if edit != nil {
		edit(v.Messages)
	}
	var m struct {
		Timestamp string `json:"timestamp"`
	}
	require.NoError(t, json.Unmarshal(v.Messages[n-1], &m))
	v.LastUpdated = m.Timestamp
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return b
}

// messageBlocks counts the blocks of each message id.
func messageBlocks(evs []*transcript.Event) map[string]int {
	ids := map[string]int{}
	for _, ev := range evs {
		if m := ev.Message(); m != nil && m.ID != "" {
			ids[m.ID] += len(m.Blocks)
		}
	}
	return ids
}

func messageIDs(evs []*transcript.Event) map[string]int {
	ids := map[string]int{}
	for _, ev := range evs {
		if m := ev.Message(); m != nil && m.ID != "" {
			ids[m.ID]++
		}
	}
	return ids
}

// A Gemini CLI chat rewritten in place by every turn is one run: each new
// version is a part holding only what is new; a version that changed an
// earlier message says so, holds the new version of it, and both raw
// versions are kept.
func TestGeminiChatRewrittenInPlace(t *testing.T) {
	chat := loadChat(t, filepath.Join("..", "..", "testdata", "captures", "gemini", "agentcmd_session_file_v0.11_cancelled_and_failed_tools.json"))
	require.GreaterOrEqual(t, len(chat.Messages), 12)
	ctx := context.Background()
	root := t.TempDir()
	src := filepath.Join(t.TempDir(), ".gemini", "tmp", "h", "chats", "session-2025-10-27T19-56-981c87cb.json")
	a := newArchiver(t, root, nil)

	v1 := chat.version(t, 5, nil)
	// Just written: a document is read only once it settles.
	writeAged(t, src, v1, 0)
	o0 := a.SyncFile(ctx, "gemini", src)
	require.Equal(t, ActionPending, o0.Action, o0.Reason)
	writeAged(t, src, v1, time.Hour)
	o1 := a.SyncFile(ctx, "gemini", src)
	require.Equal(t, ActionNew, o1.Action, o1.Reason)

	// The next turn: the file rewritten with more messages (and a new
	// lastUpdated). Same run, only the new messages.
	// The second message also gained a tool call in place (a message
	// that grows): only its new block and call are archived.
	v2 := chat.version(t, 9, func(ms []json.RawMessage) {
		var msg map[string]any
		require.NoError(t, json.Unmarshal(ms[1], &msg))
		calls, _ := msg["toolCalls"].([]any)
		require.NotEmpty(t, calls)
		extra := map[string]any{}
		for k, v := range calls[0].(map[string]any) {
			extra[k] = v
		}
		extra["id"] = extra["id"].(string) + "-second"
		msg["toolCalls"] = append(calls, extra)
		ms[1], _ = json.Marshal(msg)
	})
	writeAged(t, src, v2, 50*time.Minute)
	o2 := a.SyncFile(ctx, "gemini", src)
	require.Equal(t, ActionGrown, o2.Action, o2.Reason)
	assert.Equal(t, o1.RunID, o2.RunID)
	assert.Equal(t, 1, o2.Part)
	assert.Contains(t, o2.Reason, "rewritten in place")
	assert.Contains(t, o2.Reason, "only new messages")

	run := readRun(t, root, o1.RunID)
	for id, n := range run.calls {
		assert.Equal(t, 1, n, "call %s", id)
	}
	// The same as archiving the second version whole.
	wholeRoot := t.TempDir()
	whole := filepath.Join(t.TempDir(), "session-whole.json")
	writeAged(t, whole, v2, time.Hour)
	w := newArchiver(t, wholeRoot, nil).SyncFile(ctx, "gemini", whole)
	require.Equal(t, ActionNew, w.Action, w.Reason)
	wrun := readRun(t, wholeRoot, w.RunID)
	assert.Equal(t, messageBlocks(wrun.events), messageBlocks(run.events), "every block of every message once")
	assert.Equal(t, wrun.calls, run.calls)
	assert.Equal(t, wrun.results, run.results)
	assert.Equal(t, wrun.output, run.output, "tokens counted once")

	// Unchanged: nothing.
	o := a.SyncFile(ctx, "gemini", src)
	assert.Equal(t, ActionUnchanged, o.Action, o.Reason)

	// A rewrite that also changed an earlier message (not a pure
	// append): reported, the new version archived, the old kept.
	var edited string
	v3 := chat.version(t, len(chat.Messages), func(ms []json.RawMessage) {
		for i, m := range ms[:5] {
			var msg map[string]any
			require.NoError(t, json.Unmarshal(m, &msg))
			if msg["type"] == "gemini" && msg["content"] != "" {
				msg["content"] = msg["content"].(string) + " (edited)"
				edited = msg["id"].(string)
				ms[i], _ = json.Marshal(msg)
				return
			}
		}
	})
	require.NotEmpty(t, edited)
	writeAged(t, src, v3, 40*time.Minute)
	o3 := a.SyncFile(ctx, "gemini", src)
	require.Equal(t, ActionGrown, o3.Action, o3.Reason)
	assert.Equal(t, o1.RunID, o3.RunID)
	assert.Contains(t, o3.Reason, "changed")
	assert.Contains(t, o3.Reason, "message "+edited)

	run = readRun(t, root, o1.RunID)
	require.Len(t, run.parts, 3)
	texts := 0
	for _, ev := range run.events {
		if m := ev.Message(); m != nil && m.ID == edited {
			texts++
			assert.Equal(t, ev.Iteration == 2, m.Extra[RevisedField] != nil, "only the new version is marked revised (part %d)", ev.Iteration)
		}
	}
	assert.Equal(t, 2, texts, "the changed message: its old version (part 0) and its new one (part 2)")
	// Every version's bytes are kept, each in its part's raw capture.
	for i, want := range [][]byte{v1, v2, v3} {
		require.NotNil(t, run.parts[i].Raw, "part %d", i)
		got, err := rawfile.ReadFile(filepath.Join(root, filepath.FromSlash(run.parts[i].Raw.Path)))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "raw capture of part %d is not version %d", i, i+1)
	}
	var ref struct {
		Source PartRef `json:"source"`
	}
	for _, ev := range run.events {
		if ev.Type == transcript.StepCompleted && ev.Iteration == 2 {
			require.NoError(t, json.Unmarshal(ev.Step().Result, &ref))
		}
	}
	assert.True(t, ref.Source.Rewritten)
	assert.Contains(t, ref.Source.Changed, "message "+edited)

	// A rewrite that dropped the last message: said so; the earlier part
	// keeps it.
	var last struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal(chat.Messages[len(chat.Messages)-1], &last))
	writeAged(t, src, chat.version(t, len(chat.Messages)-1, nil), 30*time.Minute)
	o4 := a.SyncFile(ctx, "gemini", src)
	require.Equal(t, ActionGrown, o4.Action, o4.Reason)
	assert.Contains(t, o4.Reason, "message "+last.ID+" removed")
	assert.Contains(t, o4.Reason, "message "+edited, "the edit undone is a change too")
	assert.Equal(t, 1, messageIDs(readRun(t, root, o1.RunID).events)[last.ID])

	// The ledger lost: rebuilt from the transcripts, the last version is
	// recognised as archived.
	require.NoError(t, a.Close())
	require.NoError(t, os.Remove(LedgerFile(root)))
	b := newArchiver(t, root, nil)
	o = b.SyncFile(ctx, "gemini", src)
	assert.Equal(t, ActionUnchanged, o.Action, o.Reason)
	assert.Equal(t, o1.RunID, o.RunID)
}
