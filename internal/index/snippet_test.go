package index

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSnippet(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 30) + "the Zébra crossing, no such file here " + strings.Repeat("dolor sit ", 30)
	tests := []struct {
		name, text, query string
		raw               bool
		want              string
	}{
		{"short, whole", "a zebra crossing", "zebra", false, "a «zebra» crossing"},
		{"prefix", "run pytest -q", "pyt", false, "run «pytest» -q"},
		{"diacritics and case", "the Zébra", "zebra", false, "the «Zébra»"},
		{"phrase marked whole", "error: no such file or directory", `"no such file"`, false, "error: «no such file» or directory"},
		{"phrase is not a prefix", "no such filesystem", `"no such file"`, false, "no such filesystem"},
		{"every word", "zebra and giraffe", "giraffe zebra", false, "«zebra» and «giraffe»"},
		{"raw: operators are not words", "zebra OR giraffe, not both", "zebra OR giraff*", true, "«zebra» OR «giraffe», not both"},
		{"a window of the long text", long, "zebra file", false,
			"…ipsum lorem ipsum lorem ipsum the «Zébra» crossing, no such «file» here dolor sit dolor sit dolor sit dolor sit dolor sit dolor sit…"},
		{"no words: the start", strings.Repeat("x", 200), "", false, strings.Repeat("x", 160)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var terms []markTerm
			if tc.query != "" {
				terms = markTerms(tc.query, tc.raw)
			}
			assert.Equal(t, tc.want, snippet(tc.text, terms, "«", "»"))
		})
	}
}

// Snippets and texts are cut from the transcripts; a document no longer
// where the index saw it is left out, never shown with another's text.
func TestSnippetsFromTranscripts(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	a := record(t, root, "fix the zebra test", "the zebra test is fixed", "Bash", "go test ./...", "PASS ok zebra", false)
	record(t, root, "write docs", "docs written about a zebra", "Edit", "sed", "edited", false)
	ix, _ := openUpdated(t, root)
	hits := search(t, ix, Query{Text: "zebra", Every: true, WithText: true, Limit: 100})
	require.Len(t, hits, 6) // prompt, thinking and answer of the first, answer and thinking of the second, the output
	for _, h := range hits {
		assert.Contains(t, h.Snippet, "«zebra»")
		assert.Contains(t, strings.ToLower(h.Text), "zebra")
		assert.NotContains(t, h.Text, "«")
	}

	// The first run rewritten behind the index's back: its documents
	// are no longer where the index saw them.
	path := filepath.Join(root, "transcripts", a+".jsonl")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[1:], "")), 0o600))
	for _, h := range search(t, ix, Query{Text: "zebra", Every: true, Limit: 100}) {
		assert.NotEqual(t, a, h.RunID, "a hit of the rewritten run: %+v", h)
	}
	_, err = ix.Check(ctx)
	require.NoError(t, err)
	assert.Len(t, search(t, ix, Query{Text: "zebra", Every: true, Limit: 100}), 6, "read again")
}

// FuzzSnippet: any text and query give a snippet that is a piece of the
// text once its marks and ellipses are taken out.
func FuzzSnippet(f *testing.F) {
	f.Add("the zebra crossing", "zebra", false)
	f.Add(strings.Repeat("a b ", 40)+"Zébra", `"b zebra"`, false)
	f.Add("x OR y*", "x OR y*", true)
	f.Fuzz(func(t *testing.T, text, query string, raw bool) {
		if strings.ContainsAny(text, "\x01\x02") {
			t.Skip("the marks this test uses")
		}
		got := snippet(text, markTerms(query, raw), "\x01", "\x02")
		plain := strings.NewReplacer("\x01", "", "\x02", "").Replace(got)
		plain = strings.TrimSuffix(strings.TrimPrefix(plain, "…"), "…")
		if !strings.Contains(text, plain) {
			t.Fatalf("snippet %q is not a piece of %q", got, text)
		}
	})
}

func TestSnippetMarksEachMatch(t *testing.T) {
	for _, tc := range []struct{ text, query, want string }{
		{"Bash go test ./... Run tests", "go test", "Bash «go» «test» ./... Run «tests»"},
		{"no such file", `"no such" "such file"`, "«no such file»"},
		{"short: a b c d e f g h i j k l m n o p q r s t xylophone", "xylophone", "short: a b c d e f g h i j k l m n o p q r s t «xylophone»"},
	} {
		assert.Equal(t, tc.want, snippet(tc.text, markTerms(tc.query, false), "«", "»"), tc.query)
	}
}
