package usage

import (
	"slices"
	"testing"

	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/plugins/openai"
)

// TestBatchFormat: the formats BatchFormat prices at the batch rate are
// the ones the plugins report for a batch job's results, and no other
// format of theirs is.
func TestBatchFormat(t *testing.T) {
	for _, c := range []struct {
		provider string
		formats  []string
		batch    string
	}{
		{"openai", openai.Plugin.Manifest.Formats, "batch-output"},
		{"claude", claude.Plugin.Manifest.Formats, "message-batch-results"},
	} {
		if !slices.Contains(c.formats, c.batch) {
			t.Errorf("%s reports no format %q (it reports %v)", c.provider, c.batch, c.formats)
		}
		for _, f := range c.formats {
			if got := BatchFormat(c.provider, f); got != (f == c.batch) {
				t.Errorf("BatchFormat(%s, %s) = %v", c.provider, f, got)
			}
		}
	}
	if BatchFormat("codex", "batch-output") {
		t.Error("another provider's format named batch-output is priced as a batch")
	}
}
