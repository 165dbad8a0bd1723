package archive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/transcript"
)

// packCases are entries as ledgers hold them, the rare members included.
func packCases() []struct {
	name string
	e    Entry
} {
	n := func(v int64) *int64 { return &v }
	cost := 0.125
	hex := "5413b9e64698841713cee54e1992144767d456f8e3c4443caf69e65806c2f73e"
	id := "00006d61-ba25-4c33-a2f9-f4f6218eb922"
	first := time.Date(2026, 2, 10, 21, 11, 52, 438e6, time.UTC)
	return []struct {
		name string
		e    Entry
	}{
		{"empty", Entry{}},
		{"a sync's entry", Entry{
			RunID: id, Provider: "claude", Head: hex, Path: "/h/.claude/projects/p/s.jsonl", Size: 10515, ModTime: 1796066263199134857,
			Offset: 10515, SHA256: "8c24695bca3501c9395e090d1b43231e80d95b119895914e9c74e57139dc4ee3", Parts: 1,
			Raw: "raw/" + id + "/agent.0.0.087a4b8d.raw.zst", First: first, Last: first.Add(time.Minute), Status: "ok",
			Totals: &Totals{Usage: &transcript.Usage{InputTokens: n(25353), UncachedInputTokens: n(3), CacheReadTokens: n(11515),
				CacheWriteTokens: n(13835), CacheWrite1hTokens: n(13835), OutputTokens: n(13), ServiceTier: "standard"}, Lines: 15},
		}},
		{"heads that are not hex, a raw of another run, a size unknown", Entry{
			RunID: "r1", Provider: "opencode", Head: "h1", Path: "/db#ses_1", Size: -1, Offset: 7, SHA256: "ABCDEF",
			Raw: "raw/other/agent.raw", Parts: 3, Closed: true, Pending: true, Seal: true, Redact: true,
		}},
		{"upper-case hex is kept as written", Entry{
			RunID: "r2", Head: "5413B9E64698841713CEE54E1992144767D456F8E3C4443CAF69E65806C2F73E", SHA256: hex[:63] + "g",
		}},
		{"raw exactly the run's directory", Entry{RunID: "r3", Raw: "raw/r3/"}},
		{"every rare member", Entry{
			RunID: id, Provider: "codex", Head: hex, Path: "/p", SHA256: hex, Parts: 2, Parent: "parent-run", LooseAt: 3, SupersededBy: "other-run",
			First: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("", 2*3600)), Status: "incomplete",
			Resume: &Resume{Format: "jsonl", Whole: true, End: true, Store: "s", Dir: "d", Facts: true, Project: "/proj", SessionStart: "# aider", Held: true},
			Facts:  []FactsAt{{At: 0, Line: `{"facts":1}`}, {At: 99, Line: `{"facts":2}`}},
			Files:  []FileState{{Path: "a/b.json", Size: 3, ModTime: 4, Offset: 3, SHA256: hex}},
			Also:   []Seen{{Path: "/copy", Size: 5, ModTime: 6, Offset: 5, SHA256: hex}},
			Totals: &Totals{Usage: &transcript.Usage{TotalTokens: n(-5), ReasoningTokens: n(0)}, CostUSD: &cost,
				Unmapped: map[string]int{"x": 2}, Lines: 1 << 40, FailedLines: 3, Warnings: []string{"w1", "w2"}},
		}},
		{"totals empty but set", Entry{RunID: "r4", Totals: &Totals{Unmapped: map[string]int{}, Warnings: []string{}}}},
		{"usage set and empty", Entry{RunID: "r5", Totals: &Totals{Usage: &transcript.Usage{}}}},
	}
}

// TestPackEntry: an entry packed unpacks to the same entry, to the same
// JSON line the ledger's file holds, and a hex head or sha256 takes 32
// bytes of the header, not a member.
func TestPackEntry(t *testing.T) {
	for _, c := range packCases() {
		t.Run(c.name, func(t *testing.T) {
			p, err := packEntry(nil, &c.e)
			require.NoError(t, err)
			var got Entry
			require.NoError(t, unpackEntry(p, &got))
			assert.Equal(t, c.e, got)
			want, _ := json.Marshal(&c.e)
			line, _ := json.Marshal(&got)
			assert.JSONEq(t, string(want), string(line))
			pk := packed(p)
			assert.Equal(t, c.e.RunID, pk.runID())
			assert.Equal(t, c.e.Path, pk.path())
			assert.Equal(t, c.e.Head, pk.head())
			assert.Equal(t, c.e.Size, pk.size())
			assert.Equal(t, c.e.ModTime, pk.mtime())
			assert.Equal(t, c.e.Closed, pk.closed())
			assert.Equal(t, isLowerHex32(c.e.Head), len(pk.member(pmHead)) == 0 && c.e.Head != "")
		})
	}
}

