package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/cli/iostreams"
)

func TestStorageRoot(t *testing.T) {
	tests := []struct {
		flag, env, want string
	}{
		{"/flag", "/env", "/flag"},
		{"", "/env", "/env"},
		{"", "", "storage"},
	}
	for _, tc := range tests {
		f := &Factory{StorageFlag: tc.flag, Getenv: func(k string) string {
			if k == EnvStorage {
				return tc.env
			}
			return ""
		}}
		if got := f.StorageRoot(); got != tc.want {
			t.Errorf("flag %q env %q: %q, want %q", tc.flag, tc.env, got, tc.want)
		}
	}
	f := &Factory{StorageFlag: "/s"}
	if got := f.TranscriptDir(); got != filepath.Join("/s", "transcripts") {
		t.Errorf("transcript dir %q", got)
	}
}

func TestResolveRun(t *testing.T) {
	f := &Factory{StorageFlag: "/s"}
	const id = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	tests := []struct {
		arg, path string
		usage     bool
	}{
		{id, "/s/transcripts/" + id + ".jsonl", false},
		{"x.jsonl", "x.jsonl", false},
		{"dir/x", "dir/x", false},
		{"AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA", "", true},
		{"..", "", true},
	}
	for _, tc := range tests {
		ref, err := f.ResolveRun(tc.arg)
		if tc.usage {
			if ExitCode(err) != ExitUsage {
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
		want := "x y\tmulti line [2J\n"
		if tty {
			want = "A    B\nx y  multi line [2J\n"
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
