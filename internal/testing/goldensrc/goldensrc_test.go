package goldensrc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplit(t *testing.T) {
	t.Run("one file", func(t *testing.T) {
		s := Split(t, []byte("{\"a\":1}\n{\"b\":2}\n"))
		assert.Nil(t, s.Facts)
		assert.Empty(t, s.Files)
		assert.Equal(t, "{\"a\":1}\n{\"b\":2}\n", string(s.Data))
	})
	t.Run("facts then a folder's files", func(t *testing.T) {
		in := `{"$twasm":"source","store":"S","path":"p/q"}` + "\n" +
			`{"$twasm":"file","path":"doc.json","document":true}` + "\n" +
			`[1,2]` + "\n" +
			`{"$twasm":"file","path":"log.jsonl"}` + "\n" +
			`{"x":1}` + "\n" + `{"x":2}` + "\n"
		s := Split(t, []byte(in))
		require.NotNil(t, s.Facts)
		assert.Equal(t, "S", s.Facts.Store)
		assert.Equal(t, "p/q", s.Facts.Path)
		require.Len(t, s.Files, 2)
		assert.True(t, s.Files[0].Document)
		assert.Equal(t, "[1,2]", string(s.File(t, "doc.json")))
		assert.Equal(t, "{\"x\":1}\n{\"x\":2}", string(s.File(t, "log.jsonl")))
	})
}
