package index

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/testing/natives"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// The test archives are real transcripts: every input of
// testdata/golden and testdata/captures recorded through the capture
// pipeline with the native plugins (as `twasm import` records them),
// then replicated with a fresh run id per copy and the copy's times
// moved back by a day per round, until the archive has the size asked.

// pluginFor is the bundled plugin compiled in that accepts provider.
func pluginFor(provider string) (sdk.Plugin, bool) { return natives.ForProvider(provider) }

// seedInput is one provider input of the project's testdata.
type seedInput struct{ provider, path string }

// seedInputs lists the inputs under testdata/golden/<provider>/ and
// testdata/captures/<provider>/, with the provider a capture's
// expectations name.
func seedInputs(testdata string) ([]seedInput, error) {
	var out []seedInput
	for _, sub := range []string{"golden", "captures"} {
		files, err := filepath.Glob(filepath.Join(testdata, sub, "*", "*"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			base := filepath.Base(f)
			if strings.HasSuffix(base, ".golden.jsonl") || strings.HasSuffix(base, ".expect.json") ||
				strings.HasSuffix(base, ".source.txt") || strings.HasSuffix(base, ".md") || strings.HasPrefix(base, ".") {
				continue
			}
			provider := filepath.Base(filepath.Dir(f))
			expect := filepath.Join(filepath.Dir(f), strings.TrimSuffix(base, filepath.Ext(base))+".expect.json")
			if b, err := os.ReadFile(expect); err == nil {
				var e struct {
					Provider string `json:"provider"`
				}
				if json.Unmarshal(b, &e) == nil && e.Provider != "" {
					provider = e.Provider
				}
			}
			out = append(out, seedInput{provider, f})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no inputs under %s", testdata)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// recordSeed records every input into the storage root as one run each
// (sub-agents become child runs, with transcripts of their own) and
// returns the transcripts written.
func recordSeed(ctx context.Context, testdata, root string) ([]string, error) {
	inputs, err := seedInputs(testdata)
	if err != nil {
		return nil, err
	}
	store := recorder.NewStore(root)
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, in := range inputs {
		p, ok := pluginFor(in.provider)
		if !ok {
			return nil, fmt.Errorf("%s: no plugin for provider %q", in.path, in.provider)
		}
		f, err := os.Open(in.path)
		if err != nil {
			return nil, err
		}
		clock = clock.Add(time.Hour)
		now := clock
		opts := capture.Options{Provider: in.provider, Store: store, Plugin: capture.NativePlugin(p),
			Now: func() time.Time { now = now.Add(time.Millisecond); return now }}
		err = lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "import " + filepath.Base(in.path)}, func(ctx context.Context, r *lifecycle.Step) error {
			return r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
				_, err := capture.Run(ctx, s, capture.Source{Stdout: f}, opts)
				return err
			})
		})
		f.Close()
		if err != nil && !errors.Is(err, capture.ErrAgent) {
			return nil, fmt.Errorf("record %s: %w", in.path, err)
		}
	}
	return filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
}

// replicate writes copies of the seed transcripts into root's
// transcripts directory, round after round, until they hold at least
// size bytes (one round at least), and returns their total size. A copy
// gets a fresh run id (every occurrence of the seed's id replaced) and
// its envelope timestamps moved back by a day per round.
func replicate(seeds []string, root string, size int64) (int64, error) {
	dir := filepath.Join(root, "transcripts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	type seed struct {
		id    []byte
		lines [][]byte
	}
	var ss []seed
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		s := seed{id: []byte(strings.TrimSuffix(filepath.Base(p), ".jsonl"))}
		for _, l := range bytes.SplitAfter(b, []byte("\n")) {
			if len(l) > 0 {
				s.lines = append(s.lines, l)
			}
		}
		ss = append(ss, s)
	}
	var total int64
	var buf bytes.Buffer
	for round := 0; round == 0 || total < size; round++ {
		shift := -time.Duration(round) * 24 * time.Hour
		for _, s := range ss {
			if round > 0 && total >= size {
				break
			}
			id := []byte(uuid.NewString())
			buf.Reset()
			for _, l := range s.lines {
				l = bytes.ReplaceAll(l, s.id, id)
				buf.Write(shiftTimestamp(l, shift))
			}
			if err := os.WriteFile(filepath.Join(dir, string(id)+".jsonl"), buf.Bytes(), 0o600); err != nil {
				return total, err
			}
			total += int64(buf.Len())
		}
	}
	return total, nil
}

