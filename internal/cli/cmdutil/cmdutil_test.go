package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/cli/iostreams"
)

func TestStorageRoot(t *testing.T) {
	tests := []struct {
		flag, env, xdg, home, want string
	}{
		{"/flag", "/env", "/x", "/h", "/flag"},
		{"", "/env", "/x", "/h", "/env"},
		{"", "", "/x", "/h", "/x/twasm"},
		{"", "", "relative", "/h", "/h/.local/share/twasm"},
		{"", "", "", "", "storage"},
	}
	for _, tc := range tests {
		env := map[string]string{EnvStorage: tc.env, "XDG_DATA_HOME": tc.xdg, "HOME": tc.home}
		f := &Factory{StorageFlag: tc.flag, Getenv: func(k string) string { return env[k] }}
		if got := f.StorageRoot(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc, got, tc.want)
		}
	}
	f := &Factory{StorageFlag: "/s"}
	if got := f.TranscriptDir(); got != filepath.Join("/s", "transcripts") {
		t.Errorf("transcript dir %q", got)
	}
}

// TestConfigFile checks the one rule for twasm's configuration files,
// which config.json, sync.json and prices.json all follow.
func TestConfigFile(t *testing.T) {
	tests := []struct {
		xdg, home, want string
	}{
		{"/x", "/h", "/x/twasm/sync.json"},
		{"", "/h", "/h/.config/twasm/sync.json"},
		// The XDG spec ignores a relative $XDG_CONFIG_HOME.
		{"relative", "/h", "/h/.config/twasm/sync.json"},
		// A relative or empty $HOME is no home: not a file under the
		// directory the command runs in.
		{"", "relative", ""},
		{"", "", ""},
	}
	for _, tc := range tests {
		env := map[string]string{"XDG_CONFIG_HOME": tc.xdg, "HOME": tc.home}
		f := &Factory{Getenv: func(k string) string { return env[k] }}
		if got := f.ConfigFile("sync.json"); got != filepath.FromSlash(tc.want) {
			t.Errorf("%+v: %q, want %q", tc, got, tc.want)
		}
	}
	f := &Factory{Getenv: func(k string) string { return map[string]string{"HOME": "/h"}[k] }}
	if got, want := f.PricesPath(), filepath.FromSlash("/h/.config/twasm/prices.json"); got != want {
		t.Errorf("prices path %q, want %q", got, want)
	}
}

func TestResolveRun(t *testing.T) {
	storage := t.TempDir()
	f := &Factory{StorageFlag: storage}
	dir := filepath.Join(storage, "transcripts")
	const id = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	if _, err := f.ResolveRun(id); !errors.Is(err, ErrNoStorage) || ExitCode(err) != ExitUsage {
		t.Fatalf("missing storage: %v", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{id, "aaaaaaaa-bbbb-4aaa-8aaa-aaaaaaaaaaaa", "ccccccc0-aaaa-4aaa-8aaa-aaaaaaaaaaaa"} {
		if err := os.WriteFile(filepath.Join(dir, n+".jsonl"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		arg, path string
		code      int
		msg       string
	}{
		{id, filepath.Join(dir, id+".jsonl"), 0, ""},
		{"ccc", filepath.Join(dir, "ccccccc0-aaaa-4aaa-8aaa-aaaaaaaaaaaa.jsonl"), 0, ""},
		{"aaaaaaaa-b", filepath.Join(dir, "aaaaaaaa-bbbb-4aaa-8aaa-aaaaaaaaaaaa.jsonl"), 0, ""},
		{"aaaa", "", ExitUsage, "ambiguous: 2 runs match"},
		{"dd", "", ExitUsage, `no run id starts with "dd"`},
		{"x.jsonl", "x.jsonl", 0, ""},
		{"dir/x", "dir/x", 0, ""},
		{"AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA", "", ExitUsage, "neither a run id"},
		{"..", "", ExitUsage, "neither a run id"},
	}
	for _, tc := range tests {
		ref, err := f.ResolveRun(tc.arg)
		if tc.code != 0 {
			if ExitCode(err) != tc.code || !strings.Contains(fmt.Sprint(err), tc.msg) {
				t.Errorf("%q: err = %v", tc.arg, err)
			}
			continue
		}
		if err != nil || ref.Path != tc.path {
			t.Errorf("%q: %q, %v", tc.arg, ref.Path, err)
		}
	}
}

type statusErr struct{}

func (statusErr) Error() string   { return "agent failed" }
func (statusErr) ExitStatus() int { return 7 }

func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("x"), ExitFailure},
		{ErrSilent, ExitFailure},
		{FlagErrorf("bad"), ExitUsage},
		{fmt.Errorf("wrapped: %w", &InputError{Path: "p", Err: errors.New("gone")}), ExitUsage},
		{fmt.Errorf("stop: %w", context.Canceled), ExitCancelled},
		{statusErr{}, 7},
	}
	for _, tc := range tests {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.err, got, tc.want)
		}
	}
	if got := (&InputError{Err: errors.New("e")}).Error(); got != "e" {
		t.Errorf("input error without path: %q", got)
	}
}

func TestTable(t *testing.T) {
	for _, tty := range []bool{false, true} {
		var b bytes.Buffer
		tb := NewTable(&b, tty, "A", "B")
		tb.Row("x\ty", "multi\nline\x1b[2J")
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
		want := "x y\tmulti line\n"
		if tty {
			want = "A    B\nx y  multi line\n"
		}
		if b.String() != want {
			t.Errorf("tty=%v: %q, want %q", tty, b.String(), want)
		}
	}
}

func TestListRunsAndLogger(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	f := &Factory{IOStreams: ios, StorageFlag: t.TempDir()}
	if _, err := f.ListRuns(); err == nil {
		t.Fatal("missing transcripts dir should fail")
	}
	if got, _ := f.CompleteRuns(nil, nil, ""); got != nil {
		t.Fatalf("completions %v", got)
	}
	f.Logger().Debug("hidden")
	f.Verbose = true
	f.Logger().Debug("shown")
	if !bytes.Contains(errOut.Bytes(), []byte("shown")) || bytes.Contains(errOut.Bytes(), []byte("hidden")) {
		t.Fatalf("stderr %q", errOut)
	}
}
