package record

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/twasm/twasm/internal/bundled"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/plugload"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/tools/wasmbuild"
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
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.NotContains(t, string(b), key, p)
			return nil
		})
		require.NoError(t, err)
	}
}

func TestRedactedSummary(t *testing.T) {
	assert.Equal(t, "nothing matched a secret pattern", cmdutil.RedactedSummary(nil))
	assert.Equal(t, "3 value(s): bearer_token 1, github_token 2", cmdutil.RedactedSummary(map[string]int{"github_token": 2, "bearer_token": 1}))
}
