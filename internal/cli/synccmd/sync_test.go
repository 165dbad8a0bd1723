package synccmd

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/bundled"
	"github.com/twasm/twasm/internal/testing/cmdtest"
)

// The flag layer: what the command line becomes, and what it refuses.
func TestNewCmdSync(t *testing.T) {
	tests := []struct {
		argv    string
		wantErr string
		check   func(t *testing.T, o *Options)
	}{
		{argv: "", check: func(t *testing.T, o *Options) {
			if o.Interval != 30*time.Second || o.DryRun || o.Watch || o.JSON || len(o.Providers) != 0 {
				t.Errorf("defaults: %+v", o)
			}
		}},
		{argv: "--provider claude,codex --provider pi --since 7d --dry-run --json --redact", check: func(t *testing.T, o *Options) {
			if strings.Join(o.Providers, " ") != "claude codex pi" || o.Since != "7d" || !o.DryRun || !o.JSON || !o.Redact {
				t.Errorf("options: %+v", o)
			}
		}},
		{argv: "--watch --interval 1m", check: func(t *testing.T, o *Options) {
			if !o.Watch || o.Interval != time.Minute {
				t.Errorf("options: %+v", o)
			}
		}},
		{argv: "--watch --dry-run", wantErr: "--watch and --dry-run exclude each other"},
		{argv: "--interval 0s", wantErr: "--interval must be positive"},
		{argv: "--since soon", wantErr: "--since"},
		{argv: "extra", wantErr: "unknown command"},
	}
	for _, tc := range tests {
		t.Run(tc.argv, func(t *testing.T) {
			e := cmdtest.New(t)
			var got *Options
			cmd := NewCmdSync(e.F, func(_ context.Context, o *Options) error { got = o; return nil })
			err := cmdtest.Parse(cmd, tc.argv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
}

// sync's help lists the stores of every bundled plugin that declares one,
// from the manifests the build recorded, for the OS it runs on.
func TestStoresHelp(t *testing.T) {
	ps, err := bundled.Plugins()
	if err != nil || len(ps) == 0 {
		t.Skip("built without the bundled plugins (run make):", err)
	}
	linux := storesHelp("linux")
	here := storesHelp(runtime.GOOS)
	for _, p := range ps {
		if p.Recorded == nil || len(p.Recorded.Manifest.Stores) == 0 {
			continue
		}
		if !strings.Contains(linux, "\n  "+p.Recorded.Manifest.Providers[0]+" ") && !strings.HasPrefix(linux, "  "+p.Recorded.Manifest.Providers[0]+" ") {
			t.Errorf("sync's help lists no store of %s:\n%s", p.File, linux)
		}
	}
	// A root for another OS is not shown.
	if strings.Contains(linux, "Library/Application Support") || strings.Contains(linux, "AppData") {
		t.Errorf("linux help shows another OS's store:\n%s", linux)
	}
	if darwin := storesHelp("darwin"); strings.Contains(darwin, "~/.config/Code/") {
		t.Errorf("darwin help shows a linux store:\n%s", darwin)
	}
	e := cmdtest.New(t)
	cmd := NewCmdSync(e.F, nil)
	cmd.SetArgs([]string{"--help"})
	var out strings.Builder
	cmd.SetOut(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), here) || strings.Contains(out.String(), storesHelpMark) {
		t.Errorf("help does not show the stores:\n%s", out.String())
	}
}

// The run layer: sync archives a Claude session found under $HOME once,
// and a second sync finds nothing new; the session file is unchanged.
func TestRunSync(t *testing.T) {
	e, session, src := claudeHome(t)
	sync := func() (string, string) { return runSync(t, e, "--provider", "claude") }
	out, errOut := sync()
	if !strings.HasPrefix(out, "new\t") || strings.Count(out, "\n") != 1 || !strings.Contains(out, session) {
		t.Fatalf("first sync printed %q (stderr %q), want one new session", out, errOut)
	}
	out, errOut = sync()
	if out != "" || !strings.Contains(errOut, "1 unchanged") {
		t.Fatalf("second sync printed %q, stderr %q; want nothing new", out, errOut)
	}
	if after, _ := os.ReadFile(session); string(after) != string(src) {
		t.Fatal("sync changed the agent's session file")
	}
}

// TestResyncForcesNoCollection: a sync that finds nothing new writes
// nothing to index, so it forces no collection (runtime.GC, which the
// index build's memory limit is measured by): that collection and the
// sweep it waits for were 5-10% of a re-sync's CPU. The first sync, which
// wrote a run, forces at least one.
func TestResyncForcesNoCollection(t *testing.T) {
	e, _, _ := claudeHome(t)
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := forced()
	if out, errOut := runSync(t, e, "--provider", "claude"); !strings.HasPrefix(out, "new\t") {
		t.Fatalf("first sync printed %q (stderr %q), want one new session", out, errOut)
	}
	first := forced()
	if first == before {
		t.Errorf("the first sync forced no collection")
	}
	if out, errOut := runSync(t, e, "--provider", "claude"); out != "" || !strings.Contains(errOut, "1 unchanged") {
		t.Fatalf("second sync printed %q, stderr %q; want nothing new", out, errOut)
	}
	if n := forced() - first; n != 0 {
		t.Errorf("a sync with nothing new forced %d collection(s)", n)
	}
}

// TestSyncSinceFromClock: --since is counted back from the factory's
// clock: a session file last written ten days before it is not synced
// with --since 1d, and is an hour after it.
func TestSyncSinceFromClock(t *testing.T) {
	e, session, _ := claudeHome(t)
	written := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(session, written, written); err != nil {
		t.Fatal(err)
	}
	e.F.Clock = func() time.Time { return written.Add(10 * 24 * time.Hour) }
	if out, errOut := runSync(t, e, "--provider", "claude", "--since", "1d"); out != "" {
		t.Fatalf("ten days later, --since 1d synced %q (stderr %q), want nothing", out, errOut)
	}
	e.F.Clock = func() time.Time { return written.Add(time.Hour) }
	if out, errOut := runSync(t, e, "--provider", "claude", "--since", "1d"); !strings.HasPrefix(out, "new\t") {
		t.Fatalf("an hour later, --since 1d printed %q (stderr %q), want the session new", out, errOut)
	}
}

// claudeHome is a home holding one Claude Code session (a real capture),
// set as e's $HOME.
func claudeHome(t *testing.T) (e *cmdtest.Env, session string, src []byte) {
	t.Helper()
	src, err := os.ReadFile("../../../testdata/captures/claude/agentcmd_session_log_v2.0.26_plan_rejected.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	e = cmdtest.New(t)
	home := t.TempDir()
	session = filepath.Join(home, ".claude", "projects", "-home-me-proj", "9a1e6f0e-0000-4000-8000-000000000001.jsonl")
	if err := os.MkdirAll(filepath.Dir(session), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(session, src, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config")}
	e.F.Getenv = func(k string) string { return env[k] }
	return e, session, src
}

// runSync runs sync with args in e: its stdout, and its stderr.
func runSync(t *testing.T, e *cmdtest.Env, args ...string) (string, string) {
	t.Helper()
	e.Out.Reset()
	e.ErrOut.Reset()
	cmd := NewCmdSync(e.F, nil)
	cmd.SetArgs(args)
	cmd.SetOut(e.ErrOut)
	cmd.SetErr(e.ErrOut)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("sync: %v\n%s", err, e.ErrOut)
	}
	return e.Out.String(), e.ErrOut.String()
}
