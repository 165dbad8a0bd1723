package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/transcript"
)

// folderNorm reads a folder stream as a plugin of a folder store does:
// file lines are declared ignored; a document (an array of {"text"}) is
// compared, element by element, with the version it read before, by
// index and content, and only what is new or changed becomes a message;
// a JSON Lines line is a message.
type folderNorm struct {
	seen *factsSeen
	file string
	docs map[string][]string // file -> element hashes of the last version
}

func (f *folderNorm) Line(l *sdk.Line, out *sdk.Out) error {
	f.seen.mu.Lock()
	last := len(f.seen.streams) - 1
	f.seen.streams[last] = append(f.seen.streams[last], string(l.Raw))
	f.seen.mu.Unlock()
	v := l.JSON()
	switch {
	case v.Get("$twasm").Is(abi.SourceFileType):
		f.file = v.Get("path").String()
		out.Ignored(sdk.S("twasm_file"))
		return nil
	case v.Get("$twasm").Exists():
		out.Ignored(sdk.S("twasm_source"))
		return nil
	}
	emit := func(key string, text sdk.Str) {
		out.Open(sdk.S(key), sdk.Message{})
		out.Block(sdk.S(key), 0, sdk.Block{Type: sdk.BlockText, Text: text})
		out.Close(sdk.S(key), sdk.MessageEnd{})
	}
	if v.Kind() != abi.KindArray {
		emit(f.file+"#"+v.Get("text").String(), sdk.Text(v.Get("text")))
		return nil
	}
	old := f.docs[f.file]
	var sums []string
	n := 0
	for i := 0; i < v.Len(); i++ {
		el := v.Index(i)
		h := sha256.Sum256(el.Raw())
		s := hex.EncodeToString(h[:])
		sums = append(sums, s)
		if i < len(old) && old[i] == s {
			continue
		}
		emit(f.file+"#"+strconv.Itoa(i)+"#"+s[:8], sdk.Text(el.Get("text")))
		n++
	}
	f.docs[f.file] = sums
	if n == 0 {
		out.Ignored(sdk.S("unchanged_document"))
	}
	return nil
}

func (f *folderNorm) End(out *sdk.Out) error { return nil }

// hashTree is the sha256 of every file under dir with its path and mode.
func hashTree(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := d.Info()
		require.NoError(t, err)
		h.Write([]byte(p + "\x00" + info.Mode().String() + "\x00" + info.ModTime().String() + "\x00"))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			h.Write(b)
		}
		return nil
	}))
	return hex.EncodeToString(h.Sum(nil))
}

func docOf(texts ...string) []byte {
	var els []map[string]string
	for _, s := range texts {
		els = append(els, map[string]string{"text": s})
	}
	b, _ := json.MarshalIndent(els, "", "  ")
	return b
}

