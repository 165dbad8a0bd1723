package archive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/transcript"
)

// fullEntry is an entry with every member set, as a sync writes some
// and an interrupted part others.
func fullEntry() Entry {
	n := func(v int64) *int64 { return &v }
	cost := 0.007124
	return Entry{
		RunID: "00f5aeed-aec5-4827-8bd2-ed223d4492a2", Provider: "codex", Head: "c796cb8d", Path: "/home/u/.codex/sessions/2026/01/25/rollout-s1.jsonl",
		Size: 64109, ModTime: 1796006984733281039, Offset: 64109, SHA256: "2734baf4", Parts: 3, Raw: "raw/00f5aeed/agent.0.0.96beff83.raw.zst",
		Redact: true, Closed: true, SupersededBy: "7c0de5ee", Seal: true, Pending: true,
		Resume: &Resume{Format: "jsonl", Whole: true, End: true, Store: "claude", Dir: "/d", Facts: true, SessionStart: "# aider chat started at"},
		First:  time.Date(2026, 5, 23, 21, 38, 27, 239000000, time.UTC), Last: time.Date(2026, 5, 23, 21, 39, 3, 301000000, time.FixedZone("", 7200)),
		Status: "incomplete",
		Totals: &Totals{Usage: &transcript.Usage{InputTokens: n(30256), UncachedInputTokens: n(23728), CacheReadTokens: n(6528), CacheWriteTokens: n(0),
			CacheWrite1hTokens: n(0), OutputTokens: n(5), ReasoningTokens: n(0), TotalTokens: n(30261), ServiceTier: "standard"},
			CostUSD: &cost, Unmapped: map[string]int{"attachment": 2}, Lines: 17, FailedLines: 1, Warnings: []string{"the response was aborted: Operation aborted", "é \"quoted\"\n"}},
		Facts:  []FactsAt{{At: 0, Line: `{"facts":1}`}},
		Files:  []FileState{{Path: "ui_messages.json", Size: 10, ModTime: 11, Offset: 10, SHA256: "ab"}},
		Parent: "9a1b", LooseAt: 2, Also: []Seen{{Path: "/old/s1.jsonl", Size: 100, ModTime: 5, Offset: 100, SHA256: "cd"}},
	}
}

// decodeBoth decodes line with decodeEntry and with json.Unmarshal and
// fails when decodeEntry read it and the two differ.
func decodeBoth(t testing.TB, line []byte) (fast bool, e Entry) {
	var want Entry
	werr := json.Unmarshal(line, &want)
	fast = decodeEntry(line, &e)
	var r Entry
	if rfast := decodeRecord(line, &r); rfast != fast {
		t.Fatalf("decodeRecord read %q: %v, decodeEntry: %v", line, rfast, fast)
	} else if fast && !reflect.DeepEqual(record(r), record(e)) {
		t.Fatalf("decodeRecord and decodeEntry differ on %q:\n%#v\n%#v", line, record(r), record(e))
	}
	if !fast {
		return false, want
	}
	if werr != nil {
		t.Fatalf("decodeEntry read %q, which json.Unmarshal refuses: %v", line, werr)
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("decodeEntry and json.Unmarshal differ on %q:\n%#v\n%#v", line, e, want)
	}
	return true, e
}

// record is what decodeRecord keeps of an entry: what entries.set
// reads, and the numbers and times.
func record(e Entry) Entry {
	return Entry{RunID: e.RunID, Head: e.Head, Path: e.Path, Size: e.Size, ModTime: e.ModTime, Offset: e.Offset, Parts: e.Parts,
		Redact: e.Redact, Closed: e.Closed, Pending: e.Pending, Resume: e.Resume, First: e.First, Last: e.Last,
		Facts: e.Facts, Files: e.Files, Also: e.Also, SupersededBy: e.SupersededBy, Seal: e.Seal, LooseAt: e.LooseAt}
}

