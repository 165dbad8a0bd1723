package archive

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCheckGlob: checkGlob refuses the globs globRegexp cannot compile,
// with the same error, and accepts the others.
func TestCheckGlob(t *testing.T) {
	for _, g := range []string{"**/*.jsonl", "*.json", "ui_messages.json", "{a,b}.json", "[abc]?.md", "a[", "{a,b", "{a*,b}", "{a[,b]}", "{a/b,c}", "{a**,b}", "{,_[0-9]}.jsonl", "[z-a].json", "[[:nope:]]", "x\\", ""} {
		_, want := globRegexp(g)
		got := checkGlob(g)
		if want == nil {
			assert.NoError(t, got, g)
			continue
		}
		assert.EqualError(t, got, want.Error(), g)
	}
}