// TestPackedSize: a sync's entry packs into a few hundred bytes, against
// the 710 of its JSON line.
func TestPackedSize(t *testing.T) {
	e := packCases()[1].e
	p, err := packEntry(nil, &e)
	require.NoError(t, err)
	line, _ := json.Marshal(&e)
	assert.Less(t, len(p), 300, "packed")
	assert.Less(t, 2*len(p), len(line)+100, "packed %d, line %d", len(p), len(line))
}

// TestPackTotalsFields fails when Totals or transcript.Usage gain a
// member, which packTotals must then pack.
func TestPackTotalsFields(t *testing.T) {
	assert.Equal(t, 6, reflect.TypeFor[Totals]().NumField(), "Totals: packTotals packs each member")
	assert.Equal(t, 9, reflect.TypeFor[transcript.Usage]().NumField(), "transcript.Usage: packTotals packs each member")
	assert.Equal(t, 25, reflect.TypeFor[Entry]().NumField(), "Entry: packEntry packs each member")
}

// TestUnpackMalformed: a packed entry cut short or with bytes after its
// members does not unpack.
func TestUnpackMalformed(t *testing.T) {
	e := packCases()[5].e
	p, err := packEntry(nil, &e)
	require.NoError(t, err)
	for _, b := range [][]byte{nil, p[:pkHeader-1], p[:pkHeader], p[:len(p)-1], append(append([]byte(nil), p...), 0)} {
		var got Entry
		assert.Error(t, unpackEntry(b, &got), "%d bytes", len(b))
	}
}

// FuzzUnpackEntry: unpackEntry never panics, and an entry it reads packs
// to bytes that unpack to it again.
func FuzzUnpackEntry(f *testing.F) {
	for _, c := range packCases() {
		p, err := packEntry(nil, &c.e)
		require.NoError(f, err)
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var e Entry
		if unpackEntry(b, &e) != nil {
			return
		}
		p, err := packEntry(nil, &e)
		require.NoError(t, err)
		var again Entry
		require.NoError(t, unpackEntry(p, &again))
		require.Equal(t, e, again)
	})
}

// ledgerIndexCases are runs whose lookups TestLedgerIndex checks
// (checkLedgerIndex), each with a run id of one letter.
func ledgerIndexCases() []Entry {
	return []Entry{
		{RunID: "a", Head: "h", Path: "/p", Offset: 5, Parts: 1, Closed: true},
		{RunID: "b", Head: "h", Path: "/p", Offset: 9, Parts: 1, Closed: true},
		{RunID: "c", Head: "h", Path: "/p", Offset: 5, Parts: 1},
		{RunID: "d", Head: "h", Path: "/p", Parts: 0, Closed: true},                    // holds no session
		{RunID: "e", Head: "h", Path: "/q", Parts: 1, Closed: true, SupersededBy: "f"}, // superseded
		{RunID: "f", Head: "h2", Path: "/q2", Parts: 1, Also: []Seen{{Path: "/copy", Size: 1, ModTime: 2}}},
		{RunID: "g", Head: "h2", Path: "/q3", Parts: 1, Also: []Seen{{Path: "/copy", Size: 3, ModTime: 4}}},
		{RunID: "h", Head: "h", Path: "/r", Parts: 1, Closed: true, SupersededBy: "x"},
		{RunID: "i", Head: "h", Path: "/r", Parts: 1, Closed: true, SupersededBy: "x"},
	}
}

