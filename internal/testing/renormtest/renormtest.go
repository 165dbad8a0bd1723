// Package renormtest makes, for the readers' tests, a recorded Claude
// session with a sub-agent and its renormalize rebuild: the two runs a
// reader must count or list once (views.Superseded).
package renormtest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/bundled"
	"github.com/twasm/twasm/internal/cli/record"
	"github.com/twasm/twasm/internal/cli/renormalize"
	"github.com/twasm/twasm/internal/testing/cmdtest"
)

// Record records the Claude session log golden (a session with a
// sub-agent: testdata/golden/claude/session_log_sidechain.jsonl, found
// from root, the module's root as a relative path) into env's storage
// with the bundled plugin and returns its run id; the test is skipped
// without the bundled claude plugin. env's storage is made empty first
// (without cmdtest's runs).
func Record(t *testing.T, env *cmdtest.Env, root string) string {
	t.Helper()
	if _, ok := bundled.Files()["claude.wasm"]; !ok {
		t.Skip("no bundled claude plugin (run make plugins)")
	}
	env.F.StorageFlag = t.TempDir()
	input := filepath.Join(root, "testdata", "golden", "claude", "session_log_sidechain.jsonl")
	env.Out.Reset()
	if err := record.Run(context.Background(), &record.Options{F: env.F, Provider: "claude", Input: input, Path: "agent", Fsync: "never", JSON: true}); err != nil {
		t.Fatal(err)
	}
	var sum record.Summary
	if err := json.Unmarshal(env.Out.Bytes(), &sum); err != nil {
		t.Fatal(err, env.Out.String())
	}
	env.Out.Reset()
	return sum.RunID
}

// Rebuild renormalizes run and returns its rebuild's run id.
func Rebuild(t *testing.T, env *cmdtest.Env, run string) string {
	t.Helper()
	env.Out.Reset()
	if err := renormalize.Run(context.Background(), &renormalize.Options{F: env.F, Run: run}); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(env.Out.String())
	env.Out.Reset()
	return id
}

// File is the transcript of run id in env's storage.
func File(env *cmdtest.Env, id string) string {
	return filepath.Join(env.F.TranscriptDir(), id+".jsonl")
}
