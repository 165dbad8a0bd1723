package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/twasm/twasm/internal/bundled"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/plugload"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/tools/wasmbuild"
	"github.com/twasm/twasm/internal/wire"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNewCmdRecordFlags(t *testing.T) {
	tests := []struct {
		argv    string
		wantErr string
		check   func(t *testing.T, o *Options)
	}{
		{argv: "--provider claude --input x.jsonl", check: func(t *testing.T, o *Options) {
			assert.Equal(t, "claude", o.Provider)
			assert.Equal(t, "x.jsonl", o.Input)
			assert.Equal(t, "agent", o.Path)
			assert.Empty(t, o.Command)
		}},
		{argv: "--provider codex --live --json -- codex exec --json hi", check: func(t *testing.T, o *Options) {
			assert.Equal(t, []string{"codex", "exec", "--json", "hi"}, o.Command)
			assert.True(t, o.Live)
			assert.True(t, o.JSON)
		}},
		{argv: "--plugin ./p.wasm --run-id R --path a.b --iteration 2 --fsync always", check: func(t *testing.T, o *Options) {
			assert.Equal(t, "./p.wasm", o.Plugins.Plugin)
			assert.Equal(t, "a.b", o.Path)
			assert.Equal(t, 2, o.Iter)
		}},
		{argv: "--input x", wantErr: "--provider is required"},
		{argv: "--provider claude stray", wantErr: "put the agent command after --"},
		{argv: "--provider claude --input x -- claude", wantErr: "exclude each other"},
		{argv: "--provider claude --iteration -1", wantErr: "must not be negative"},
		{argv: "--provider claude --fsync sometimes", wantErr: "--fsync must be"},
	}
	for _, tc := range tests {
		t.Run(tc.argv, func(t *testing.T) {
			env := cmdtest.New(t)
			var got *Options
			cmd := NewCmdRecord(env.F, func(_ context.Context, o *Options) error { got = o; return nil })
			err := cmdtest.Parse(cmd, tc.argv)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				var fe *cmdutil.FlagError
				assert.True(t, errors.As(err, &fe), "a usage error: %T", err)
				return
			}
			require.NoError(t, err)
			tc.check(t, got)
		})
	}
}

// TestRunWithPluginFile records the bundled example through the claude
// plugin (bundled, or built from source and passed as a file), with --live (the goroutine
// goleak watches), --redact and --json.
func TestRunWithPluginFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm plugin")
	}
	// The bundled plugin (built by make before the tests) runs trusted;
	// without it, a plugin built from source is passed as a file, which
	// runs sandboxed.
	flags := plugload.Flags{}
	provider := "claude"
	if _, ok := bundled.Files()["claude.wasm"]; !ok {
		if raceEnabled {
			t.Skip("no bundled claude plugin (run make plugins), and a sandboxed one is too slow under -race")
		}
		wasm := wasmbuild.ForTest(t, filepath.Join("..", "..", "..", "plugins", "claude", "wasm"))
		flags.Plugin = filepath.Join(t.TempDir(), "claude.wasm")
		provider = ""
		require.NoError(t, os.WriteFile(flags.Plugin, wasm, 0o600))
	}
	example, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "claude", "stream-json.jsonl"))
	require.NoError(t, err)
	key := "sk-ant-api03-" + strings.Repeat("Zq9", 12)
	input := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(strings.Replace(string(example), "Hello, world!", "Hello "+key, 1)), 0o600))

	env := cmdtest.New(t)
	opts := &Options{F: env.F, Plugins: flags, Provider: provider, Input: input, Path: "agent", Prompt: "say hello", Redact: true, Live: true, JSON: true, Fsync: "never"}
	require.NoError(t, Run(context.Background(), opts))

	var sum Summary
	require.NoError(t, json.Unmarshal(env.Out.Bytes(), &sum), env.Out.String())
	assert.Equal(t, "ok", sum.Status)
	assert.Equal(t, "claude", sum.Provider)
	if assert.NotNil(t, sum.Plugin, "the step names its plugin") {
		assert.Equal(t, "claude", sum.Plugin.Name)
		assert.Len(t, sum.Plugin.SHA256, 64, "the loaded module's sha256, whether preloaded or a --plugin file")
	}
	assert.Equal(t, 1, sum.Tools["Bash"], "%s\n%s", env.Out.String(), env.ErrOut.String())
	assert.Equal(t, 1, sum.Redacted["anthropic_api_key"], "the key is in the raw line once: %s", env.Out.String())
	assert.NoError(t, runid.Valid(sum.RunID))
	live := env.ErrOut.String()
	assert.Contains(t, live, "run.started", "the live view sees the first event")
	assert.Contains(t, live, "run.completed")
	assert.Contains(t, live, "transcript: ")
	assert.Contains(t, live, "redacted: 1 value(s): anthropic_api_key 1")
	for _, dir := range []string{"transcripts", "raw"} {
		err := filepath.WalkDir(filepath.Join(env.Storage, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := rawfile.ReadFile(p) // a framed raw capture's raw bytes
			require.NoError(t, err)
			assert.NotContains(t, string(b), key, p)
			return nil
		})
		require.NoError(t, err)
	}
}

