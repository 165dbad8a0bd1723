package validate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestValidateCounts: the warning count is the number of warnings
// printed; an empty file is rejected.
func TestValidateCounts(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := clitest.Record(t, storage, "codex", clitest.Golden("codex", "exec_command_dangling.jsonl"))
	r := clitest.RunOK(t, clitest.Plain(), "validate", clitest.TranscriptPath(storage, id))
	n := strings.Count(r.Out, "\n  warning: ")
	if n == 0 || !strings.Contains(r.Out, fmt.Sprintf(", %d warnings\n", n)) {
		t.Errorf("warning count does not match the warnings printed:\n%s", r.Out)
	}
	empty := filepath.Join(t.TempDir(), "0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, clitest.Plain(), "validate", empty)
	if r.Code != 1 || !strings.Contains(r.Out, "FAIL") || !strings.Contains(r.Out, "empty") {
		t.Errorf("empty file: %v", r)
	}
}
