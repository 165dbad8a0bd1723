package archive

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/testing/natives"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const fixtures = "../../../shared/fixtures"

func fixture(t testing.TB, rel string) []byte {
	t.Helper()
	path := filepath.Join(fixtures, rel)
	if strings.HasPrefix(rel, "testdata/") {
		// The project's own captures (testdata/captures/<provider>/).
		path = filepath.Join("..", "..", rel)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("fixture %s not available: %v", rel, err)
	}
	return b
}

func newArchiver(t *testing.T, root string, mod func(*Options)) *Archiver {
	t.Helper()
	opts := Options{
		Store: recorder.NewStore(root),
		Plugin: func(_ context.Context, provider string) (capture.Plugin, error) {
			p, ok := natives.ForProvider(provider)
			if !ok {
				return nil, fmt.Errorf("no bundled plugin for provider %q", provider)
			}
			return capture.NativePlugin(p), nil
		},
		CloseIdle: -1,
	}
	if mod != nil {
		mod(&opts)
	}
	a, _, err := Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	return a
}

type runView struct {
	events  []*transcript.Event
	calls   map[string]int
	results map[string]int
	parts   []*transcript.AgentResult
	output  int64
}

func readRun(t *testing.T, root, runID string) runView {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "transcripts", runID+".jsonl"))
	require.NoError(t, err)
	defer f.Close()
	evs, _, err := transcript.ReadAll(f)
	require.NoError(t, err)
	v := runView{events: evs, calls: map[string]int{}, results: map[string]int{}}
	for _, ev := range evs {
		switch ev.Type {
		case transcript.ToolCall:
			v.calls[ev.Tool().CallID]++
		case transcript.ToolResult:
			v.results[ev.Tool().CallID]++
		case transcript.StepCompleted:
			if ev.Path == "agent" {
				r, err := ev.Step().AgentResult()
				require.NoError(t, err)
				if r == nil {
					continue // a step without a result (cancelled) holds no part
				}
				v.parts = append(v.parts, r)
				if r.Usage != nil && r.Usage.OutputTokens != nil {
					v.output += *r.Usage.OutputTokens
				}
			}
		}
	}
	return v
}

func writeAged(t *testing.T, path string, b []byte, age time.Duration) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, b, 0o600))
	when := time.Now().Add(-age)
	require.NoError(t, os.Chtimes(path, when, when))
}

// A session archived in two parts holds every call once, paired with its
// result, and counts every token once: the same as archiving it whole.
func TestGrownSessionEqualsWhole(t *testing.T) {
	for _, tc := range []struct{ provider, fixture string }{
		{"claude", "claude/agentcmd_session_log_ansi_tool_error.jsonl"},
		{"codex", "codex/agentcmd_rollout_v0.40_vscode_session.jsonl"},
		{"codex", "codex/switchboard_rollout_v0.143_apply_patch.jsonl"},
		{"copilot", "copilot/lantern_events_v1.0.78_tool_errors.jsonl"},
		{"pi", "testdata/captures/pi/irrlicht_session_v3_bash_exit_code_1.jsonl"},
		{"pi", "testdata/captures/pi/irrlicht_session_v3_user_bash.jsonl"},
	} {
		t.Run(filepath.Base(tc.fixture), func(t *testing.T) { grownEqualsWhole(t, tc.provider, tc.fixture, false) })
	}
	// A session an older twasm archived, with a plain raw capture: the
	// part it grew by extends that capture plainly.
	t.Run("older plain raw capture", func(t *testing.T) {
		grownEqualsWhole(t, "claude", "claude/agentcmd_session_log_ansi_tool_error.jsonl", true)
	})
}

// asOlderStore turns the raw captures of a storage into what an older
// twasm wrote: plain "*.raw" files, named so by the transcripts and the
// ledger.
func asOlderStore(t *testing.T, root string) {
	t.Helper()
	framed, err := filepath.Glob(filepath.Join(root, "raw", "*", "*.raw"+rawfile.Ext))
	require.NoError(t, err)
	require.NotEmpty(t, framed)
	for _, p := range framed {
		b, err := rawfile.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(strings.TrimSuffix(p, rawfile.Ext), b, 0o600))
		require.NoError(t, os.Remove(p))
	}
	names, err := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
	require.NoError(t, err)
	for _, p := range append(names, filepath.Join(root, "archive", "ledger.jsonl")) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, bytes.ReplaceAll(b, []byte(".raw"+rawfile.Ext+`"`), []byte(`.raw"`)), 0o600))
	}
}

// A Pi session whose user went back in the tree between two syncs: the
// part that holds the entry leaving the branch says so (the plugin sees
// the part before it replayed), and the part before does not.
func TestGrownPiSessionBranch(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "testdata/captures/pi/irrlicht_session_v3_branch_rewind.jsonl")
	lines := bytes.SplitAfter(data, []byte("\n"))
	root, home := t.TempDir(), t.TempDir()
	a := newArchiver(t, root, nil)
	path := filepath.Join(home, "s.jsonl")
	// Line 8 is the prompt "three", whose parent is the answer "one".
	writeAged(t, path, bytes.Join(lines[:7], nil), time.Hour)
	o1 := a.SyncFile(ctx, "pi", path)
	require.Equal(t, ActionNew, o1.Action, o1.Reason)
	writeAged(t, path, data, time.Hour-time.Minute)
	o2 := a.SyncFile(ctx, "pi", path)
	require.Equal(t, ActionGrown, o2.Action, o2.Reason)
	run := readRun(t, root, o1.RunID)
	require.Len(t, run.parts, 2)
	branch := func(ws []string) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return strings.HasPrefix(w, "branch: entry 369bacbb goes on from entry e7360d4c") })
	}
	assert.False(t, branch(run.parts[0].Warnings), "part 1: %q", run.parts[0].Warnings)
	assert.True(t, branch(run.parts[1].Warnings), "part 2: %q", run.parts[1].Warnings)
}