// TestRunGivesGCBack: a record runs with the collector at
// recordGCPercent (cmdutil.GCRaise, tested there) and leaves the
// process's setting as it found it, a user's higher one or off included.
func TestRunGivesGCBack(t *testing.T) {
	if _, ok := bundled.Files()["claude.wasm"]; !ok {
		t.Skip("no bundled claude plugin (run make plugins)")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, before := range []int{100, recordGCPercent * 4, -1} {
		debug.SetGCPercent(before)
		env := cmdtest.New(t)
		opts := &Options{F: env.F, Provider: "claude", Input: filepath.Join("..", "..", "..", "examples", "claude", "stream-json.jsonl"), Path: "agent", Fsync: "never"}
		require.NoError(t, Run(context.Background(), opts), env.ErrOut.String())
		got := debug.SetGCPercent(100)
		assert.Equal(t, before, got, "GOGC after a record")
	}
}

func TestRedactedSummary(t *testing.T) {
	assert.Equal(t, "nothing matched a secret pattern", cmdutil.RedactedSummary(nil))
	assert.Equal(t, "3 value(s): bearer_token 1, github_token 2", cmdutil.RedactedSummary(map[string]int{"github_token": 2, "bearer_token": 1}))
}

// TestPluginLoadOrder checks what record writes when the provider's
// plugin is not there or does not load. A provider no plugin serves is a
// usage error before any run is written. A plugin that fails once the
// run has begun (it loads alongside the run's start; here an external
// module routed by a forged manifest record, which exports nothing)
// leaves the run with its step failed, saying why, and nothing read; the
// host remembers the failure, so the next record is refused before a run
// is written.
func TestPluginLoadOrder(t *testing.T) {
	if len(bundled.Files()) == 0 {
		t.Skip("no bundled plugins (run make plugins): the host refuses to start")
	}
	cache, config, plugins := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("TWASM_PLUGIN_PATH", "")
	// An empty module: it compiles, and fails the host's checks.
	module := []byte("\x00asm\x01\x00\x00\x00")
	require.NoError(t, os.WriteFile(filepath.Join(plugins, "forged.wasm"), module, 0o600))
	key := fmt.Sprintf("%08x-%d", crc32.Checksum(module, crc32.MakeTable(crc32.Castagnoli)), len(module))
	manifests := filepath.Join(cache, "twasm", "wazero", "manifests")
	forge := func(t *testing.T) {
		// Written as this host writes its records (host_minor: a record of
		// an older host is not trusted and the module is read again).
		forged := `{"sha256":"` + strings.Repeat("0", 64) + `","manifest":{"name":"forged","version":"1","providers":["forged"]},"host_minor":` + strconv.Itoa(wire.Minor) + `}`
		require.NoError(t, os.MkdirAll(manifests, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(manifests, key+".json"), []byte(forged), 0o600))
		require.NoError(t, os.RemoveAll(filepath.Join(manifests, key+".failed.json")))
	}
	input := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(`{"type":"result"}`+"\n"), 0o600))

	tests := []struct {
		name     string
		provider string
		runID    bool // append to a run begun before
		again    bool // a record failed on the plugin before
		wantErr  string
		flagErr  bool // a usage error, exit 2
		written  bool // a step is written, and fails
	}{
		{name: "unknown provider", provider: "nope", wantErr: `no plugin serves provider "nope"`, flagErr: true},
		{name: "plugin fails to load", provider: "forged", wantErr: "the plugin did not load", written: true},
		{name: "plugin fails to load, attached", provider: "forged", runID: true, wantErr: "the plugin did not load", written: true},
		{name: "plugin failed before", provider: "forged", again: true, wantErr: `no plugin serves provider "forged"`, flagErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			forge(t)
			env := cmdtest.New(t)
			opts := &Options{F: env.F, Plugins: plugload.Flags{PluginPath: []string{plugins}}, Provider: tc.provider, Input: input, Path: "agent", Fsync: "never"}
			if tc.again {
				require.ErrorContains(t, Run(context.Background(), opts), "the plugin did not load")
			}
			if tc.runID {
				run, err := lifecycle.Start(context.Background(), env.F.Store(), lifecycle.RunOptions{Name: "begun"})
				require.NoError(t, err)
				opts.RunID = run.RunID()
				require.NoError(t, run.Detach())
			}
			before, err := filepath.Glob(filepath.Join(env.Dir, "*.jsonl"))
			require.NoError(t, err)
			env.ErrOut.Reset()
			err = Run(context.Background(), opts)
			require.ErrorContains(t, err, tc.wantErr)
			var fe *cmdutil.FlagError
			assert.Equal(t, tc.flagErr, errors.As(err, &fe), "usage error: %v", err)
			after, err := filepath.Glob(filepath.Join(env.Dir, "*.jsonl"))
			require.NoError(t, err)
			if !tc.written {
				assert.Equal(t, before, after, "no run is written")
				return
			}
			assert.Contains(t, env.ErrOut.String(), "its plugin did not load, so no input was read")
			path := filepath.Join(env.Dir, opts.RunID+".jsonl")
			if !tc.runID {
				require.Len(t, after, len(before)+1)
				for _, p := range after {
					if !slices.Contains(before, p) {
						path = p
					}
				}
			}
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			statuses := map[transcript.EventType]string{}
			r := transcript.NewReader(f)
			for r.Next() {
				ev := r.Event()
				if sp := ev.Step(); sp != nil && sp.Status != "" {
					statuses[ev.Type] = sp.Status
					if ev.Type == transcript.StepCompleted {
						assert.Contains(t, sp.Error, "is not a usable twasm plugin", "the step says why")
					}
				}
			}
			require.NoError(t, r.Err())
			assert.Equal(t, "error", statuses[transcript.StepCompleted], "%s", path)
			if !tc.runID {
				assert.Equal(t, "error", statuses[transcript.RunCompleted])
			}
			raw, _ := filepath.Glob(filepath.Join(env.Storage, "raw", strings.TrimSuffix(filepath.Base(path), ".jsonl"), "*"))
			assert.Empty(t, raw, "no raw capture: nothing was read")
		})
	}
}

