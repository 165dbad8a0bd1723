package cmdtest

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/testing/viewstest"
)

// Env is a test environment.
type Env struct {
	F       *cmdutil.Factory
	IO      *iostreams.IOStreams
	Out     *bytes.Buffer
	ErrOut  *bytes.Buffer
	Storage string
	// Dir is Storage/transcripts.
	Dir string
}

// New returns an environment whose storage holds the fixture runs.
func New(t testing.TB) *Env {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	storage := t.TempDir()
	dir := viewstest.WriteStore(t, storage)
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, StorageFlag: storage}
	return &Env{F: f, IO: ios, Out: out, ErrOut: errOut, Storage: storage, Dir: dir}
}

// Parse runs cmd's flag parsing and RunE with argv (the command's runF
// normally captures the options).
func Parse(cmd *cobra.Command, argv string) error {
	cmd.SetArgs(strings.Fields(argv))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	_, err := cmd.ExecuteC()
	return err
}

// JSONLines decodes JSON Lines output (what every --json prints) into
// one T per line.
func JSONLines[T any](t testing.TB, out []byte) []T {
	t.Helper()
	var items []T
	for i, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		if len(line) == 0 && len(out) == 0 {
			break
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("line %d of the --json output: %v\n%s", i+1, err, line)
		}
		items = append(items, v)
	}
	return items
}

// IsJSONLines reports whether out is JSON Lines, what every --json prints:
// one JSON value per line, at least one.
func IsJSONLines(out string) bool {
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !json.Valid([]byte(line)) {
			return false
		}
	}
	return out != ""
}

// NewProjects is New over viewstest.ProjectStorage's sessions instead of
// the tree fixture.
func NewProjects(t testing.TB) *Env {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	storage := t.TempDir()
	viewstest.ProjectStorage(t, storage, time.Date(2026, 8, 1, 9, 0, 0, 0, time.UTC))
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, StorageFlag: storage}
	return &Env{F: f, IO: ios, Out: out, ErrOut: errOut, Storage: storage, Dir: filepath.Join(storage, "transcripts")}
}