func grownEqualsWhole(t *testing.T, provider, fix string, older bool) {
	ctx := context.Background()
	data := fixture(t, fix)
	lines := bytes.SplitAfter(data, []byte("\n"))
	home := t.TempDir()

	wholeRoot := t.TempDir()
	wa := newArchiver(t, wholeRoot, nil)
	wpath := filepath.Join(home, "whole.jsonl")
	writeAged(t, wpath, data, time.Hour)
	wo := wa.SyncFile(ctx, provider, wpath)
	require.Equal(t, ActionNew, wo.Action, wo.Reason)
	whole := readRun(t, wholeRoot, wo.RunID)
	require.NotEmpty(t, whole.calls)

	for _, cut := range []int{len(lines) / 3, len(lines) / 2, len(lines) - 2} {
		if cut < 1 {
			continue
		}
		root := t.TempDir()
		a := newArchiver(t, root, nil)
		path := filepath.Join(home, "split", "s.jsonl")
		writeAged(t, path, bytes.Join(lines[:cut], nil), time.Hour)
		o1 := a.SyncFile(ctx, provider, path)
		require.Equal(t, ActionNew, o1.Action, o1.Reason)
		if older {
			asOlderStore(t, root)
			a = newArchiver(t, root, nil)
		}
		writeAged(t, path, data, time.Hour-time.Minute)
		o2 := a.SyncFile(ctx, provider, path)
		require.Equal(t, ActionGrown, o2.Action, o2.Reason)
		assert.Equal(t, o1.RunID, o2.RunID)
		assert.Equal(t, 1, o2.Part)
		split := readRun(t, root, o1.RunID)
		require.Len(t, split.parts, 2)
		assert.Equal(t, whole.calls, split.calls, "cut at line %d: every call once", cut)
		assert.Equal(t, whole.results, split.results, "cut at line %d", cut)
		assert.Equal(t, whole.output, split.output, "cut at line %d: tokens counted once", cut)
		assert.Equal(t, split.parts[0].Raw.Path, split.parts[1].Raw.Path, "one raw capture per session")
		raw, err := rawfile.ReadFile(filepath.Join(root, split.parts[1].Raw.Path))
		require.NoError(t, err)
		assert.Equal(t, data, raw)
		assert.Equal(t, int64(len(data)), split.parts[1].Raw.Bytes)
		if older {
			onDisk, err := os.ReadFile(filepath.Join(root, split.parts[1].Raw.Path))
			require.NoError(t, err)
			assert.Equal(t, data, onDisk, "a plain capture is extended plainly")
		} else {
			assert.True(t, strings.HasSuffix(split.parts[1].Raw.Path, ".raw"+rawfile.Ext), split.parts[1].Raw.Path)
		}
		// Times are the session's, not the sync's.
		year := whole.events[0].Timestamp.Year()
		assert.Less(t, year, time.Now().Year()+1)
		assert.True(t, whole.events[0].Timestamp.Before(time.Now().Add(-24*time.Hour)), "run.started at %v", whole.events[0].Timestamp)
		for _, ev := range split.events {
			assert.True(t, ev.Timestamp.Before(time.Now().Add(-24*time.Hour)), "%s seq %d at %v", ev.Type, ev.Seq, ev.Timestamp)
		}
		o3 := a.SyncFile(ctx, provider, path)
		assert.Equal(t, ActionUnchanged, o3.Action)
	}
}

func TestIdempotentByContent(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "claude/agentcmd_session_log_v2.0.29_dangling_exitplanmode.jsonl")
	root, home := t.TempDir(), t.TempDir()
	a := newArchiver(t, root, nil)
	p1 := filepath.Join(home, "a", "s.jsonl")
	writeAged(t, p1, data, time.Hour)
	o := a.SyncFile(ctx, "claude", p1)
	require.Equal(t, ActionNew, o.Action, o.Reason)
	o = a.SyncFile(ctx, "claude", p1)
	assert.Equal(t, ActionUnchanged, o.Action)
	// The same bytes elsewhere (a copy, a moved file).
	p2 := filepath.Join(home, "b", "copy.jsonl")
	writeAged(t, p2, data, time.Minute)
	o = a.SyncFile(ctx, "claude", p2)
	assert.Equal(t, ActionUnchanged, o.Action)
	assert.Contains(t, o.Reason, "same bytes")
	require.NoError(t, a.Close())

	// The ledger is a cache: deleted, it is rebuilt from the transcripts
	// and nothing is archived twice.
	require.NoError(t, os.Remove(LedgerFile(root)))
	b, rebuilt, err := Open(Options{Store: recorder.NewStore(root), CloseIdle: -1})
	require.NoError(t, err)
	defer b.Close()
	assert.NotEmpty(t, rebuilt)
	o = b.SyncFile(ctx, "claude", p1)
	assert.Equal(t, ActionUnchanged, o.Action, o.Reason)
	runs, _ := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
	assert.Len(t, runs, 1)

	// A corrupt ledger is rebuilt too.
	require.NoError(t, b.Close())
	require.NoError(t, os.WriteFile(LedgerFile(root), []byte("{not json\n"), 0o600))
	c, rebuilt, err := Open(Options{Store: recorder.NewStore(root), CloseIdle: -1})
	require.NoError(t, err)
	defer c.Close()
	assert.Contains(t, rebuilt, "unreadable")
	assert.Len(t, c.Ledger().Entries(), 1)
}