// checkLedgerIndex checks the answers of a ledger of the n runs of
// ledgerIndexCases, put in any order, whose run ids are their letters
// or UUIDs ending in the letter's number (uuidOfLetter).
func checkLedgerIndex(t *testing.T, l *Ledger, n int) {
	t.Helper()
	name := func(id string) string {
		if u, ok := runid.Key(id); ok {
			return string(rune('a' + u[15]))
		}
		return id
	}
	for path, want := range map[string]string{"/p": "c", "/q": "e", "/q2": "f", "/r": "h", "/none": ""} {
		got := ""
		if e := l.ByPath(path); e != nil {
			got = name(e.RunID)
		}
		assert.Equal(t, want, got, "ByPath(%s)", path)
		if s, ok := l.seenAt(path); ok {
			assert.Equal(t, want, name(s.runID()), "seenAt(%s)", path)
			assert.Equal(t, l.ByPath(path).Head, s.head(), "seenAt(%s)", path)
		}
	}
	var ids []string
	for _, e := range l.ByHead("h") {
		ids = append(ids, name(e.RunID))
	}
	assert.Equal(t, []string{"b", "a", "c"}, ids, "ByHead")
	c := l.CopyAt("/copy", 3, time.Unix(0, 4))
	require.NotNil(t, c)
	assert.Equal(t, "g", name(c.RunID))
	assert.Nil(t, l.CopyAt("/copy", 1, time.Unix(0, 2)), "f's copy: g notes the path last")
	assert.Len(t, l.Entries(), n)
	assert.Nil(t, l.ByPath("/elsewhere"))
	assert.Empty(t, l.ByHead("other"))
}

// uuidOfLetter is a UUID whose last byte is the number of a one-letter
// run id (a: 0), so that the UUIDs are in the letters' order.
func uuidOfLetter(letter string) string {
	return fmt.Sprintf("00000000-0000-4000-8000-0000000000%02x", letter[0]-'a')
}

// TestLedgerIndex: the runs a ledger finds by path, by head and by copy
// are those its index found when it held Entry values: by path the open
// run of greatest id, else the ended one of greatest id, a superseded
// run only when no other was read from the path (the least id); by head
// the runs that hold a session no run supersedes, longest first, by id
// among equals; a copy's run the greatest id of those noting it. Runs
// put, replaced and removed in any order give the same answers.
func TestLedgerIndex(t *testing.T) {
	es := ledgerIndexCases()
	t.Run("in order", func(t *testing.T) {
		l := &Ledger{runs: newEntries()}
		for i := range es {
			require.NoError(t, l.runs.put(&es[i]))
		}
		checkLedgerIndex(t, l, len(es))
	})
	t.Run("reversed, replaced and removed", func(t *testing.T) {
		l := &Ledger{runs: newEntries()}
		require.NoError(t, l.runs.put(&Entry{RunID: "z", Head: "h", Path: "/p", Parts: 1}))
		for i := len(es) - 1; i >= 0; i-- {
			other := es[i]
			other.Path, other.Head, other.Also = "/elsewhere", "other", []Seen{{Path: "/copy"}}
			require.NoError(t, l.runs.put(&other))
		}
		for i := len(es) - 1; i >= 0; i-- {
			require.NoError(t, l.runs.put(&es[i]))
		}
		l.runs.remove("z")
		checkLedgerIndex(t, l, len(es))
	})
}

// TestLedgerIndexFile is TestLedgerIndex's ledger with run ids that are
// UUIDs (in the order of its letters), written to a ledger's file
// (Put), so that it holds each run as a record and reads the entry from
// the file: the same answers once written, once the file is opened
// again (lines read back by offset, later lines replacing earlier
// ones), once compacted, and after Close (the file read again).
func TestLedgerIndexFile(t *testing.T) {
	root := t.TempDir()
	l, _, err := OpenLedger(root, false)
	require.NoError(t, err)
	es := ledgerIndexCases()
	for i := range es {
		es[i].RunID = uuidOfLetter(es[i].RunID)
	}
	ix := func(t *testing.T, l *Ledger) {
		t.Helper()
		checkLedgerIndex(t, l, len(es))
		got := l.Entries()
		require.Len(t, got, len(es))
		for i := range es {
			assert.Equal(t, es[i], got[i])
		}
	}
	// Each run first as another, then as itself.
	for i := len(es) - 1; i >= 0; i-- {
		other := es[i]
		other.Path, other.Head, other.Also = "/elsewhere", "other", []Seen{{Path: "/copy"}}
		require.NoError(t, l.Put(&other))
	}
	for i := range es {
		require.NoError(t, l.Put(&es[i]))
	}
	assert.Empty(t, l.runs.mem, "every entry read from the file")
	ix(t, l)
	require.NoError(t, l.Close())
	ix(t, l) // read after Close: the file opened again

	l, rebuilt, err := OpenLedger(root, true)
	require.NoError(t, err)
	assert.Empty(t, rebuilt)
	assert.Empty(t, l.runs.mem)
	ix(t, l)
	require.NoError(t, l.Close())

	l, _, err = OpenLedger(root, false)
	require.NoError(t, err)
	require.NoError(t, l.rewrite())
	assert.Equal(t, len(es), l.lines, "compacted")
	ix(t, l)
	// A line appended after the rewrite is read at its own offset.
	es[2].Size = 11
	require.NoError(t, l.Put(&es[2]))
	assert.Equal(t, int64(11), l.ByPath("/p").Size)
	ix(t, l)
	require.NoError(t, l.Close())
}

