package sdktest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
)

// broken is a plugin that does one thing wrong, by name.
type broken struct {
	how  string
	prev abi.Value // "stale": the previous line's value, kept (wrongly)
	n    int
}

func (b *broken) Line(l *sdk.Line, out *sdk.Out) error {
	v := l.JSON()
	b.n++
	key := sdk.S(string(rune('a' + b.n)))
	switch {
	case b.how == "fault" && v.Get("boom").Exists():
		panic("boom")
	case b.how == "silent" && v.Get("quiet").Exists():
		return nil
	case b.how == "unmapped" && v.Get("odd").Exists():
		out.Unmapped(sdk.S("odd"))
		return nil
	case b.how == "stale":
		// Reads the line before through a value kept from its call:
		// the same text when both lines came in one call, none when
		// they did not.
		text := v.Get("text")
		if b.prev.Exists() {
			text = b.prev.Get("text")
		}
		b.prev = v
		out.Open(key, sdk.Message{})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text)})
		out.Close(key, sdk.MessageEnd{})
		return nil
	}
	out.Open(key, sdk.Message{})
	out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(v.Get("text"))})
	out.Close(key, sdk.MessageEnd{})
	return nil
}

func (b *broken) End(*sdk.Out) error { return nil }

func brokenPlugin(how string) sdk.Plugin {
	return sdk.Plugin{
		Manifest: abi.Manifest{Name: "broken", Version: "0.0.1", Providers: []string{"broken"}},
		New:      func(abi.BeginOptions) sdk.Normalizer { return &broken{how: how} },
	}
}

// TestBroken is run by TestFailures in a child process, which reads its
// verdict: it is the author's test of a plugin that does one thing wrong.
func TestBroken(t *testing.T) {
	how := os.Getenv("SDKTEST_BROKEN")
	if how == "" {
		t.Skip("run by TestFailures")
	}
	var caps []string
	if c := os.Getenv("SDKTEST_CAPTURE"); c != "" {
		caps = []string{c}
	}
	sdktest.Test(t, brokenPlugin(how), sdktest.Options{Provider: "broken", Captures: caps, Golden: os.Getenv("SDKTEST_GOLDEN")})
}

// TestFailures: each check fails an author's test for the fault it is
// there for, naming it, and a plugin without the fault passes the same
// input.
func TestFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	lines := `{"text":"one"}` + "\n" + `{"text":"two"}` + "\n" + `{"text":"three"}` + "\n"
	tests := []struct {
		how, input, want string
		golden           bool // the input is a golden case
	}{
		{"fault", lines + `{"boom":1}` + "\n", "lost to a plugin fault", false},
		{"silent", lines + `{"quiet":1}` + "\n", "1 raw line(s) accounted for by no record", false},
		{"unmapped", lines + `{"odd":1}` + "\n", `"odd" unmapped 1 times without a reason`, false},
		{"stale", lines, "line(s) a call: line 2 of the rendering", false},
		{"none", "", "no golden case and no capture", false},
		// A golden case whose .fault file says why may pin a fault: it
		// passes (the batching check, whose lost lines depend on the
		// cut, is skipped).
		{"fault", lines + `{"boom":1}` + "\n", "SKIP: TestBroken/batching/case.jsonl", true},
	}
	for _, tt := range tests {
		t.Run(tt.how, func(t *testing.T) {
			var capFile, goldenDir string
			switch {
			case tt.golden:
				goldenDir = t.TempDir()
				write(t, filepath.Join(goldenDir, "case.jsonl"), tt.input)
				write(t, filepath.Join(goldenDir, "case.fault"), "the plugin panics on boom")
				if _, err := golden.Check(context.Background(), goldenDir, capture.NativePlugin(brokenPlugin(tt.how)), golden.Options{Provider: "broken", Update: true}); err != nil {
					t.Fatal(err)
				}
			case tt.input != "":
				capFile = filepath.Join(t.TempDir(), "capture.jsonl")
				write(t, capFile, tt.input)
			}
			run := func(how string) (string, error) {
				cmd := exec.Command(os.Args[0], "-test.run=^TestBroken$", "-test.v")
				cmd.Env = append(os.Environ(), "SDKTEST_BROKEN="+how, "SDKTEST_CAPTURE="+capFile, "SDKTEST_GOLDEN="+goldenDir)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				return out.String(), err
			}
			out, err := run(tt.how)
			if tt.golden {
				if err != nil || !strings.Contains(out, tt.want) {
					t.Errorf("want a pass saying %q, got (%v):\n%s", tt.want, err, out)
				}
				return
			}
			if err == nil || !strings.Contains(out, tt.want) {
				t.Errorf("want a failure saying %q, got (%v):\n%s", tt.want, err, out)
			}
			if tt.input == "" {
				return
			}
			if out, err := run("well"); err != nil {
				t.Errorf("a plugin without the fault fails too:\n%s", out)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckUnmapped pins the expectation file's rules.
func TestCheckUnmapped(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.jsonl.unmapped.json")
	exp := `{"unmapped":{"a":1,"gone":2,"why":1},"reasons":{"a":"a reason","gone":"was unmapped","why":" "}}`
	if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		file string
		got  map[string]int
		errs int
	}{
		{"a missing reason and a listed type now mapped", file, map[string]int{"a": 1, "why": 1}, 2},
		{"a missing reason, a count and an unlisted type", file, map[string]int{"a": 2, "gone": 2, "why": 1, "new": 1}, 3},
		{"no file, nothing unmapped", filepath.Join(dir, "none.unmapped.json"), nil, 0},
		{"no file, something unmapped", filepath.Join(dir, "none.unmapped.json"), map[string]int{"x": 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			sdktest.CheckUnmapped(r, tt.file, tt.got)
			if len(r.errs) != tt.errs {
				t.Errorf("want %d errors, got %q", tt.errs, r.errs)
			}
		})
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, format)
}