// A session being written: only complete lines are archived; the rest
// comes next time, and nothing is lost or doubled.
func TestPartialLastLine(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "claude/agentcmd_session_log_ansi_tool_error.jsonl")
	root, home := t.TempDir(), t.TempDir()
	a := newArchiver(t, root, nil)
	path := filepath.Join(home, "s.jsonl")
	cut := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
	half := cut + 40
	require.NoError(t, os.WriteFile(path, data[:half], 0o600)) // mtime now: being written
	o := a.SyncFile(ctx, "claude", path)
	require.Equal(t, ActionNew, o.Action, o.Reason)
	assert.Equal(t, int64(cut), o.Bytes)
	o = a.SyncFile(ctx, "claude", path)
	assert.Equal(t, ActionUnchanged, o.Action, "the partial line waits")
	writeAged(t, path, data, time.Hour)
	o = a.SyncFile(ctx, "claude", path)
	require.Equal(t, ActionGrown, o.Action, o.Reason)
	assert.Equal(t, int64(len(data)-cut), o.Bytes)
	v := readRun(t, root, o.RunID)
	raw, err := rawfile.ReadFile(filepath.Join(root, v.parts[1].Raw.Path))
	require.NoError(t, err)
	assert.Equal(t, data, raw)
}

func TestCloseAndContinue(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "claude/agentcmd_session_log_ansi_tool_error.jsonl")
	lines := bytes.SplitAfter(data, []byte("\n"))
	root, home := t.TempDir(), t.TempDir()
	a := newArchiver(t, root, func(o *Options) { o.CloseIdle = 30 * time.Minute })
	path := filepath.Join(home, "s.jsonl")
	writeAged(t, path, bytes.Join(lines[:20], nil), time.Hour)
	o := a.SyncFile(ctx, "claude", path)
	require.Equal(t, ActionNew, o.Action)
	first := readRun(t, root, o.RunID)
	last := first.events[len(first.events)-1]
	require.Equal(t, transcript.RunCompleted, last.Type, "an idle session's run is ended")
	assert.Equal(t, 2025, last.Timestamp.Year())

	writeAged(t, path, data, time.Hour-time.Minute)
	o2 := a.SyncFile(ctx, "claude", path)
	require.Equal(t, ActionContinued, o2.Action, o2.Reason)
	assert.NotEqual(t, o.RunID, o2.RunID)
	second := readRun(t, root, o2.RunID)
	src := second.events[0].Step().Extra[SourceField]
	assert.Contains(t, string(src), o.RunID)
	for id := range second.calls {
		assert.Zero(t, first.calls[id], "call %s archived twice", id)
	}
}

func TestRedactAndDeletedSource(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "claude/agentcmd_session_log_v2.0.29_dangling_exitplanmode.jsonl")
	secret := "sk-ant-api03-" + strings.Repeat("A", 90)
	lines := bytes.SplitAfter(data, []byte("\n"))
	var withKey [][]byte
	for i, l := range lines {
		if i == 3 {
			l = bytes.Replace(l, []byte(`"timestamp"`), []byte(`"key":"`+secret+`","timestamp"`), 1)
		}
		withKey = append(withKey, l)
	}
	root, home := t.TempDir(), t.TempDir()
	store := filepath.Join(home, "store")
	a := newArchiver(t, root, func(o *Options) { o.Redact = true })
	path := filepath.Join(store, "s.jsonl")
	writeAged(t, path, bytes.Join(withKey, nil), time.Hour)
	o := a.SyncFile(ctx, "claude", path)
	require.Equal(t, ActionNew, o.Action, o.Reason)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := rawfile.ReadFile(p) // a framed raw capture's raw bytes
			assert.NotContains(t, string(b), secret, p)
		}
		return err
	})
	require.NoError(t, err)

	require.NoError(t, os.Remove(path))
	outs := a.CloseGone(ctx, func(string) bool { return false }, []StoreDir{{Provider: "codex", Dir: store}, {Provider: "claude", Dir: store}})
	require.Len(t, outs, 1)
	assert.Equal(t, ActionClosed, outs[0].Action)
	v := readRun(t, root, o.RunID)
	end := v.events[len(v.events)-1]
	assert.Equal(t, transcript.RunCompleted, end.Type)
	// Ended with its session's status (a dangling call: incomplete), not
	// as a failure.
	assert.Equal(t, transcript.StatusIncomplete, o.Status)
	assert.Equal(t, o.Status, end.Step().Status)
	// A vanished store closes nothing.
	assert.Empty(t, a.CloseGone(ctx, func(string) bool { return false }, []StoreDir{{Provider: "claude", Dir: filepath.Join(home, "other")}}))
}

// bundledDeclared are the stores the bundled plugins declare, in the
// host's order.
func bundledDeclared() []Declared {
	var out []Declared
	for _, n := range natives.Plugins() {
		out = append(out, DeclaredOf(n.Plugin.Manifest)...)
	}
	return out
}

