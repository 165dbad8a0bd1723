package clitest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/abi"
)

// GoldenSource is a golden input split back into what the agent wrote:
// the host's `$twasm source` line (abi.SourceFacts), if the golden starts
// with one, and either the one file's bytes or, for a folder or a tree,
// each file the host listed with a `$twasm file` line (abi.SourceFile).
type GoldenSource struct {
	Facts *abi.SourceFacts
	// Data is the one file's bytes, when Files is empty.
	Data []byte
	// Files are a folder's or a tree's files, in the golden's order.
	Files []GoldenFile
}

// GoldenFile is one file of a folder or a tree store: its file line and
// its bytes (a document's one line, or the lines up to the next file
// line, without the newline the host added after the last).
type GoldenFile struct {
	abi.SourceFile
	Data []byte
}

// File returns the bytes of the file at path (abi.SourceFile.Path), and
// fails the test when the golden has none.
func (s GoldenSource) File(t testing.TB, path string) []byte {
	t.Helper()
	for _, f := range s.Files {
		if f.Path == path {
			return f.Data
		}
	}
	t.Fatalf("golden source has no file %q", path)
	return nil
}

// ReadGoldenSource reads golden input name of provider and splits it as
// GoldenSource says; a `$twasm` line that does not decode fails the test.
func ReadGoldenSource(t testing.TB, provider, name string) GoldenSource {
	t.Helper()
	lines := bytes.SplitAfter(ReadFile(t, Golden(provider, name)), []byte("\n"))
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
			t.Fatalf("golden %s/%s: %v", provider, name, err)
		}
	}
	var s GoldenSource
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
			t.Fatalf("golden %s/%s: line %d: want a $twasm file line", provider, name, i+1)
		}
		var f GoldenFile
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
