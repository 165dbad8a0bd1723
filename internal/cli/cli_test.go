package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/cli/build"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/testing/viewstest"
)

// TestCommandLine runs the command line in process, through Main, over
// in-memory streams and an environment of the test's: exit codes, where
// each stream goes, the storage's resolution from flags and environment,
// and the index built on first use. What needs a process (signals, a
// binary's version stamp, terminals) is in internal/testing/e2e.
func TestCommandLine(t *testing.T) {
	storage := t.TempDir()
	dir := viewstest.WriteStore(t, storage)
	rootFile := filepath.Join(dir, viewstest.Root+".jsonl")
	env := map[string]string{"TWASM_STORAGE": storage}
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		code     int
		out, err []string // substrings; "" entries mean "must be empty"
	}{
		{"version", nil, []string{"version"}, 0, []string{"twasm version " + build.Version}, []string{""}},
		{"--version", nil, []string{"--version"}, 0, []string{"twasm version " + build.Version}, []string{""}},
		{"--help", nil, []string{"--help"}, 0, []string{"Usage:"}, []string{""}},
		{"help has examples", nil, []string{"view", "--help"}, 0, []string{"Examples:", "twasm view --only dialog,thinking"}, nil},
		{"validate broken", nil, []string{"validate", rootFile}, 1, []string{"error: line 9: malformed_line"}, []string{""}},
		{"validate missing file", nil, []string{"validate", "/nonexistent/r.jsonl"}, 2, []string{""}, []string{"/nonexistent/r.jsonl: no such file or directory"}},
		{"validate ok by id from env", env, []string{"validate", viewstest.Child}, 0, []string{": ok: run"}, []string{""}},
		{"storage flag beats env", map[string]string{"TWASM_STORAGE": "/nonexistent"}, []string{"--storage", storage, "tree", viewstest.Root}, 0,
			[]string{"└─ delegate"}, []string{""}},
		{"missing run", env, []string{"tree", viewstest.Other}, 2, []string{""},
			[]string{viewstest.Other + ".jsonl: no such file or directory"}},
		{"default storage", nil, []string{"tree", viewstest.Root}, 2, []string{""}, []string{".local/share/twasm: storage root does not exist"}},
		{"tree without a run", env, []string{"tree"}, 2, []string{""}, []string{"takes 1 argument", "Usage:"}},
		{"stats without runs", env, []string{"stats"}, 2, []string{""}, []string{"give RUN arguments or --all"}},
		{"bad section", env, []string{"view", "--only", "x", "r.jsonl"}, 2, []string{""}, []string{`unknown section "x"`}},
		{"bad run id", env, []string{"view", "not-a-run-id"}, 2, []string{""}, []string{"neither a run id (or the start of one)"}},
		{"unknown flag", env, []string{"tools", "--bogus", viewstest.Root}, 2, []string{""}, []string{"unknown flag: --bogus", "Usage:"}},
		{"unknown command", nil, []string{"frobnicate"}, 2, []string{""}, []string{"unknown command", "Available Commands:"}},
		{"tools piped", env, []string{"tools", viewstest.Root}, 0, []string{"7\treview\tRead\tread\t\tdangling"}, []string{""}},
		{"view", env, []string{"view", "--only", "thinking", viewstest.Root}, 0, []string{"<details><summary>Thinking</summary>"}, []string{""}},
		// The store was written without twasm, so it has no index yet:
		// the first command that reads across runs builds it and says so.
		{"stats all json", env, []string{"stats", "--all", "--json"}, 0, []string{`"runs":2`}, []string{"was missing: built from the transcripts"}},
		{"stats all json again", env, []string{"stats", "--all", "--json"}, 0, []string{`"runs":2`}, []string{""}},
		// usage prices the child's gpt-5 step (113 µ$) beside the $0.25
		// Claude stated, from the index stats just built.
		{"usage by provider", env, []string{"usage", "--by", "provider", "--json"}, 0,
			[]string{`"key":"claude"`, `"micro_usd":250000,"usd":"0.25","source":"provider"`, `"total":{"key":"total","sessions":1`, `"micro_usd":250113,"usd":"0.250113","source":"mixed","prices":"twasm-bundled@`}, []string{""}},
		{"usage by day since", env, []string{"usage", "--since", "20250501", "--until", "2025-05-01"}, 0, []string{"2025-05-01\t1\t", "total\t1\t"}, []string{""}},
		{"prices", env, []string{"prices"}, 0, []string{"price table twasm-bundled@", "(bundled)", "gemini-2.5-pro"}, []string{""}},
		{"tail", env, []string{"tail", "-n", "1", viewstest.Root}, 0, []string{"#13 run  run.completed  ok\n"}, nil},
		{"completion", nil, []string{"completion", "bash"}, 0, []string{"bash completion"}, nil},
	}
	for _, tc := range tests { // in order: the index is built by the first stats
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{"HOME": t.TempDir()}
			for k, v := range tc.env {
				vars[k] = v
			}
			ios, _, out, errOut := iostreams.Test()
			code := Main(context.Background(), tc.args, ios, func(k string) string { return vars[k] })
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			check := func(stream, got string, want []string) {
				for _, w := range want {
					if w == "" && got != "" || !strings.Contains(got, w) {
						t.Errorf("%s = %q, want %q", stream, got, w)
					}
				}
			}
			check("stdout", out.String(), tc.out)
			check("stderr", errOut.String(), tc.err)
			if strings.HasPrefix(tc.name, "stats all json") && !json.Valid(out.Bytes()) {
				t.Errorf("stdout is not JSON: %s", out)
			}
		})
	}
}

// TestMainCancelled: a cancelled context (Ctrl-C) ends a following tail
// with exit 130 and says so.
func TestMainCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ios, _, _, errOut := iostreams.Test()
	if code := Main(ctx, []string{"tail", "-f", filepath.Join(t.TempDir(), "x.jsonl")}, ios, os.Getenv); code != 130 || !strings.Contains(errOut.String(), "interrupted") {
		t.Errorf("cancelled: exit %d, stderr %q", code, errOut)
	}
}

func TestSystemStreams(t *testing.T) {
	ios := iostreams.System(func(k string) string { return map[string]string{"NO_COLOR": "1"}[k] })
	if ios.ColorEnabled() {
		t.Fatal("color with NO_COLOR")
	}
}