// TestDiscover: the stores sync reads come from the plugins' manifests
// (the four bundled agents' at their defaults and under their override
// variables), then the config file's.
func TestDiscover(t *testing.T) {
	home := t.TempDir()
	env := func(m map[string]string) Env { return func(k string) string { return m[k] } }
	// Cline's and Roo Code's task folders: theirs (under data, which
	// $CLINE_DATA_DIR replaces) and the VS Code extensions' per editor.
	cline := func(data string, m map[string]string) map[string]string {
		m["Cline tasks"] = filepath.Join(data, "tasks")
		m["Cline sessions"] = filepath.Join(data, "sessions")
		for _, app := range []string{"Code", "Cursor", "VSCodium", "Windsurf"} {
			m["Cline tasks ("+app+")"] = filepath.Join(home, ".config", app, "User", "globalStorage", "saoudrizwan.claude-dev", "tasks")
			m["Roo Code tasks ("+app+")"] = filepath.Join(home, ".config", app, "User", "globalStorage", "rooveterinaryinc.roo-cline", "tasks")
			m["Kilo Code tasks ("+app+")"] = filepath.Join(home, ".config", app, "User", "globalStorage", "kilocode.kilo-code", "tasks")
		}
		return m
	}
	defData := filepath.Join(home, ".cline", "data")
	tests := []struct {
		name string
		env  map[string]string
		cfg  *Config
		want map[string]string // store name -> dir
		from map[string]string
	}{
		{name: "defaults", env: map[string]string{"HOME": home}, want: cline(defData, map[string]string{
			"Claude Code projects":                     filepath.Join(home, ".claude", "projects"),
			"Codex sessions":                           filepath.Join(home, ".codex", "sessions"),
			"Codex archived sessions":                  filepath.Join(home, ".codex", "archived_sessions"),
			"Gemini CLI chats":                         filepath.Join(home, ".gemini", "tmp"),
			"Copilot CLI session state":                filepath.Join(home, ".copilot", "session-state"),
			"Pi sessions":                              filepath.Join(home, ".pi", "agent", "sessions"),
			"OMP sessions":                             filepath.Join(home, ".omp", "agent", "sessions"),
			"OpenClaw sessions":                        filepath.Join(home, ".openclaw", "agents"),
			"OpenCode":                                 filepath.Join(home, ".local", "share", "opencode"),
			"OpenCode (older file tree)":               filepath.Join(home, ".local", "share", "opencode", "storage"),
			"Kilo CLI":                                 filepath.Join(home, ".local", "share", "kilo"),
			"Qwen Code chats":                          filepath.Join(home, ".qwen", "projects"),
			"Qwen Code chats (before JSONL)":           filepath.Join(home, ".qwen", "tmp"),
			"Goose":                                    filepath.Join(home, ".local", "share", "goose", "sessions"),
			"Goose session files (before sessions.db)": filepath.Join(home, ".local", "share", "goose", "sessions"),
			"Goose CLI session files (2024)":           filepath.Join(home, ".config", "goose", "sessions"),
			"Amp threads":                              filepath.Join(home, ".local", "share", "amp", "threads"),
			"Kimi Code sessions":                       filepath.Join(home, ".kimi-code", "sessions"),
			"Kimi CLI sessions":                        filepath.Join(home, ".kimi", "sessions"),
			"Kimi CLI context files (before 0.59)":     filepath.Join(home, ".kimi", "sessions"),
			"Factory Droid sessions":                   filepath.Join(home, ".factory", "sessions"),
			"Crush":                                    filepath.Join(home, ".local", "share", "crush"),
			"Crush projects":                           filepath.Join(home, ".local", "share", "crush"), // its list's, not found
			"Cursor agent transcripts":                 filepath.Join(home, ".cursor", "projects"),
			"Cursor IDE":                               filepath.Join(home, ".config", "Cursor", "User", "globalStorage"),
			"Cursor IDE workspaces (before the global database)": filepath.Join(home, ".config", "Cursor", "User", "workspaceStorage"),
		}), from: map[string]string{"Claude Code projects": "default", "OpenCode": "default", "Qwen Code chats": "default", "Goose": "default"}},
		{name: "overrides", env: map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": "/x/claude", "CODEX_HOME": "/x/codex", "GEMINI_CLI_HOME": "/x/g", "COPILOT_HOME": "/x/cp", "XDG_STATE_HOME": "/x/state", "PI_CODING_AGENT_DIR": "/x/pi", "XDG_DATA_HOME": "/x/data", "CLINE_DATA_DIR": "/x/cline", "QWEN_RUNTIME_DIR": "/x/qwen", "GOOSE_PATH_ROOT": "/x/goose", "KIMI_CODE_HOME": "/x/kc", "KIMI_SHARE_DIR": "/x/kimi", "DROID_SESSIONS_DIR": "/x/droid"},
			cfg: &Config{Stores: []ConfigStore{{Provider: "claude", Dir: "~/old", Pattern: "*.jsonl"}}},
			want: cline("/x/cline", map[string]string{
				"Claude Code projects":                     "/x/claude/projects",
				"Codex sessions":                           "/x/codex/sessions",
				"Codex archived sessions":                  "/x/codex/archived_sessions",
				"Gemini CLI chats":                         "/x/g/.gemini/tmp",
				"Copilot CLI session state":                "/x/cp/session-state",
				"Pi sessions":                              "/x/pi/sessions",
				"OMP sessions":                             filepath.Join(home, ".omp", "agent", "sessions"),
				"OpenClaw sessions":                        filepath.Join(home, ".openclaw", "agents"),
				"OpenCode":                                 "/x/data/opencode",
				"OpenCode (older file tree)":               "/x/data/opencode/storage",
				"Kilo CLI":                                 "/x/data/kilo",
				"Qwen Code chats":                          "/x/qwen/projects",
				"Qwen Code chats (before JSONL)":           "/x/qwen/tmp",
				"Goose":                                    "/x/goose/data/sessions",
				"Goose session files (before sessions.db)": "/x/goose/data/sessions",
				"Goose CLI session files (2024)":           filepath.Join(home, ".config", "goose", "sessions"),
				"Amp threads":                              "/x/data/amp/threads",
				"Kimi Code sessions":                       "/x/kc/sessions",
				"Kimi CLI sessions":                        "/x/kimi/sessions",
				"Kimi CLI context files (before 0.59)":     "/x/kimi/sessions",
				"Factory Droid sessions":                   "/x/droid",
				"Crush":                                    "/x/data/crush",
				"Crush projects":                           "/x/data/crush",
				"Cursor agent transcripts":                 filepath.Join(home, ".cursor", "projects"),
				"Cursor IDE":                               filepath.Join(home, ".config", "Cursor", "User", "globalStorage"),
				"Cursor IDE workspaces (before the global database)": filepath.Join(home, ".config", "Cursor", "User", "workspaceStorage"),
				"claude (config)": filepath.Join(home, "old"),
			}), from: map[string]string{"Claude Code projects": "$CLAUDE_CONFIG_DIR", "Gemini CLI chats": "$GEMINI_CLI_HOME", "Pi sessions": "$PI_CODING_AGENT_DIR", "OpenCode": "$XDG_DATA_HOME", "Cline tasks": "$CLINE_DATA_DIR", "Qwen Code chats": "$QWEN_RUNTIME_DIR", "Goose": "$GOOSE_PATH_ROOT", "claude (config)": "config"}},
		{name: "copilot before 1.0", env: map[string]string{"HOME": home, "XDG_STATE_HOME": "/x/state"}, want: cline(defData, map[string]string{
			"Claude Code projects":                     filepath.Join(home, ".claude", "projects"),
			"Codex sessions":                           filepath.Join(home, ".codex", "sessions"),
			"Codex archived sessions":                  filepath.Join(home, ".codex", "archived_sessions"),
			"Gemini CLI chats":                         filepath.Join(home, ".gemini", "tmp"),
			"Copilot CLI session state":                filepath.Join(home, ".copilot", "session-state"),
			"Copilot CLI session state (before 1.0)":   "/x/state/.copilot/session-state",
			"Pi sessions":                              filepath.Join(home, ".pi", "agent", "sessions"),
			"OMP sessions":                             filepath.Join(home, ".omp", "agent", "sessions"),
			"OpenClaw sessions":                        filepath.Join(home, ".openclaw", "agents"),
			"OpenCode":                                 filepath.Join(home, ".local", "share", "opencode"),
			"OpenCode (older file tree)":               filepath.Join(home, ".local", "share", "opencode", "storage"),
			"Kilo CLI":                                 filepath.Join(home, ".local", "share", "kilo"),
			"Qwen Code chats":                          filepath.Join(home, ".qwen", "projects"),
			"Qwen Code chats (before JSONL)":           filepath.Join(home, ".qwen", "tmp"),
			"Goose":                                    filepath.Join(home, ".local", "share", "goose", "sessions"),
			"Goose session files (before sessions.db)": filepath.Join(home, ".local", "share", "goose", "sessions"),
			"Goose CLI session files (2024)":           filepath.Join(home, ".config", "goose", "sessions"),
			"Amp threads":                              filepath.Join(home, ".local", "share", "amp", "threads"),
			"Kimi Code sessions":                       filepath.Join(home, ".kimi-code", "sessions"),
			"Kimi CLI sessions":                        filepath.Join(home, ".kimi", "sessions"),
			"Kimi CLI context files (before 0.59)":     filepath.Join(home, ".kimi", "sessions"),
			"Factory Droid sessions":                   filepath.Join(home, ".factory", "sessions"),
			"Crush":                                    filepath.Join(home, ".local", "share", "crush"),
			"Crush projects":                           filepath.Join(home, ".local", "share", "crush"), // its list's, not found
			"Cursor agent transcripts":                 filepath.Join(home, ".cursor", "projects"),
			"Cursor IDE":                               filepath.Join(home, ".config", "Cursor", "User", "globalStorage"),
			"Cursor IDE workspaces (before the global database)": filepath.Join(home, ".config", "Cursor", "User", "workspaceStorage"),
		}), from: map[string]string{"Copilot CLI session state (before 1.0)": "$XDG_STATE_HOME"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, from := map[string]string{}, map[string]string{}
			for _, l := range Discover(env(tt.env), "linux", bundledDeclared(), tt.cfg) {
				got[l.Name], from[l.Name] = l.Dir, l.From
				assert.Empty(t, l.Unusable, l.Name)
				assert.NotNil(t, l.Match, l.Name)
			}
			assert.Equal(t, tt.want, got)
			for k, v := range tt.from {
				assert.Equal(t, v, from[k], k)
			}
		})
	}

	// The patterns the bundled plugins declare match what the agents write.
	locs := map[string]Location{}
	for _, l := range Discover(env(map[string]string{"HOME": home}), "linux", bundledDeclared(), nil) {
		locs[l.Name] = l
	}
	for _, tc := range []struct {
		store, rel string
		want       bool
	}{
		{"Claude Code projects", "-home-me-proj/1f3e.jsonl", true},
		{"Claude Code projects", "-home-me-proj/1f3e/subagents/agent-a1.jsonl", true},
		{"Claude Code projects", "-home-me-proj/notes.txt", false},
		{"Codex sessions", "2025/10/01/rollout-2025-10-01T10-00-00-abc.jsonl", true},
		{"Codex sessions", "2025/10/01/other.jsonl", false},
		{"Cursor IDE workspaces (before the global database)", "f87f6e0b2cf1ae8645cc0c5ffaa99529/state.vscdb", true},
		{"Cursor IDE workspaces (before the global database)", "f87f6e0b2cf1ae8645cc0c5ffaa99529/state.vscdb.backup", false},
		{"Cursor IDE workspaces (before the global database)", "state.vscdb", false},
		{"Gemini CLI chats", "abc/chats/session-2025-10-01T10-00-abcd1234.json", true},
		{"Gemini CLI chats", "abc/chats/session-2025-10-01T10-00-abcd1234.jsonl", true},
		{"Gemini CLI chats", "abc/chats/session-x.jsonx", false},
		{"Gemini CLI chats", "abc/logs.json", false},
		{"Gemini CLI chats", "abc/def/chats/session-x.json", false},
		{"Copilot CLI session state", "id/events.jsonl", true},
		{"Copilot CLI session state", "id/sub/events.jsonl", false},
		{"Pi sessions", "--home-me-proj--/2026-01-05T10-00-00-000Z_0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a.jsonl", true},
		{"Pi sessions", "--home-me-proj--/notes.md", false},
		{"OMP sessions", "--home-me-proj--/2026-01-05T10-00-00-000Z_0b6e8c0e.jsonl", true},
		{"OpenClaw sessions", "main/sessions/0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a.jsonl", true},
		{"OpenClaw sessions", "main/0b6e8c0e.jsonl", false},
		// Folder stores: the pattern matches the task folders.
		{"Cline tasks", "1767225600000", true},
		{"Cline tasks", "1767225600000/ui_messages.json", false},
		{"Cline tasks (Code)", "1767225600000", true},
		{"Cline sessions", "sess_01", true},
		// The Kimi CLI's context files before 0.59: a session and its
		// sub-agents', not the copies a compaction rotated.
		{"Kimi CLI context files (before 0.59)", "0cc1/3f6c2a1e-8b7d-4c5e-9a0f-1b2c3d4e5f60.jsonl", true},
		{"Kimi CLI context files (before 0.59)", "0cc1/3f6c2a1e-8b7d-4c5e-9a0f-1b2c3d4e5f60_sub_1.jsonl", true},
		{"Kimi CLI context files (before 0.59)", "0cc1/3f6c2a1e-8b7d-4c5e-9a0f-1b2c3d4e5f60_sub_1042.jsonl", true},
		{"Kimi CLI context files (before 0.59)", "0cc1/3f6c2a1e-8b7d-4c5e-9a0f-1b2c3d4e5f60_1.jsonl", false},
		{"Kimi CLI context files (before 0.59)", "0cc1/3f6c2a1e-8b7d-4c5e-9a0f-1b2c3d4e5f60_sub_1_1.jsonl", false},
		{"Kimi CLI context files (before 0.59)", "0cc1/3f6c2a1e-8b7d-4c5e-9a0f-1b2c3d4e5f60_sub_0.jsonl", false},
	} {
		assert.Equal(t, tc.want, locs[tc.store].Match(tc.rel), "%s: %s", tc.store, tc.rel)
	}
	re, err := globRegexp("**/*.jsonl")
	require.NoError(t, err)
	assert.True(t, re.MatchString("a.jsonl"))
	assert.True(t, re.MatchString("x/y/a.jsonl"))
	for _, bad := range []string{"[abc", "{a,b", "{a,**}", "{a,b/c}", "{a,{b}}"} {
		_, err = globRegexp(bad)
		assert.Error(t, err, bad)
	}
}