// shiftTimestamp moves the envelope timestamp of a transcript line (the
// first "timestamp" key: the envelope's comes before its payload).
func shiftTimestamp(line []byte, d time.Duration) []byte {
	const key = `"timestamp":"`
	i := bytes.Index(line, []byte(key))
	if i < 0 || d == 0 {
		return line
	}
	start := i + len(key)
	end := bytes.IndexByte(line[start:], '"')
	if end < 0 {
		return line
	}
	t, err := time.Parse(time.RFC3339Nano, string(line[start:start+end]))
	if err != nil {
		return line
	}
	out := make([]byte, 0, len(line)+8)
	out = append(out, line[:start]...)
	out = t.Add(d).UTC().AppendFormat(out, "2006-01-02T15:04:05.000Z07:00")
	return append(out, line[start+end:]...)
}

// buildArchive records the seed into a directory of its own under dir
// and replicates it into dir (the storage root of the archive) up to
// size bytes; it returns the archive's size.
func buildArchive(ctx context.Context, dir string, size int64) (int64, error) {
	seedRoot := filepath.Join(dir, "seed")
	defer os.RemoveAll(seedRoot)
	seeds, err := recordSeed(ctx, filepath.Join("..", "..", "testdata"), seedRoot)
	if err != nil {
		return 0, err
	}
	return replicate(seeds, dir, size)
}