// userTexts are the texts of a run's messages, in order.
func messageTexts(t *testing.T, root, runID string) []string {
	t.Helper()
	var out []string
	for _, ev := range readRun(t, root, runID).events {
		if ev.Type == transcript.MessageAssistant {
			for _, b := range ev.Message().Blocks {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// TestFolderSession: a store of kind "folder" (ABI 1.4) makes one run
// of each session directory. The plugin reads each file after its file
// line, a JSON document compacted to one line; the second sync with
// nothing changed archives nothing; a document rewritten whole with one
// more element and a JSON Lines file that grew add one part holding only
// the new messages (the plugin read the raw capture first); a file only
// touched archives nothing; the raw capture is exactly what the plugin
// read; the ledger rebuilt from the transcripts knows the files; the
// store's bytes are never changed; a folder deleted ends its run.
func TestFolderSession(t *testing.T) {
	ctx := context.Background()
	seen := &factsSeen{}
	p := sdk.Plugin{Manifest: abi.Manifest{Name: "fo", Version: "1", Providers: []string{"fo"}, SourceFacts: true},
		New: func(abi.BeginOptions) sdk.Normalizer {
			seen.mu.Lock()
			seen.streams = append(seen.streams, nil)
			seen.mu.Unlock()
			return &folderNorm{seen: seen, docs: map[string][]string{}}
		}}
	p.Manifest.Stores = []abi.Store{{Name: "Fo tasks", Kind: KindFolder, Roots: []abi.Root{{Path: "~/.fo"}}, Dir: "tasks",
		Pattern: "*", Files: []string{"history.json", "*.jsonl", "meta.json"}}}
	root, home := t.TempDir(), t.TempDir()
	a := newArchiver(t, root, func(o *Options) {
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
	})
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
	require.Len(t, locs, 1)
	require.Empty(t, locs[0].Unusable)
	store := filepath.Join(home, ".fo", "tasks")
	task := filepath.Join(store, "1700000000000")
	writeAged(t, filepath.Join(task, "history.json"), docOf("one", "two"), time.Hour)
	writeAged(t, filepath.Join(task, "events.jsonl"), []byte(`{"text":"e1"}`+"\n"+`{"text":"partial`), 0)
	writeAged(t, filepath.Join(task, "other.txt"), []byte("not a session file"), time.Hour)
	writeAged(t, filepath.Join(store, "empty", "other.txt"), []byte("a folder with none of the files"), time.Hour)

	sync := func(want string) Outcome {
		t.Helper()
		before := hashTree(t, store)
		rep := a.SyncStores(ctx, locs, time.Time{}, nil)
		require.Equal(t, before, hashTree(t, store), "the store's bytes are unchanged")
		require.Len(t, rep.Outcomes, 1, "%+v", rep.Outcomes)
		require.Equal(t, want, rep.Outcomes[0].Action, "%+v", rep.Outcomes[0])
		require.Equal(t, 1, rep.Stores[0].Sessions)
		return rep.Outcomes[0]
	}
	o := sync(ActionNew)
	runID := o.RunID
	// The partial last line of events.jsonl, being written, waits.
	assert.Equal(t, []string{"one", "two", "e1"}, messageTexts(t, root, runID))

	o = sync(ActionUnchanged)
	assert.Equal(t, runID, o.RunID)
	_, found := Scan(locs, time.Time{})
	require.Len(t, found, 1)
	assert.True(t, Archived(a.Ledger(), found[0]), "doctor: the folder is archived")

	// A turn: the document rewritten whole with one more element, the
	// JSON Lines file grown.
	writeAged(t, filepath.Join(task, "history.json"), docOf("one", "two", "three"), 30*time.Minute)
	writeAged(t, filepath.Join(task, "events.jsonl"), []byte(`{"text":"e1"}`+"\n"+`{"text":"partial"}`+"\n"+`{"text":"e2"}`+"\n"), 30*time.Minute)
	_, found = Scan(locs, time.Time{})
	assert.False(t, Archived(a.Ledger(), found[0]), "doctor: a turn not synced yet")
	o = sync(ActionGrown)
	_, found = Scan(locs, time.Time{})
	assert.True(t, Archived(a.Ledger(), found[0]), "doctor: the turn is archived")
	assert.Equal(t, runID, o.RunID)
	assert.Equal(t, []string{"one", "two", "e1", "three", "partial", "e2"}, messageTexts(t, root, runID),
		"the second part holds only the new element and the new line")

	// Touched, not changed.
	when := time.Now().Add(-20 * time.Minute)
	require.NoError(t, os.Chtimes(filepath.Join(task, "history.json"), when, when))
	sync(ActionUnchanged)
	// An element changed in place is kept in its new version.
	writeAged(t, filepath.Join(task, "history.json"), docOf("one", "TWO", "three"), 10*time.Minute)
	sync(ActionGrown)
	assert.Equal(t, []string{"one", "two", "e1", "three", "partial", "e2", "TWO"}, messageTexts(t, root, runID))
	sync(ActionUnchanged)

	// The raw capture is what the plugin read, line for line: the last
	// stream (replay, then the new bytes) is the raw capture.
	e := a.Ledger().ByPath(task)
	require.NotNil(t, e)
	raw, err := rawfile.ReadFile(filepath.Join(root, e.Raw))
	require.NoError(t, err)
	rawLines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	seen.mu.Lock()
	require.Len(t, seen.streams, 3)
	assert.Equal(t, rawLines, seen.streams[2])
	seen.mu.Unlock()
	var files, sources []abi.SourceFile
	for _, l := range rawLines {
		var f abi.SourceFile
		if json.Unmarshal([]byte(l), &f) == nil && f.Type == abi.SourceFileType {
			files = append(files, f)
		}
		if f.Type == abi.SourceFactsType {
			sources = append(sources, f)
		}
	}
	assert.Len(t, sources, 3, "a facts line naming the folder before each part")
	require.Len(t, files, 5, "%s", raw)
	assert.Equal(t, []string{"history.json", "events.jsonl", "history.json", "events.jsonl", "history.json"},
		[]string{files[0].Path, files[1].Path, files[2].Path, files[3].Path, files[4].Path}, "the declared order")
	assert.True(t, files[0].Document)
	assert.False(t, files[1].Document)
	assert.Equal(t, int64(len(`{"text":"e1"}`+"\n")), files[3].From, "the grown file from where it was left")
	assert.Contains(t, string(raw), `[{"text":"one"},{"text":"two"}]`+"\n", "a document compacted to one line")

	// The ledger rebuilt from the transcripts knows the folder's files:
	// nothing new.
	require.NoError(t, a.Close())
	require.NoError(t, os.Remove(LedgerFile(root)))
	a = newArchiver(t, root, func(o *Options) {
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
	})
	e2 := a.Ledger().ByPath(task)
	require.NotNil(t, e2)
	assert.Equal(t, e.Files, e2.Files)
	assert.Equal(t, runID, sync(ActionUnchanged).RunID)

	// The agent deleted the folder: its run ends.
	require.NoError(t, os.RemoveAll(task))
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Equal(t, 1, rep.Counts[ActionClosed], "%+v", rep.Outcomes)
}

// TestFolderPending: a JSON document changed within the settle time is
// not read (its bytes may be half written), nor are the other files of
// its folder; a folder whose JSON Lines file holds no complete line yet
// waits.
func TestFolderPending(t *testing.T) {
	ctx := context.Background()
	seen := &factsSeen{}
	p := sdk.Plugin{Manifest: abi.Manifest{Name: "fo", Version: "1", Providers: []string{"fo"}},
		New: func(abi.BeginOptions) sdk.Normalizer {
			seen.mu.Lock()
			seen.streams = append(seen.streams, nil)
			seen.mu.Unlock()
			return &folderNorm{seen: seen, docs: map[string][]string{}}
		}}
	p.Manifest.Stores = []abi.Store{{Name: "Fo tasks", Kind: KindFolder, Roots: []abi.Root{{Path: "~/.fo"}}, Dir: "tasks",
		Pattern: "*", Files: []string{"history.json", "*.jsonl"}}}
	root, home := t.TempDir(), t.TempDir()
	a := newArchiver(t, root, func(o *Options) {
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
	})
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
	task := filepath.Join(home, ".fo", "tasks", "t1")
	writeAged(t, filepath.Join(task, "events.jsonl"), []byte(`{"text":"no line end yet`), 0)
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Equal(t, 1, rep.Counts[ActionPending], "%+v", rep.Outcomes)
	writeAged(t, filepath.Join(task, "history.json"), []byte(`[{"text":"half`), 0)
	rep = a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Equal(t, 1, rep.Counts[ActionPending], "%+v", rep.Outcomes)
	assert.Contains(t, rep.Outcomes[0].Reason, "history.json changed in the last")
	seen.mu.Lock()
	assert.Empty(t, seen.streams)
	seen.mu.Unlock()
}

// TestFolderStoreMoved: a session folder is its path relative to the
// store: the same store found at another place (a home directory copied
// to a new machine) holds the same sessions, and a turn added there
// grows the same run.
func TestFolderStoreMoved(t *testing.T) {
	ctx := context.Background()
	seen := &factsSeen{}
	p := sdk.Plugin{Manifest: abi.Manifest{Name: "fo", Version: "1", Providers: []string{"fo"}},
		New: func(abi.BeginOptions) sdk.Normalizer {
			seen.mu.Lock()
			seen.streams = append(seen.streams, nil)
			seen.mu.Unlock()
			return &folderNorm{seen: seen, docs: map[string][]string{}}
		}}
	p.Manifest.Stores = []abi.Store{{Name: "Fo tasks", Kind: KindFolder, Roots: []abi.Root{{Env: "FO_HOME"}}, Dir: "tasks",
		Pattern: "*", Files: []string{"history.json"}}}
	root := t.TempDir()
	a := newArchiver(t, root, func(o *Options) {
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
	})
	locsAt := func(dir string) []Location {
		return Discover(func(k string) string { return map[string]string{"FO_HOME": dir}[k] }, "linux", DeclaredOf(p.Manifest), nil)
	}
	old, moved := t.TempDir(), t.TempDir()
	writeAged(t, filepath.Join(old, "tasks", "t1", "history.json"), docOf("one"), time.Hour)
	rep := a.SyncStores(ctx, locsAt(old), time.Time{}, nil)
	require.Equal(t, 1, rep.Counts[ActionNew], "%+v", rep.Outcomes)
	runID := rep.Outcomes[0].RunID

	writeAged(t, filepath.Join(moved, "tasks", "t1", "history.json"), docOf("one"), time.Hour)
	rep = a.SyncStores(ctx, locsAt(moved), time.Time{}, nil)
	require.Equal(t, 1, rep.Counts[ActionUnchanged], "%+v", rep.Outcomes)
	assert.Equal(t, runID, rep.Outcomes[0].RunID)
	writeAged(t, filepath.Join(moved, "tasks", "t1", "history.json"), docOf("one", "two"), 30*time.Minute)
	rep = a.SyncStores(ctx, locsAt(moved), time.Time{}, nil)
	require.Equal(t, 1, rep.Counts[ActionGrown], "%+v", rep.Outcomes)
	assert.Equal(t, runID, rep.Outcomes[0].RunID)
	assert.Equal(t, []string{"one", "two"}, messageTexts(t, root, runID))
	e := a.Ledger().ByPath(filepath.Join(moved, "tasks", "t1"))
	require.NotNil(t, e, "the ledger follows the folder to where it is now")
	assert.Equal(t, runID, e.RunID)
}

// TestFolderRedact: a session folder synced with --redact: no secret
// reaches the raw capture or the transcript, and a turn added after the
// first sync still adds only the new message (the plugin reads the masked
// raw capture first, and compares the new version, masked the same way,
// with it).
func TestFolderRedact(t *testing.T) {
	ctx := context.Background()
	seen := &factsSeen{}
	p := sdk.Plugin{Manifest: abi.Manifest{Name: "fo", Version: "1", Providers: []string{"fo"}},
		New: func(abi.BeginOptions) sdk.Normalizer {
			seen.mu.Lock()
			seen.streams = append(seen.streams, nil)
			seen.mu.Unlock()
			return &folderNorm{seen: seen, docs: map[string][]string{}}
		}}
	p.Manifest.Stores = []abi.Store{{Name: "Fo tasks", Kind: KindFolder, Roots: []abi.Root{{Path: "~/.fo"}}, Dir: "tasks",
		Pattern: "*", Files: []string{"history.json"}}}
	root, home := t.TempDir(), t.TempDir()
	a := newArchiver(t, root, func(o *Options) {
		o.Redact = true
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
	})
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
	secret := "sk-ant-api03-" + strings.Repeat("B", 90)
	doc := filepath.Join(home, ".fo", "tasks", "t1", "history.json")
	writeAged(t, doc, docOf("use the key "+secret, "two"), time.Hour)
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Equal(t, 1, rep.Counts[ActionNew], "%+v", rep.Outcomes)
	runID := rep.Outcomes[0].RunID
	writeAged(t, doc, docOf("use the key "+secret, "two", "three"), 30*time.Minute)
	rep = a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Equal(t, 1, rep.Counts[ActionGrown], "%+v", rep.Outcomes)
	texts := messageTexts(t, root, runID)
	require.Len(t, texts, 3, "%q", texts)
	assert.Equal(t, []string{"two", "three"}, texts[1:])
	assert.NotContains(t, texts[0], secret)
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.Type().IsRegular() {
			b, err := rawfile.ReadFile(p) // a framed raw capture's raw bytes
			require.NoError(t, err)
			assert.NotContains(t, string(b), secret, p)
		}
		return nil
	}))
}