// TestLoadDecodesRecords (#31 goal 5): loading the ledger makes each
// run's record from its line without making the strings and totals of
// the entry it does not keep (a re-sync with nothing new compares
// paths, sizes and mtimes): a few allocations a line, where decoding
// every member took more than ten.
func TestLoadDecodesRecords(t *testing.T) {
	e := fullEntry() // with the members of a line a sync writes
	e.Resume, e.Also, e.Facts, e.Files, e.Pending, e.SupersededBy = nil, nil, nil, nil, false, ""
	e.Totals.Unmapped, e.Totals.Warnings = nil, []string{"the response was aborted: Operation aborted"}
	var data []byte
	const lines = 500
	for i := range lines {
		e.RunID = fmt.Sprintf("00f5aeed-aec5-4827-8bd2-%012d", i)
		e.Path = fmt.Sprintf("/home/u/.codex/sessions/s%d.jsonl", i)
		b, err := json.Marshal(e)
		require.NoError(t, err)
		data = append(append(data, b...), '\n')
	}
	var loaded int
	allocs := testing.AllocsPerRun(2, func() {
		l := &Ledger{runs: newEntries()}
		l.runs.lineAt = func(int64, int, []byte) ([]byte, error) { return nil, io.EOF }
		bad, err := l.load(bytes.NewReader(data))
		require.NoError(t, err)
		require.Zero(t, bad)
		loaded = l.runs.len()
	})
	require.Equal(t, lines, loaded)
	assert.LessOrEqual(t, allocs/lines, 4.0, "allocations a line loaded")
}

// TestDecodeEntry: a ledger line is read by decodeEntry as json.Unmarshal
// reads it, and the lines a sync writes (json.Marshal of an entry) are
// all read by it, not left to encoding/json; what it does not read the
// caller decodes with json.Unmarshal, which decides.
func TestDecodeEntry(t *testing.T) {
	full, err := json.Marshal(fullEntry())
	require.NoError(t, err)
	minimal, err := json.Marshal(Entry{RunID: "r1", Head: "h", Path: "/p", Size: -1})
	require.NoError(t, err)
	cases := []struct {
		name string
		line string
		fast bool // read by decodeEntry
	}{
		{"every member", string(full), true},
		{"the members a new run has", string(minimal), true},
		{"spaces and another order", ` { "path" : "/p" , "run_id":"r1","size":5 ,"totals":{ "lines" : 2 , "usage" : { "output_tokens" : 3 } } } `, true},
		{"nulls", `{"run_id":"r1","path":null,"size":null,"closed":null,"totals":{"usage":{"input_tokens":null,"service_tier":null},"cost_usd":null,"warnings":null},"first":null,"resume":null}`, true},
		{"a service tier named twice", `{"run_id":"r1","totals":{"usage":{"service_tier":"a","service_tier":"b"}}}`, false},
		{"totals null", `{"run_id":"r1","totals":null}`, true},
		{"empty lists and maps", `{"run_id":"r1","totals":{"warnings":[],"unmapped":{}},"also":[],"facts":[]}`, true},
		{"escapes in a string", `{"run_id":"r\u0031","path":"/a\"b\\c\/d\n"}`, true},
		{"an escape in a key", `{"run\u005fid":"r1"}`, true},
		{"not ASCII", `{"run_id":"r1","path":"/home/é/s.jsonl"}`, true},
		{"invalid UTF-8", "{\"run_id\":\"r1\",\"path\":\"/\xff\"}", true},
		{"a negative size, a float cost", `{"run_id":"r1","size":-1,"totals":{"cost_usd":1.5e-3}}`, true},
		{"an offset time", `{"run_id":"r1","first":"2026-05-23T21:38:27.239+02:00"}`, true},
		{"an unknown member", `{"run_id":"r1","new_field":[1,{"a":null}]}`, false},
		{"a member in other case", `{"Run_ID":"r1"}`, false},
		{"a member twice", `{"run_id":"r1","totals":{"lines":1},"totals":{"failed_lines":2}}`, false},
		{"a float size", `{"run_id":"r1","size":1.5}`, false},
		{"a size too large", `{"run_id":"r1","size":9223372036854775808}`, false},
		{"a string size", `{"run_id":"r1","size":"5"}`, false},
		{"a bad time", `{"run_id":"r1","first":"yesterday"}`, false},
		{"a number as a string", `{"run_id":5}`, false},
		{"a control character in a string", "{\"run_id\":\"r\x01\"}", false},
		{"a bad escape", `{"run_id":"r\x"}`, false},
		{"cut short", string(full[:len(full)/2]), false},
		{"trailing bytes", `{"run_id":"r1"}x`, false},
		{"a trailing comma", `{"run_id":"r1",}`, false},
		{"a leading zero", `{"run_id":"r1","size":01}`, false},
		{"not an object", `["run_id"]`, false},
		{"null", `null`, false},
		{"empty", ``, false},
		{"deep nesting", `{"run_id":"r1","facts":` + deep(100) + `}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fast, _ := decodeBoth(t, []byte(c.line))
			assert.Equal(t, c.fast, fast)
		})
	}
}

func deep(n int) string {
	s := ""
	for range n {
		s += "["
	}
	for range n {
		s += "]"
	}
	return s
}

// FuzzDecodeEntry: whatever the line, decodeEntry reads it as
// json.Unmarshal does or leaves it to it.
func FuzzDecodeEntry(f *testing.F) {
	full, _ := json.Marshal(fullEntry())
	f.Add(full)
	f.Add([]byte(`{"run_id":"r1","totals":{"usage":{"input_tokens":1},"warnings":["a"]},"first":"2026-05-23T21:38:27Z"}`))
	f.Add([]byte(`{"run_id":"r\u0031","path":null,"size":-0,"totals":{"cost_usd":1e2}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		decodeBoth(t, line)
	})
}

// TestOpenLedgerDecodes: OpenLedger reads the lines decodeEntry reads
// and those it leaves to encoding/json alike, and a line neither reads
// still makes the ledger be rebuilt.
func TestOpenLedgerDecodes(t *testing.T) {
	root := t.TempDir()
	e := fullEntry()
	e.Pending, e.Closed = false, true
	line, err := json.Marshal(e)
	require.NoError(t, err)
	other := `{"run_id":"r2","Path":"/other","size":1,"unknown":true}`
	require.NoError(t, writeFile(LedgerFile(root), string(line)+"\n"+other+"\n"))
	l, rebuilt, err := OpenLedger(root, true)
	require.NoError(t, err)
	assert.Empty(t, rebuilt)
	got := l.Entries()
	require.Len(t, got, 2)
	assert.Equal(t, e, got[0])
	assert.Equal(t, Entry{RunID: "r2", Path: "/other", Size: 1}, got[1])

	// A line longer than the reader's buffer, the last without its
	// newline.
	long := e
	long.RunID = "r4"
	long.Facts = []FactsAt{{At: 1, Line: strings.Repeat("f", 100<<10)}}
	longLine, err := json.Marshal(long)
	require.NoError(t, err)
	require.NoError(t, writeFile(LedgerFile(root), "\n"+string(line)+"\n"+string(longLine)))
	l, rebuilt, err = OpenLedger(root, true)
	require.NoError(t, err)
	assert.Empty(t, rebuilt)
	got = l.Entries()
	require.Len(t, got, 2)
	assert.Equal(t, e, got[0])
	assert.Equal(t, long, got[1])

	require.NoError(t, writeFile(LedgerFile(root), string(line)+"\n"+`{"run_id":"r3","size":"x"}`+"\n"))
	_, rebuilt, err = OpenLedger(root, true)
	require.NoError(t, err)
	assert.Equal(t, "1 unreadable ledger line(s)", rebuilt)
	require.NoError(t, writeFile(LedgerFile(root), string(line)+"\n"+`{"size":1}`))
	_, rebuilt, err = OpenLedger(root, true)
	require.NoError(t, err)
	assert.Equal(t, "1 unreadable ledger line(s)", rebuilt, "a line without a run id, the last, without its newline")
}

func writeFile(path, s string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(s), 0o600)
}