// TestLedgerHeldSize: a ledger opened holds each run a sync wrote in
// about a hundred bytes (its record and its slots in the tables),
// whatever the entry's size, not the entry: measured as the live heap
// the opened ledger adds, for 20,000 runs of a sync's entry (packed,
// each was 330 bytes, with its chains about 480).
func TestLedgerHeldSize(t *testing.T) {
	const n = 20000
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Dir(LedgerFile(root)), 0o700))
	var b []byte
	e := packCases()[1].e
	for i := range n {
		e.RunID = fmt.Sprintf("%08x-ba25-4c33-a2f9-f4f6218eb922", i)
		e.Path = fmt.Sprintf("/h/.claude/projects/p%03d/s%05d.jsonl", i%50, i)
		e.Head = fmt.Sprintf("%064x", i)
		e.Raw = "raw/" + e.RunID + "/agent.0.0.087a4b8d.raw.zst"
		line, err := json.Marshal(&e)
		require.NoError(t, err)
		b = append(append(b, line...), '\n')
	}
	require.NoError(t, os.WriteFile(LedgerFile(root), b, 0o600))
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := live()
	l, rebuilt, err := OpenLedger(root, true)
	require.NoError(t, err)
	require.Empty(t, rebuilt)
	held := float64(live()-before) / n
	require.Equal(t, n, len(l.Entries()))
	assert.Less(t, held, 150.0, "bytes a run")
	t.Logf("%.0f bytes a run", held)
	// where reads every path from the file, a window at a time.
	paths := map[string]bool{}
	l.where(func(path string, closed bool) bool {
		paths[path] = true
		assert.False(t, closed)
		return false
	})
	assert.Len(t, paths, n)
	assert.True(t, paths["/h/.claude/projects/p049/s19999.jsonl"])
	require.NoError(t, l.Close())
}

// TestLedgerLineOfAnotherRun: a ledger closed whose file was replaced
// since (its lines elsewhere) does not give another run's line for an
// entry: reading it panics.
func TestLedgerLineOfAnotherRun(t *testing.T) {
	root := t.TempDir()
	l, _, err := OpenLedger(root, false)
	require.NoError(t, err)
	a := Entry{RunID: uuidOfLetter("a"), Head: "h", Path: "/a", Parts: 1}
	b := Entry{RunID: uuidOfLetter("b"), Head: "h", Path: "/b", Parts: 1}
	require.NoError(t, l.Put(&a))
	require.NoError(t, l.Put(&b))
	require.NoError(t, l.Close())
	lines, err := os.ReadFile(LedgerFile(root))
	require.NoError(t, err)
	i := bytes.IndexByte(lines, '\n') + 1
	require.NoError(t, os.WriteFile(LedgerFile(root), append(lines[i:], lines[:i]...), 0o600)) // b's line first
	assert.Panics(t, func() { l.ByPath("/a") })
}

// TestLedgerWhereOf: whereOf asks about the open runs only
// (whereOpen), or only the runs whose path the sync did not list
// (whereUnlisted: markListed marks ByPath's run of each session, and
// forgets the marks of an earlier sync).
func TestLedgerWhereOf(t *testing.T) {
	l := &Ledger{runs: newEntries()}
	es := ledgerIndexCases()
	for i := range es {
		require.NoError(t, l.runs.put(&es[i]))
	}
	asked := func(which int) []string {
		var ids []string
		for _, e := range l.whereOf(which, func(string, bool) bool { return true }) {
			ids = append(ids, e.RunID)
		}
		slices.Sort(ids)
		return ids
	}
	assert.Equal(t, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, asked(whereAll))
	assert.Equal(t, []string{"c", "f", "g"}, asked(whereOpen))
	l.markListed([]Session{{Path: "/q2"}})
	l.markListed([]Session{{Path: "/p"}, {Path: "/q3"}, {Path: "/none"}})
	assert.Equal(t, []string{"a", "b", "d", "e", "f", "h", "i"}, asked(whereUnlisted), "c (ByPath of /p) and g listed")
	assert.Equal(t, []string{"f"}, asked(whereOpen|whereUnlisted))
}
