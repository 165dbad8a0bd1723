package archive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// globsSeen are the bundled plugins' store patterns and files globs,
// and globs that try the matcher's corners.
var globsSeen = []string{
	"*", "**/*.jsonl", "**/rollout-*.jsonl", "*.jsonl", "*/*.jsonl", "*/*/agents/*/wire.jsonl",
	"*/agent-transcripts/**/*.jsonl", "*/chats/session-*.{json,jsonl}", "../agent-*/wire.jsonl",
	".aider.chat.history.md", "{kilo,opencode}*.db", "{stem}/subagents/**/agent-*.jsonl", "T-*.json",
	"**/", "**", "***", "a**/b", "**/**/x", "?", "??/*", "*?*", "a*b*c", "{,a}b", "{a,}", "{}", "x{a,b}{c,d}y",
	"a.b+c(d)|e$^", `a\b`, "}", "a,b", "**/*/", "[ab]*", "é*", "*/[!x]",
	"x{,_[0-9],_?[0-9]}.jsonl", "{a*,b}", "*/{,?}b",
}

// pathsSeen are paths to match the globs against: store paths and
// corners (empty names, dots, several slashes, bytes not ASCII, a
// newline).
func pathsSeen() []string {
	paths := []string{
		"", "a", "ab", "b", "abc", "aXbYc", "a/b", "a/b/c", "/", "//", "a/", "/a", "x.jsonl", "p/x.jsonl", "p/q/x.jsonl",
		".jsonl", "p/.jsonl", "rollout-1.jsonl", "2026/01/02/rollout-x.jsonl", "p/chats/session-1.json", "p/chats/session-1.jsonl",
		"p/chats/session-1.jsonlx", "../agent-1/wire.jsonl", "a/b/agents/c/wire.jsonl", "p/agent-transcripts/x.jsonl",
		"p/agent-transcripts/d/e/x.jsonl", ".aider.chat.history.md", "kilo.db", "opencode-1.db", "kiloX.db", "{stem}/subagents/agent-1.jsonl",
		"{stem}/subagents/x/y/agent-2.jsonl", "T-1.json", "T-.json", "b", "ab", "xacy", "xbdy", "xady", "a.b+c(d)|e$^", `a\b`, "}", "a,b",
		"é", "é/x.jsonl", "p/é.jsonl", "a\nb/x.jsonl", "a/b\n", "x", "xx/yy", "a\xffb.jsonl", "é.db",
		"x_1.jsonl", "x_12.jsonl", "x_123.jsonl", "x_1_2.jsonl", "x_a1.jsonl",
	}
	for _, seg := range []string{"", "a", "x.jsonl", "a/b", "é"} {
		for _, seg2 := range []string{"", "/", "/x.jsonl", "/sub/s.jsonl"} {
			paths = append(paths, seg+seg2)
		}
	}
	return paths
}

// TestGlobMatcher: globMatcher answers what the glob's regular
// expression answers, for every glob and path here, those it leaves to
// the regexp included.
func TestGlobMatcher(t *testing.T) {
	for _, g := range globsSeen {
		re, err := globRegexp(g)
		require.NoError(t, err, g)
		m := globMatcher(g, re)
		for _, p := range pathsSeen() {
			assert.Equal(t, re.MatchString(p), m(p), "glob %q, path %q", g, p)
		}
	}
	_, ok := globTokens("[ab]*")
	assert.False(t, ok, "a class is left to the regexp")
	_, ok = globTokens("*.jsonl")
	assert.True(t, ok)
}

// FuzzGlobMatcher: whatever the glob and path, globMatcher answers what
// the glob's regular expression does.
func FuzzGlobMatcher(f *testing.F) {
	for _, g := range globsSeen {
		f.Add(g, "p/q/x.jsonl")
	}
	f.Fuzz(func(t *testing.T, glob, path string) {
		if len(glob) > 64 || len(path) > 256 || strings.Count(glob, "*") > 8 {
			return
		}
		re, err := globRegexp(glob)
		if err != nil {
			return
		}
		if got, want := globMatcher(glob, re)(path), re.MatchString(path); got != want {
			t.Fatalf("glob %q, path %q: %v, the regexp %v", glob, path, got, want)
		}
	})
}