// TestLinePath: linePath reads the path of a line whose members are
// named once as decodeEntry (and json.Unmarshal) read it, or says it
// does not.
func TestLinePath(t *testing.T) {
	for _, c := range packCases() {
		line, err := json.Marshal(&c.e)
		require.NoError(t, err)
		p, ok := linePath(line)
		assert.True(t, ok, c.name)
		assert.Equal(t, c.e.Path, p, c.name)
	}
	for _, tc := range []struct {
		line string
		path string
		ok   bool
	}{
		{`{"run_id":"r","path":"/a"}`, "/a", true},
		{` {"totals":{"lines":3,"usage":{"input_tokens":1}},"also":[{"path":"/b"}],"path":"/a"} `, "/a", true},
		{`{"path":"/\u00e9","size":1}`, "/é", true},
		{`{"run_id":"r"}`, "", false},
		{`{"Path":"/a"}`, "", false},
		{`{"size":,"path":"/a"}`, "", false},
		{`{"path":3}`, "", false},
	} {
		p, ok := linePath([]byte(tc.line))
		assert.Equal(t, tc.ok, ok, tc.line)
		if ok {
			assert.Equal(t, tc.path, p, tc.line)
		}
	}
}

// FuzzLinePath: the path linePath reads of a line decodeEntry reads is
// decodeEntry's.
func FuzzLinePath(f *testing.F) {
	for _, c := range packCases() {
		line, _ := json.Marshal(&c.e)
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var e Entry
		if !decodeEntry(line, &e) {
			return
		}
		p, ok := linePath(line)
		if !ok {
			require.Empty(t, e.Path, "a line without a path member")
			return
		}
		require.Equal(t, e.Path, p)
	})
}