// scanSearchAll answers queries the way a tool without an index must:
// it reads every transcript, decodes every line (transcript.NewReader),
// takes the same documents the index takes, matches each query's words
// the way FTS5 does (unicode61 tokens, case and diacritics folded, a
// word matching the tokens it starts, a quoted phrase matching
// consecutive tokens) and applies the same filters. It returns every
// hit of each query, unranked, with an empty snippet. All the queries
// are answered in one pass over the files.
func scanSearchAll(root string, qs []Query) ([][]Hit, error) {
	terms := make([][]scanTerm, len(qs))
	for i, q := range qs {
		if q.Raw {
			return nil, errors.New("scan: raw FTS5 expressions are not supported")
		}
		if terms[i] = scanTerms(q.Text); len(terms[i]) == 0 {
			return nil, errors.New("empty query")
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	out := make([][]Hit, len(qs))
	for _, file := range files {
		id := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		fileHits, run, err := scanFile(file, id, qs, terms)
		if err != nil {
			return nil, err
		}
		for i, q := range qs {
			if len(fileHits[i]) == 0 || q.Run != "" && !hasPrefixFold(id, q.Run) ||
				q.Provider != "" && !strings.Contains(run.providers, ","+q.Provider+",") ||
				q.Model != "" && !strings.Contains(strings.ToLower(run.models), ","+strings.ToLower(q.Model)) {
				continue
			}
			for _, h := range fileHits[i] {
				h.RunName, h.RunStatus, h.Providers = run.name, run.status, splitList(run.providers)
				if h.Status == "" { // a hit without an outcome of its own has its run's
					h.Status = run.status
				}
				if q.Status != "" && h.Status != q.Status {
					continue
				}
				out[i] = append(out[i], h)
			}
		}
	}
	return out, nil
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// scanFile reads one transcript: each query's matching documents (before
// the run-level filters) and the run's row.
func scanFile(file, id string, qs []Query, terms [][]scanTerm) ([][]Hit, *runRow, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	run := &runRow{id: id, providers: ",", models: ",", status: "running"}
	outcomes, err := scanOutcomes(f)
	if err != nil {
		return nil, nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	hits := make([][]Hit, len(qs))
	var buf []byte
	r := transcript.NewReader(bufio.NewReaderSize(f, 256<<10))
	for r.Next() {
		ev := r.Event()
		if ev == nil {
			continue
		}
		ts := ev.Timestamp.UnixMilli()
		if ev.Timestamp.IsZero() {
			ts = 0
		}
		for _, d := range scanDocs(ev, run, outcomes) {
			var folded []byte
			for i, q := range qs {
				if q.Kind != "" && d.kind != q.Kind || q.Role != "" && d.role != q.Role || q.Tool != "" && d.tool != q.Tool ||
					!q.Since.IsZero() && ts < q.Since.UnixMilli() || !q.Until.IsZero() && ts >= q.Until.UnixMilli() {
					continue
				}
				if folded == nil {
					folded = fold(buf[:0], d.text)
					buf = folded
				}
				if !matchAll(folded, terms[i]) {
					continue
				}
				h := Hit{RunID: id, Seq: ev.Seq, Path: ev.Path, Iteration: ev.Iteration, Kind: d.kind, Role: d.role, Tool: d.tool, Status: d.status}
				if ts != 0 {
					h.Time = time.UnixMilli(ts).UTC()
				}
				hits[i] = append(hits[i], h)
			}
		}
	}
	return hits, run, r.Err()
}

type scanDoc struct{ kind, role, tool, status, text string }

// scanOutcomes reads a transcript's tool results: each call id's
// outcome, and each result's outcome as its call's latest (a revised
// result, a new version of an earlier one, gives that one its outcome:
// transcript.Pairer, as the index does).
func scanOutcomes(f io.Reader) (*outcomes, error) {
	o := &outcomes{byID: map[string]string{}, result: map[uint64]int{}, latest: map[int]string{}}
	var pairs transcript.Pairer
	r := transcript.NewReader(bufio.NewReaderSize(f, 256<<10))
	for r.Next() {
		ev := r.Event()
		if ev == nil || ev.Type != transcript.ToolCall && ev.Type != transcript.ToolResult {
			continue
		}
		n, _, ok := pairs.Feed(ev)
		if t := ev.Tool(); t != nil && ev.Type == transcript.ToolResult {
			o.byID[t.CallID] = toolOutcome(t)
			if ok {
				o.result[ev.Seq], o.latest[n] = n, toolOutcome(t)
			}
		}
	}
	return o, r.Err()
}

// outcomes are a transcript's tool outcomes (scanOutcomes): byID, each
// call id's last; result, each result's call number (by the result's
// seq); latest, each call number's latest.
type outcomes struct {
	byID   map[string]string
	result map[uint64]int
	latest map[int]string
}

// of is the outcome of a tool result: its call's latest.
func (o *outcomes) of(ev *transcript.Event, t *transcript.ToolPayload) string {
	if n, ok := o.result[ev.Seq]; ok {
		return o.latest[n]
	}
	return toolOutcome(t)
}

func toolOutcome(t *transcript.ToolPayload) string {
	switch {
	case t.Status != "":
		return t.Status
	case t.Error != "":
		return transcript.StatusError
	}
	return transcript.StatusOK
}

// scanDocs is what the index makes of an event, read from the decoded
// transcript.Event (the index reads its own lean decoding): the
// documents, with their own outcomes (outcomes: by call id), and the
// run's figures.
func scanDocs(ev *transcript.Event, r *runRow, outcomes *outcomes) []scanDoc {
	var out []scanDoc
	status := ""
	add := func(kind, role, tool, text string) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		if len(text) > maxDocText {
			text = text[:maxDocText]
		}
		st := status
		if kind == "error" {
			st = transcript.StatusError
		}
		out = append(out, scanDoc{kind, role, tool, st, text})
	}
	switch ev.Type {
	case transcript.RunStarted:
		if p := ev.Step(); p != nil {
			r.name = p.Name
		}
	case transcript.RunCompleted:
		if p := ev.Step(); p != nil {
			r.status = p.Status
			if r.status == "" {
				r.status = "running"
			}
			add("error", "", "", p.Error)
		}
	case transcript.StepCompleted:
		p := ev.Step()
		if p == nil {
			break
		}
		if res, err := p.AgentResult(); err == nil && res != nil {
			addTo(&r.providers, res.Provider)
			addTo(&r.models, res.Model)
			add("error", "", "", res.Error)
		}
		add("error", "", "", p.Error)
	case transcript.MessageUser, transcript.MessageAssistant:
		m := ev.Message()
		if m == nil {
			break
		}
		addTo(&r.models, m.Model)
		for _, b := range m.Blocks {
			switch b.Type {
			case transcript.BlockText:
				add(string(b.Type), m.Role, "", b.Text)
			case transcript.BlockThinking:
				add(string(b.Type), m.Role, "", b.Thinking)
			case transcript.BlockCommand:
				add(string(b.Type), m.Role, "", b.Command)
			case transcript.BlockStream:
				add(string(b.Type), m.Role, "", b.Chunk)
			}
		}
	case transcript.ToolCall:
		if t := ev.Tool(); t != nil {
			status = outcomes.byID[t.CallID]
			add("tool_call", "tool", t.Name, toolCallText(t.Name, t.Command, t.Input))
		}
	case transcript.ToolResult:
		if t := ev.Tool(); t != nil {
			text := t.Output
			if t.Error != "" {
				text += "\n" + t.Error
			}
			status = outcomes.of(ev, t)
			add("tool_result", "tool", t.Name, text)
		}
	}
	return out
}

// scanTerm is a query word or phrase as its folded tokens, joined by
// single spaces and preceded by one; prefix: the last token matches the
// tokens it starts.
type scanTerm struct {
	text   string
	prefix bool
}

// scanTerms splits a query as MatchExpr does.
func scanTerms(text string) []scanTerm {
	var out []scanTerm
	for _, t := range queryTerms(text) {
		out = append(out, scanTerm{string(fold(nil, t.text)), !t.phrase})
	}
	return out
}

// fold appends s to dst the way FTS5's unicode61 tokenizer with
// remove_diacritics 2 sees it (tokens): each folded token preceded by
// one space.
func fold(dst []byte, s string) []byte {
	tokens(s, func(_, _ int, folded []byte) {
		dst = append(append(dst, ' '), folded...)
	})
	return dst
}

// matchAll reports whether every term is found in the folded document.
func matchAll(doc []byte, terms []scanTerm) bool {
	for _, t := range terms {
		if !matchTerm(doc, t) {
			return false
		}
	}
	return true
}

func matchTerm(doc []byte, t scanTerm) bool {
	if t.text == "" {
		return false
	}
	for rest := doc; ; {
		i := bytes.Index(rest, []byte(t.text))
		if i < 0 {
			return false
		}
		end := i + len(t.text)
		if t.prefix || end == len(rest) || rest[end] == ' ' {
			return true
		}
		rest = rest[i+1:]
	}
}

// TestSearchAgreesWithScan checks the index against the scan the
// benchmarks compare it with, on one copy of the seed: the same hits
// for the same query and filters.
func TestSearchAgreesWithScan(t *testing.T) {
	if testing.Short() {
		t.Skip("records every testdata input")
	}
	ctx := context.Background()
	root := t.TempDir()
	seeds, err := recordSeed(ctx, filepath.Join("..", "..", "testdata"), filepath.Join(t.TempDir(), "seed"))
	require.NoError(t, err)
	_, err = replicate(seeds, root, 1)
	require.NoError(t, err)
	ix, _ := openUpdated(t, root)
	runs, err := ix.Runs(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, runs)
	some := runs[0]
	for _, r := range runs {
		if r.Events > some.Events {
			some = r
		}
	}
	queries := append(append([]Query(nil), benchQueries...), []Query{
		{Text: "error"},
		{Text: "file", Kind: "tool_call"},
		{Text: "the", Role: "user"},
		{Text: "test", Provider: "codex"},
		{Text: "a", Model: "claude"},
		{Text: "a", Run: some.RunID[:6]},
		{Text: "a", Status: "error"},
		{Text: "test", Kind: "tool_call", Status: "error"},
		{Text: "test", Status: "ok"},
		{Text: "read", Tool: "Read"},
		{Text: `"no such file"`},
		{Text: "main.go"},
		{Text: "hello.go", Role: "user"},
		{Text: "the", Since: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)},
	}...)
	want, err := scanSearchAll(root, queries)
	require.NoError(t, err)
	key := func(h Hit) string {
		return fmt.Sprintf("%s %d %s %d %s %s %s %s %s %s %s %v", h.RunID, h.Seq, h.Path, h.Iteration, h.Kind, h.Role, h.Tool, h.Time, h.RunName, h.RunStatus, h.Status, h.Providers)
	}
	for i, q := range queries {
		t.Run(fmt.Sprintf("%+v", q), func(t *testing.T) {
			q.Limit, q.Every = 1<<30, true
			var g, w []string
			for _, h := range search(t, ix, q) {
				g = append(g, key(h))
			}
			for _, h := range want[i] {
				w = append(w, key(h))
			}
			assert.ElementsMatch(t, w, g)
			assert.NotEmpty(t, w, "a query that finds nothing checks little")
		})
	}
	// List's Errors, counted as the index reads the documents, are the
	// documents the scan finds whose own outcome is error, calls left
	// out.
	listed, _, err := ix.List(ctx, ListQuery{Children: true, Limit: 1 << 30})
	require.NoError(t, err)
	require.Len(t, listed, len(runs))
	errs := 0
	for _, r := range listed {
		want, err := scanErrors(filepath.Join(root, "transcripts", r.RunID+".jsonl"))
		require.NoError(t, err)
		assert.Equal(t, want, r.Errors, "run %s", r.RunID)
		errs += want
	}
	assert.NotZero(t, errs, "runs without errors check little")
}

// scanErrors counts a transcript's documents whose own outcome is error,
// tool calls left out (ListedRun.Errors), read as scanSearchAll reads
// them.
func scanErrors(file string) (int, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	outcomes, err := scanOutcomes(f)
	if err != nil {
		return 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	n := 0
	run := &runRow{}
	r := transcript.NewReader(bufio.NewReaderSize(f, 256<<10))
	for r.Next() {
		if ev := r.Event(); ev != nil {
			for _, d := range scanDocs(ev, run, outcomes) {
				if d.status == transcript.StatusError && d.kind != "tool_call" {
					n++
				}
			}
		}
	}
	return n, r.Err()
}

// benchQueries are what the search benchmarks ask, index and scan alike:
// a rare word, two common words, and a common word under filters.
var benchQueries = []Query{
	{Text: "pytest"},
	{Text: "permission denied"},
	{Text: "test", Kind: "tool_result", Status: "ok"},
}
