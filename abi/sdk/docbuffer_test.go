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
	for i, l := range lines {
		doc, dropped := b.add([]byte(l))
		assert.Zero(t, dropped)
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
	doc, dropped := b.add([]byte("{"))
	assert.Nil(t, doc)
	assert.Zero(t, dropped)
	doc, dropped = b.add([]byte("  nope }"))
	assert.Nil(t, doc)
	assert.Equal(t, 2, dropped)
	assert.False(t, b.active())

	// An unindented JSON line does not continue a document; an indented
	// one or a non-JSON one does.
	b.add([]byte("["))
	assert.False(t, b.continues(line(`{"a":1}`)))
	assert.True(t, b.continues(line(`  {"a":1}`)))
	assert.True(t, b.continues(line(`]`)))
	assert.Equal(t, 1, b.drop())
	assert.False(t, b.continues(line(`]`)), "no document is active")

	// Past the size of a line the document and the line are dropped.
	b.add([]byte("["))
	big := []byte(`  "` + strings.Repeat("x", wire.MaxLineBytes) + `"`)
	doc, dropped = b.add(big)
	assert.Nil(t, doc)
	assert.Equal(t, 2, dropped)
	assert.False(t, b.active())
}

func TestDocBufferEnd(t *testing.T) {
	var b docBuffer
	doc, dropped := b.end()
	assert.Nil(t, doc)
	assert.Zero(t, dropped)

	b.add([]byte("{"))
	b.add([]byte(`  "a": 1,`))
	doc, dropped = b.end()
	assert.Nil(t, doc)
	assert.Equal(t, 2, dropped)

}

func TestDocBufferInvalidatesTheLastDocument(t *testing.T) {
	var b docBuffer
	doc, _ := b.add([]byte(`{"a":"first"}`))
	require.NotNil(t, doc)
	s := Text(doc.Root().Get("a"))
	assert.Equal(t, "first", s.Keep().String())
	b.add([]byte("{"))
	assert.Panics(t, func() { _ = s.String() }, "a span of the previous document after the next one started")
}