// TestDiscoverDeclared: a declared store's root is the first that applies
// (its variable set, its OS), UnlessEnv hides it, a kind or a pattern this
// twasm cannot read is listed as unusable, and a retention setting is
// read from the agent's own settings file.
func TestDiscoverDeclared(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".m"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".m", "s.json"), []byte(`{"keepDays": 7}`), 0o600))
	roots := []abi.Root{{Env: "M_HOME"}, {Path: "~/Library/M", OS: "darwin"}, {Path: "~/.m"}}
	decl := []Declared{
		{Store: abi.Store{Name: "a", Roots: roots, Dir: "s", Pattern: "*.jsonl", RetentionDays: 30, RetentionFile: "s.json", RetentionKey: "keepDays"}, Provider: "m", Plugin: "mp"},
		{Store: abi.Store{Name: "b", Roots: []abi.Root{{Env: "M_OLD"}}, Pattern: "*.jsonl"}, Provider: "m"},
		{Store: abi.Store{Name: "c", Roots: roots, UnlessEnv: "M_NEW", Pattern: "*.jsonl"}, Provider: "m"},
		{Store: abi.Store{Name: "d", Roots: roots, Kind: "hologram", Pattern: "*"}, Provider: "m", Plugin: "mp"},
		{Store: abi.Store{Name: "e", Roots: roots, Pattern: "[x"}, Provider: "m", Plugin: "mp"},
	}
	env := func(m map[string]string) Env { return func(k string) string { return m[k] } }
	type loc struct {
		dir, from, unusable string
		days                int
	}
	tests := []struct {
		name string
		goos string
		env  map[string]string
		want map[string]loc
	}{
		{"linux", "linux", map[string]string{"HOME": home}, map[string]loc{
			"a": {filepath.Join(home, ".m", "s"), "default", "", 7},
			"c": {filepath.Join(home, ".m"), "default", "", 0},
			"d": {filepath.Join(home, ".m"), "default", `store kind "hologram" is not one this twasm reads (plugin mp): upgrade twasm`, 0},
			"e": {filepath.Join(home, ".m"), "default", `plugin mp: pattern "[x": unclosed [`, 0},
		}},
		{"darwin", "darwin", map[string]string{"HOME": home, "M_NEW": "1", "M_OLD": "/o"}, map[string]loc{
			"a": {filepath.Join(home, "Library", "M", "s"), "default", "", 30},
			"b": {"/o", "$M_OLD", "", 0},
			"d": {filepath.Join(home, "Library", "M"), "default", `store kind "hologram" is not one this twasm reads (plugin mp): upgrade twasm`, 0},
			"e": {filepath.Join(home, "Library", "M"), "default", `plugin mp: pattern "[x": unclosed [`, 0},
		}},
		{"env", "darwin", map[string]string{"HOME": home, "M_HOME": "/mh"}, map[string]loc{
			"a": {"/mh/s", "$M_HOME", "", 30},
			"c": {"/mh", "$M_HOME", "", 0},
			"d": {"/mh", "$M_HOME", `store kind "hologram" is not one this twasm reads (plugin mp): upgrade twasm`, 0},
			"e": {"/mh", "$M_HOME", `plugin mp: pattern "[x": unclosed [`, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]loc{}
			for _, l := range Discover(env(tt.env), tt.goos, decl, nil) {
				got[l.Name] = loc{l.Dir, l.From, l.Unusable, l.RetentionDays}
			}
			assert.Equal(t, tt.want, got)
		})
	}
	// An unusable store is reported, not walked.
	stores, sessions := Scan(Discover(env(map[string]string{"HOME": home}), "linux", decl[3:4], nil), time.Time{})
	require.Len(t, stores, 1)
	assert.False(t, stores[0].Found)
	assert.Equal(t, []string{stores[0].Unusable}, stores[0].Problems)
	assert.Empty(t, sessions)
}

