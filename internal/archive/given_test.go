package archive

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/plugins/cursor"
	"github.com/twasm/twasm/plugins/kimi"
	"github.com/twasm/twasm/transcript"
)

// TestFilesGivenAlone: a file given by itself (import) is found in its
// store as sync finds it. StoreFile: a Kimi or Cursor session file in its
// store's directory (named as the plugin declares it) is that store's,
// resolved there (the facts line names its path from there, whose second
// directory is Kimi's session id); the same file anywhere else, or a
// file of a plugin that reads no facts, is not. SubAgentFile: a Kimi Code
// sub-agent's journal (its glob climbs, "../agent-*/wire.jsonl") names
// the main agent's journal beside it and the store's directory, a Kimi
// CLI sub-agent's context file before 0.59 (<uuid>_sub_N.jsonl) the
// session's context file beside it (a copy a compaction rotated,
// <uuid>_N.jsonl or <uuid>_sub_N_M.jsonl, is neither a session nor a
// sub-agent's file), and a Claude Code sub-agent's file its session's.
func TestFilesGivenAlone(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	put := func(rel string) string {
		p := filepath.Join(home, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	at := func(rel string) string { return filepath.Join(home, filepath.FromSlash(rel)) }
	kimiMain := put(".kimi-code/sessions/wd_a/s_1/agents/main/wire.jsonl")
	kimiSub := put(".kimi-code/sessions/wd_a/s_1/agents/agent-0/wire.jsonl")
	kimiCLI := put(".kimi/sessions/0cc1/s_2/wire.jsonl")
	kimiLoose := put("tmp/x/agents/main/wire.jsonl")
	kimiContext := put(".kimi/sessions/0cc1/3f6c2a1e-8b7d-4c5e-9a0f-1b2c3d4e5f60.jsonl")
	kimiRotated := put(".kimi/sessions/0cc1/3f6c2a1e-8b7d-4c5e-9a0f-1b2c3d4e5f60_1.jsonl")
	kimiContextSub := put(".kimi/sessions/0cc1/3f6c2a1e-8b7d-4c5e-9a0f-1b2c3d4e5f60_sub_12.jsonl")
	kimiSubRotated := put(".kimi/sessions/0cc1/3f6c2a1e-8b7d-4c5e-9a0f-1b2c3d4e5f60_sub_1_1.jsonl")
	cursorConv := put(".cursor/projects/home-me/agent-transcripts/c1/c1.jsonl")
	claudeSession := put(".claude/projects/-home-me/s3.jsonl")
	claudeSub := put(".claude/projects/-home-me/s3/subagents/agent-a1.jsonl")

	decl := append(append(DeclaredOf(kimi.Plugin.Manifest), DeclaredOf(cursor.Plugin.Manifest)...), DeclaredOf(claude.Plugin.Manifest)...)
	for _, c := range []struct {
		name, provider, path string
		wantStore            string // "": not a store's file
		wantDir              string
	}{
		{"kimi code main journal", "kimi", kimiMain, "Kimi Code sessions", at(".kimi-code/sessions")},
		{"kimi cli journal", "kimi", kimiCLI, "Kimi CLI sessions", at(".kimi/sessions")},
		{"kimi journal outside a sessions directory", "kimi", kimiLoose, "", ""},
		{"kimi cli context file (before 0.59)", "kimi", kimiContext, "Kimi CLI context files (before 0.59)", at(".kimi/sessions")},
		{"kimi cli context file rotated by a compaction", "kimi", kimiRotated, "", ""},
		{"kimi cli sub-agent's context file rotated by a compaction", "kimi", kimiSubRotated, "", ""},
		{"cursor transcript", "cursor", cursorConv, "Cursor agent transcripts", at(".cursor/projects")},
		{"claude session (no facts read)", "claude", claudeSession, "", ""},
	} {
		s, ok := StoreFile(decl, c.provider, c.path)
		switch {
		case c.wantStore == "" && ok:
			t.Errorf("%s: StoreFile gives store %s at %s, want none", c.name, s.Loc.Name, s.Loc.Dir)
		case c.wantStore != "" && (!ok || s.Loc.Name != c.wantStore || s.Loc.Dir != c.wantDir || s.Path != c.path):
			t.Errorf("%s: StoreFile %v %+v, want %s at %s", c.name, ok, s, c.wantStore, c.wantDir)
		}
	}
	for _, c := range []struct {
		name, provider, path, wantParent, wantDir string
	}{
		{"kimi code sub-agent", "kimi", kimiSub, kimiMain, at(".kimi-code/sessions")},
		{"claude sub-agent", "claude", claudeSub, claudeSession, at(".claude/projects/-home-me")},
		{"kimi cli sub-agent's context file (before 0.59)", "kimi", kimiContextSub, kimiContext, at(".kimi/sessions")},
	} {
		s, ok := SubAgentFile(decl, c.provider, c.path)
		if !ok || s.Parent != c.wantParent || s.Loc.Dir != c.wantDir || s.Path != c.path {
			t.Errorf("%s: SubAgentFile %v, parent %q in %q, want %q in %q", c.name, ok, s.Parent, dirOf(s), c.wantParent, c.wantDir)
		}
	}
	for _, p := range []string{kimiMain, kimiContext, kimiRotated, kimiSubRotated} {
		if s, ok := SubAgentFile(decl, "kimi", p); ok {
			t.Errorf("%s is a sub-agent's of %s", p, s.Parent)
		}
	}
}

func dirOf(s Session) string {
	if s.Loc == nil {
		return ""
	}
	return s.Loc.Dir
}

// TestSessionRunEndsWithItsStatus: a session's run that a sync ends later
// (its file deleted, or idle for Options.CloseIdle) ends with its latest
// part's agent status, as a run ended with its part does: a session
// ending on an unanswered prompt (a real Qwen Code chat) is incomplete,
// not an error. Before, such a run ended "error".
func TestSessionRunEndsWithItsStatus(t *testing.T) {
	t.Parallel()
	data := fixture(t, "testdata/captures/qwen/av_prompt_unanswered.jsonl")
	for _, c := range []struct {
		name string
		end  func(t *testing.T, a *Archiver, store, path string) Outcome
	}{
		{"deleted", func(t *testing.T, a *Archiver, store, path string) Outcome {
			require.NoError(t, os.Remove(path))
			outs := a.CloseGone(context.Background(), func(string) bool { return false }, []StoreDir{{Provider: "qwen", Dir: store}})
			require.Len(t, outs, 1)
			return outs[0]
		}},
		{"idle", func(t *testing.T, a *Archiver, store, path string) Outcome {
			old := time.Now().Add(-time.Hour)
			require.NoError(t, os.Chtimes(path, old, old))
			return a.SyncFile(context.Background(), "qwen", path)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root, store := t.TempDir(), t.TempDir()
			a := newArchiver(t, root, func(o *Options) { o.CloseIdle = 30 * time.Minute })
			path := filepath.Join(store, "chat.jsonl")
			writeAged(t, path, data, time.Minute) // not idle yet: the run stays open
			o := a.SyncFile(context.Background(), "qwen", path)
			require.Equal(t, ActionNew, o.Action, o.Reason)
			require.Equal(t, transcript.StatusIncomplete, o.Status)
			require.NotEqual(t, transcript.RunCompleted, lastEvent(t, root, o.RunID).Type)
			closed := c.end(t, a, store, path)
			require.Equal(t, ActionClosed, closed.Action, closed.Reason)
			end := lastEvent(t, root, o.RunID)
			require.Equal(t, transcript.RunCompleted, end.Type)
			assert.Equal(t, transcript.StatusIncomplete, end.Step().Status)
		})
	}
}

func lastEvent(t *testing.T, root, runID string) *transcript.Event {
	t.Helper()
	v := readRun(t, root, runID)
	return v.events[len(v.events)-1]
}
