// Package goldensrc splits a golden input (the stream the host hands a
// plugin: an optional `$twasm source` line, then one file's bytes or, for
// a folder or tree store, each file after its `$twasm file` line) back
// into what the agent wrote, for tests that put those files in a home or
// read one of them. It imports only the standard library and abi, so the
// tests of any package may use it.
package goldensrc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/abi"
)

// Source is a golden input split back into what the agent wrote: the
// host's `$twasm source` line (abi.SourceFacts), if the input starts with
// one, and either the one file's bytes or, for a folder or a tree, each
// file the host listed with a `$twasm file` line (abi.SourceFile).
type Source struct {
	Facts *abi.SourceFacts
	// Data is the one file's bytes, when Files is empty.
	Data []byte
	// Files are a folder's or a tree's files, in the input's order.
	Files []File
}

// File is one file of a folder or a tree store: its file line and its
// bytes (a document's one line, or the lines up to the next file line,
// without the newline the host added after the last).
type File struct {
	abi.SourceFile
	Data []byte
}

// File returns the bytes of the file at path (abi.SourceFile.Path), and
// fails the test when the input has none.
func (s Source) File(t testing.TB, path string) []byte {
	t.Helper()
	for _, f := range s.Files {
		if f.Path == path {
			return f.Data
		}
	}
	t.Fatalf("golden input has no file %q", path)
	return nil
}

// Split splits golden input b as Source says; a `$twasm` line that does
// not decode fails the test.
func Split(t testing.TB, b []byte) Source {
	t.Helper()
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	// kind is the "$twasm" member of a line the host wrote, "" for the
	// agent's.
	kind := func(l []byte) string {
		var m struct {
			Type string `json:"$twasm"`
		}
		if !bytes.HasPrefix(l, []byte(`{"$twasm":`)) || json.Unmarshal(l, &m) != nil {
			return ""
		}
		return m.Type
	}
	decode := func(l []byte, v any) {
		t.Helper()
		if err := json.Unmarshal(l, v); err != nil {
			t.Fatalf("golden input: %v", err)
		}
	}
	var s Source
	if len(lines) > 0 && kind(lines[0]) == abi.SourceFactsType {
		s.Facts = new(abi.SourceFacts)
		decode(lines[0], s.Facts)
		lines = lines[1:]
	}
	if len(lines) == 0 || kind(lines[0]) != abi.SourceFileType {
		s.Data = bytes.Join(lines, nil)
		return s
	}
	for i := 0; i < len(lines); {
		if kind(lines[i]) != abi.SourceFileType {
			t.Fatalf("golden input: line %d: want a $twasm file line", i+1)
		}
		var f File
		decode(lines[i], &f.SourceFile)
		j := min(i+2, len(lines))
		if !f.Document {
			for j = i + 1; j < len(lines) && kind(lines[j]) == ""; j++ {
			}
		}
		f.Data = bytes.TrimSuffix(bytes.Join(lines[i+1:j], nil), []byte("\n"))
		s.Files = append(s.Files, f)
		i = j
	}
	return s
}