// TestStepOwn: the end's failure, which StepAt joins to the step's error
// when the step's completion and run.completed are one write, is taken
// out of it, so that the two are reported apart; anything else is kept.
func TestStepOwn(t *testing.T) {
	step := errors.New("step")
	end := errors.Join(errors.New("no space left on device"))
	other := errors.Join(errors.New("other"))
	for _, tt := range []struct {
		name          string
		stepErr, want error
		endErr        error
	}{
		{"no end failure", step, step, nil},
		{"both", errors.Join(step, end), step, end},
		{"the end's alone", errors.Join(end), nil, end},
		{"not joined", step, step, end},
		{"another join", other, other, end},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, stepOwn(tt.stepErr, tt.endErr))
		})
	}
}

// TestSummarySubRuns: --json states the usage and tool calls of the runs
// the step's sub-agents wrote, as view and stats do; usage stays the
// step's own (a sub-agent's messages are not in the step that started
// it).
func TestSummarySubRuns(t *testing.T) {
	if _, ok := bundled.Files()["claude.wasm"]; !ok {
		t.Skip("no bundled claude plugin (run make plugins)")
	}
	tests := []struct {
		name      string
		input     string
		own, sub  *transcript.Usage
		subTools  int
		ownTools  map[string]int
		noSubRuns bool
	}{
		// The sidechain's two messages (700 + 10, 720 + 8 tokens) and its
		// one call are the Task's child run; every message states the
		// standard service tier.
		{name: "sidechain", input: filepath.Join("testdata", "golden", "claude", "session_log_sidechain.jsonl"),
			own:      &transcript.Usage{InputTokens: new(int64(16109)), UncachedInputTokens: new(int64(9)), CacheReadTokens: new(int64(16100)), CacheWriteTokens: new(int64(0)), OutputTokens: new(int64(39)), ServiceTier: "standard"},
			sub:      &transcript.Usage{InputTokens: new(int64(1420)), UncachedInputTokens: new(int64(1420)), CacheReadTokens: new(int64(0)), CacheWriteTokens: new(int64(0)), OutputTokens: new(int64(18)), ServiceTier: "standard"},
			subTools: 1, ownTools: map[string]int{"Task": 1}},
		{name: "no sub-agent", input: filepath.Join("examples", "claude", "stream-json.jsonl"), noSubRuns: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := cmdtest.New(t)
			opts := &Options{F: env.F, Provider: "claude", Input: filepath.Join("..", "..", "..", tc.input),
				Path: "agent", JSON: true, Fsync: "never"}
			require.NoError(t, Run(context.Background(), opts))
			var sum Summary
			require.NoError(t, json.Unmarshal(env.Out.Bytes(), &sum), env.Out.String())
			if tc.noSubRuns {
				assert.Nil(t, sum.SubRunUsage, env.Out.String())
				assert.Zero(t, sum.SubRunTools, env.Out.String())
				assert.NotContains(t, env.Out.String(), "sub_run")
				return
			}
			assert.Equal(t, tc.own, sum.Usage, env.Out.String())
			assert.Equal(t, tc.sub, sum.SubRunUsage, env.Out.String())
			all := &transcript.Usage{}
			all.Add(tc.own)
			all.Add(tc.sub)
			assert.Equal(t, all, sum.UsageInAll, env.Out.String())
			assert.Equal(t, tc.subTools, sum.SubRunTools, env.Out.String())
			assert.Equal(t, tc.ownTools, sum.Tools, env.Out.String())
		})
	}
}
