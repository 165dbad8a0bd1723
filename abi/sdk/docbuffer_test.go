package sdk

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// line makes a Line as the driver hands it over: indexed when it is JSON.
func line(raw string) *Line {
	doc := &abi.Doc{Line: []byte(raw)}
	if toks, ok := wire.BuildTape(nil, doc.Line); ok {
		doc.Toks = toks
	}
	return &Line{No: 1, Raw: doc.Line, doc: doc}
}

func TestDocBufferReassembles(t *testing.T) {
	var b docBuffer
	assert.False(t, b.active())
	lines := []string{"{", `  "a": "}{[\"",`, `  "b": [1, {"c": 2}]`, "}"}
	// Line 4 is blank: the host never sends it.
	nos := []int{1, 2, 3, 5}
	for i, l := range lines {
		doc, dropped := b.add(nos[i], []byte(l))
		assert.False(t, dropped)
		if i < len(lines)-1 {
			require.Nil(t, doc, "line %d", i)
			assert.True(t, b.active())
			assert.True(t, b.continues(line(lines[i+1])))
			continue
		}
		require.NotNil(t, doc)
		assert.Equal(t, `}{["`, doc.Root().Get("a").String())
		assert.Equal(t, int64(2), must(doc.Root().Get("b").Index(1).Get("c").Int()))
	}
	assert.False(t, b.active())
	assert.Equal(t, []lineRun{{1, 3}, {5, 5}}, b.lineRuns(), "the document's lines, the blank one left out")
}

func must(n int64, ok bool) int64 {
	if !ok {
		return -1
	}
	return n
}

func TestDocBufferDrops(t *testing.T) {
	var b docBuffer
	// Balanced but not JSON: every line is dropped.
	doc, dropped := b.add(1, []byte("{"))
	assert.Nil(t, doc)
	assert.False(t, dropped)
	doc, dropped = b.add(3, []byte("  nope }"))
	assert.Nil(t, doc)
	assert.True(t, dropped)
	assert.Equal(t, []lineRun{{1, 1}, {3, 3}}, b.lineRuns())
	assert.False(t, b.active())

	// An unindented JSON line does not continue a document; an indented
	// one or a non-JSON one does.
	b.add(7, []byte("["))
	assert.False(t, b.continues(line(`{"a":1}`)))
	assert.True(t, b.continues(line(`  {"a":1}`)))
	assert.True(t, b.continues(line(`]`)))
	assert.True(t, b.drop())
	assert.Equal(t, []lineRun{{7, 7}}, b.lineRuns())
	assert.False(t, b.continues(line(`]`)), "no document is active")
	assert.False(t, b.drop(), "no document to drop")
	assert.Empty(t, b.lineRuns())

	// Past the size of a line the document and the line are dropped.
	b.add(8, []byte("["))
	big := []byte(`  "` + strings.Repeat("x", wire.MaxLineBytes) + `"`)
	doc, dropped = b.add(9, big)
	assert.Nil(t, doc)
	assert.True(t, dropped)
	assert.Equal(t, []lineRun{{8, 9}}, b.lineRuns())
	assert.False(t, b.active())
}

func TestDocBufferEnd(t *testing.T) {
	var b docBuffer
	doc, dropped := b.end()
	assert.Nil(t, doc)
	assert.False(t, dropped)

	b.add(1, []byte("{"))
	b.add(2, []byte(`  "a": 1,`))
	doc, dropped = b.end()
	assert.Nil(t, doc)
	assert.True(t, dropped)
	assert.Equal(t, []lineRun{{1, 2}}, b.lineRuns())
}

func TestDocBufferInvalidatesTheLastDocument(t *testing.T) {
	var b docBuffer
	doc, _ := b.add(1, []byte(`{"a":"first"}`))
	require.NotNil(t, doc)
	s := Text(doc.Root().Get("a"))
	assert.Equal(t, "first", s.Keep().String())
	b.add(2, []byte("{"))
	assert.Panics(t, func() { _ = s.String() }, "a span of the previous document after the next one started")
}