func TestRetention(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	assert.Equal(t, 30, retentionSetting(path, "cleanupPeriodDays", 30), "no file: the default")
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"cleanupPeriodDays": 7}`, 7}, {`{"cleanupPeriodDays": 0}`, 0}, {`{"cleanupPeriodDays": -1}`, 30},
		{`{"cleanupPeriodDays": "7"}`, 7}, {`{"other": 7}`, 30}, {`not json`, 30}, {`{"cleanupPeriodDays": 1.5}`, 30},
	} {
		require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o600))
		assert.Equal(t, tc.want, retentionSetting(path, "cleanupPeriodDays", 30), tc.body)
	}
}

func TestLockExcludes(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	l, err := AcquireLock(ctx, root, false, nil)
	require.NoError(t, err)
	_, err = AcquireLock(ctx, root, false, nil)
	var busy *BusyError
	require.ErrorAs(t, err, &busy)
	assert.NotEmpty(t, busy.PID)
	cctx, cancel := context.WithCancel(ctx)
	waited := make(chan string, 1)
	go func() {
		_, err := AcquireLock(cctx, root, true, func(pid string) { waited <- pid; cancel() })
		assert.ErrorIs(t, err, context.Canceled)
		close(waited)
	}()
	<-waited
	for range waited {
	}
	require.NoError(t, l.Release())
	l2, err := AcquireLock(ctx, root, false, nil)
	require.NoError(t, err)
	require.NoError(t, l2.Release())
}

// A pretty-printed session (first line "{") is told apart by its next
// lines, and a head never changes as a file grows.
func TestHead(t *testing.T) {
	dir := t.TempDir()
	head := func(content string, settled bool) (string, bool) {
		p := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		f, err := os.Open(p)
		require.NoError(t, err)
		defer f.Close()
		b, ok, err := readHead(f, int64(len(content)), settled)
		require.NoError(t, err)
		return string(b), ok
	}
	a, _ := head("{\n  \"sessionId\": \"aaaa-1111-2222-3333-444444444444\",\n  \"startTime\": \"x\"\n}", true)
	b, _ := head("{\n  \"sessionId\": \"bbbb-1111-2222-3333-444444444444\",\n  \"startTime\": \"x\"\n}", true)
	assert.NotEqual(t, a, b)
	long := strings.Repeat("x", 100) + "\n"
	h1, ok := head(long+"partial", false)
	assert.True(t, ok)
	h2, _ := head(long+"partial line done\nmore\n", false)
	assert.Equal(t, h1, h2)
	_, ok = head("no line yet", false)
	assert.False(t, ok)
	h, ok := head("no line yet", true)
	assert.True(t, ok)
	assert.Equal(t, "no line yet", h)
	// Short lines: the head covers lines until minHead, complete ones only.
	h3, _ := head("{\"a\":1}\n{\"b\":2}\n", false)
	h4, _ := head("{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"+strings.Repeat("y", 80)+"\n", false)
	assert.Equal(t, "{\"a\":1}\n{\"b\":2}\n", h3)
	assert.True(t, strings.HasPrefix(h4, h3))
}

// A session whose first lines were shorter than the head when first
// synced still grows as one run.
func TestShortHeadGrows(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "codex/vibekanban_legacy_json_exec_command.jsonl")
	lines := bytes.SplitAfter(data, []byte("\n"))
	root, home := t.TempDir(), t.TempDir()
	a := newArchiver(t, root, nil)
	path := filepath.Join(home, "s.jsonl")
	short := []byte("{\"a\":1}\n")
	writeAged(t, path, short, time.Hour)
	o := a.SyncFile(ctx, "codex", path)
	require.Equal(t, ActionNew, o.Action, o.Reason)
	writeAged(t, path, append(append([]byte(nil), short...), bytes.Join(lines, nil)...), time.Hour-time.Minute)
	o2 := a.SyncFile(ctx, "codex", path)
	require.Equal(t, ActionGrown, o2.Action, o2.Reason)
	assert.Equal(t, o.RunID, o2.RunID)
}

func TestSyncStoresAndConfig(t *testing.T) {
	ctx := context.Background()
	claudeLog := fixture(t, "claude/agentcmd_session_log_v2.0.29_dangling_exitplanmode.jsonl")
	rollout := fixture(t, "codex/switchboard_rollout_v0.143_apply_patch.jsonl")
	home, root := t.TempDir(), t.TempDir()
	writeAged(t, filepath.Join(home, ".claude", "projects", "p", "s.jsonl"), claudeLog, time.Hour)
	writeAged(t, filepath.Join(home, ".codex", "sessions", "2025", "10", "01", "rollout-x.jsonl"), rollout, 40*24*time.Hour)
	writeAged(t, filepath.Join(home, "old", "a.jsonl"), claudeLog, time.Hour) // the same bytes in a config store
	cfgPath := filepath.Join(home, "sync.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{"stores":[{"provider":"claude","dir":"~/old","pattern":"*.jsonl"}]}`), 0o600))
	cfg, err := LoadConfig(cfgPath, true)
	require.NoError(t, err)
	_, err = LoadConfig(filepath.Join(home, "none.json"), true)
	assert.Error(t, err)
	empty, err := LoadConfig(filepath.Join(home, "none.json"), false)
	require.NoError(t, err)
	assert.Empty(t, empty.Stores)
	for _, bad := range []string{`{`, `{"stores":[{"dir":"x"}]}`, `{"stores":[{"provider":"claude","dir":"x","pattern":"[x"}]}`} {
		require.NoError(t, os.WriteFile(cfgPath, []byte(bad), 0o600))
		_, err := LoadConfig(cfgPath, true)
		assert.Error(t, err, bad)
	}
	env := func(k string) string { return map[string]string{"HOME": home}[k] }
	locs := Discover(env, "linux", bundledDeclared(), cfg)

	dry := newArchiver(t, root, func(o *Options) { o.DryRun = true })
	var calls int
	rep := dry.SyncStores(ctx, locs, time.Time{}, func(done, total int, o *Outcome) { calls++ })
	assert.Equal(t, 3, calls)
	assert.Equal(t, 3, rep.Counts[ActionNew], "a dry run cannot know the copy is the same bytes")
	_, err = os.Stat(filepath.Join(root, "transcripts"))
	assert.True(t, os.IsNotExist(err), "a dry run writes nothing")
	require.NoError(t, dry.Close())

	a := newArchiver(t, root, nil)
	rep = a.SyncStores(ctx, locs, time.Time{}, nil)
	assert.Equal(t, 2, rep.Counts[ActionNew], "%v", rep.Outcomes)
	assert.Equal(t, 1, rep.Counts[ActionUnchanged])
	found := 0
	for _, s := range rep.Stores {
		if s.Found {
			found++
		}
	}
	assert.Equal(t, 3, found)
	// --since leaves the old rollout out.
	rep = a.SyncStores(ctx, locs, time.Now().Add(-24*time.Hour), nil)
	assert.Equal(t, 2, rep.Counts[ActionUnchanged])
	assert.Zero(t, rep.Counts[ActionNew])
}

// TestHeadSteps: readHead reads headStep bytes first and more only when
// the head's lines do not end in them; the head is the one a read of
// maxHead at once finds (headOnce), whatever the lines' lengths around
// the steps' bounds.
func TestHeadSteps(t *testing.T) {
	headOnce := func(content string, settled bool) (string, bool) {
		b := []byte(content)[:min(len(content), maxHead)]
		end := 0
		for end < minHead {
			i := bytes.IndexByte(b[end:], '\n')
			if i < 0 {
				break
			}
			end += i + 1
		}
		switch {
		case end > 0:
			return string(b[:end]), true
		case settled || len(b) == maxHead:
			return string(b), len(b) > 0
		}
		return "", false
	}
	line := func(n int) string { return strings.Repeat("x", n-1) + "\n" }
	for _, tc := range []struct {
		name, content string
	}{
		{"short first line", line(300) + line(50)},
		{"first line ends at the first step", line(headStep) + line(10)},
		{"first line ends past the first step", line(headStep+1) + line(10)},
		{"first line of 3 steps", line(3*headStep) + "partial"},
		{"short lines across the step", line(headStep-10) + line(40) + line(40)},
		{"no line end in maxHead", strings.Repeat("z", maxHead+10) + "\n"},
		{"line ends at maxHead", line(maxHead) + line(5)},
		{"no line end, unsettled", strings.Repeat("z", 2*headStep+3)},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, settled := range []bool{false, true} {
				got, ok, err := readHead(strings.NewReader(tc.content), int64(len(tc.content)), settled)
				require.NoError(t, err)
				want, wantOK := headOnce(tc.content, settled)
				assert.Equal(t, wantOK, ok, "settled %v", settled)
				assert.Equal(t, len(want), len(got), "settled %v", settled)
				assert.Equal(t, want, string(got), "settled %v", settled)
			}
		})
	}
}
