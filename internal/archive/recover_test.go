package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/rawfile"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// storageState is what a storage root holds: every file's bytes, by path
// relative to the root.
type storageState map[string][]byte

func snapshot(t *testing.T, root string) storageState {
	t.Helper()
	st := storageState{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		st[rel] = b
		return err
	}))
	return st
}

func (st storageState) restore(t *testing.T, root string) {
	t.Helper()
	for rel, b := range st {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, b, 0o600))
	}
}

// killedAt is the storage a sync or import killed while it wrote the
// last part leaves: after is the storage once that part completed,
// before the storage before it began. The run's transcript keeps its
// first lines lines (a torn half line after them when torn), the raw
// capture the part was extending keeps rawKeep of the bytes the part
// added, the ledger its pending entry (its last line, the entry written
// after the part, is dropped), and the recorder's checkpoint is the one
// from before the part.
func killedAt(t *testing.T, before, after storageState, runID string, lines int, torn bool, rawKeep float64) storageState {
	t.Helper()
	st := storageState{}
	for rel, b := range before {
		st[rel] = b
	}
	tr := filepath.Join("transcripts", runID+".jsonl")
	// The sub-runs the kept lines link to: started (the link begun), and
	// ended (the link completed).
	started, ended := map[string]bool{}, map[string]bool{}
	if lines > 0 {
		for _, l := range bytes.SplitAfter(after[tr], []byte("\n"))[:lines] {
			var ev struct {
				Type  string `json:"type"`
				Child string `json:"child_run_id"`
			}
			if json.Unmarshal(l, &ev) == nil && ev.Child != "" {
				started[ev.Child] = started[ev.Child] || ev.Type == string(transcript.StepCallWorkflowStarted)
				ended[ev.Child] = ended[ev.Child] || ev.Type == string(transcript.StepCallWorkflowCompleted)
			}
		}
	}
	for rel, b := range after {
		child := strings.TrimSuffix(strings.TrimPrefix(rel, "transcripts"+string(filepath.Separator)), ".jsonl")
		switch {
		case rel != tr && strings.HasPrefix(rel, "transcripts") && before[rel] == nil && !started[child]:
			// a sub-run of the part begun after the kill
		case rel != tr && strings.HasPrefix(rel, "transcripts") && before[rel] == nil && !ended[child]:
			// a sub-run of the part still being written: its first half
			ls := bytes.SplitAfter(b, []byte("\n"))
			st[rel] = bytes.Join(ls[:max(1, len(ls)/2)], nil)
		case rel == tr:
			ls := bytes.SplitAfter(b, []byte("\n"))
			if lines == 0 {
				delete(st, rel)
				continue
			}
			cut := bytes.Join(ls[:lines], nil)
			if torn && lines < len(ls) {
				cut = append(cut, ls[lines][:len(ls[lines])/2]...)
			}
			st[rel] = cut
		case rel == filepath.Join("archive", "ledger.jsonl"):
			ls := bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
			st[rel] = append(bytes.Join(ls[:len(ls)-1], nil), '\n')
		case strings.HasPrefix(rel, filepath.Join("raw", runID)+string(filepath.Separator)):
			old := before[rel]
			n := len(old) + int(float64(len(b)-len(old))*rawKeep)
			st[rel] = b[:n]
		case strings.HasSuffix(rel, ".state"):
			// the checkpoint as it was before the part (or none)
		default:
			if _, ok := st[rel]; !ok {
				st[rel] = b
			}
		}
	}
	return st
}

// messages lists a run's messages as what they say (type, role, id,
// blocks), sorted: a multiset to compare with a run never interrupted.
func messages(t *testing.T, evs []*transcript.Event) []string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		if m := ev.Message(); m != nil {
			b, err := json.Marshal(m.Blocks)
			require.NoError(t, err)
			out = append(out, string(ev.Type)+" "+m.Role+" "+m.ID+" "+string(b))
		}
	}
	sort.Strings(out)
	return out
}

func validRun(t *testing.T, root, runID string) {
	t.Helper()
	rep, err := transcript.ValidateFile(os.DirFS(filepath.Join(root, "transcripts")), runID+".jsonl", transcript.ValidateOptions{})
	require.NoError(t, err)
	require.True(t, rep.OK(), "run %s: %+v", runID, rep.Errors)
}

// sessionRuns lists the session runs of a storage root (run.started with
// a "source"), by id.
func sessionRuns(t *testing.T, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(root, "transcripts"))
	require.NoError(t, err)
	var ids []string
	for _, d := range ents {
		if !strings.HasSuffix(d.Name(), ".jsonl") {
			continue
		}
		id := strings.TrimSuffix(d.Name(), ".jsonl")
		if v := readRun(t, root, id); len(v.events) > 0 && v.events[0].Step().Extra[SourceField] != nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestRecoverInterruptedPart: a sync or import killed at any line of the
// part it was writing (its first part, or a later one), with any share
// of the part's bytes in the raw capture, is settled by the next one:
// the session is still one run, holding every message, call and result
// once, as a run never interrupted holds them, with the same raw
// capture; no step is left open; the transcript is valid; and the ledger
// says the whole file is archived. Before the fix the next sync archived
// the session again as a new run (a first part) or opened the same step
// again (a later part).
func TestRecoverInterruptedPart(t *testing.T) {
	for _, tc := range []struct {
		name, provider, fixture string
		split                   int // lines in the first part; 0: the first part is killed
		imp, redact             bool
	}{
		{name: "claude first part", provider: "claude", fixture: "claude/agentcmd_session_log_ansi_tool_error.jsonl"},
		{name: "claude second part", provider: "claude", fixture: "claude/agentcmd_session_log_ansi_tool_error.jsonl", split: 30},
		{name: "claude second part redacted", provider: "claude", fixture: "claude/agentcmd_session_log_ansi_tool_error.jsonl", split: 30, redact: true},
		{name: "codex second part", provider: "codex", fixture: "codex/agentcmd_rollout_v0.40_vscode_session.jsonl", split: 90},
		{name: "codex import", provider: "codex", fixture: "codex/agentcmd_rollout_v0.40_vscode_session.jsonl", imp: true},
		{name: "claude import", provider: "claude", fixture: "claude/agentcmd_session_log_ansi_tool_error.jsonl", imp: true},
		{name: "claude sub-agents first part", provider: "claude", fixture: "testdata/captures/claude/spotter_session_log_v2.1.38_agent_progress.jsonl"},
		{name: "claude sub-agents second part", provider: "claude", fixture: "testdata/captures/claude/spotter_session_log_v2.1.38_agent_progress.jsonl", split: 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own home and storages
			recoverInterrupted(t, tc.provider, tc.fixture, tc.split, tc.imp, tc.redact)
		})
	}
}

func recoverInterrupted(t *testing.T, provider, fix string, split int, imp, redactOn bool) {
	ctx := context.Background()
	data := fixture(t, fix)
	lines := bytes.SplitAfter(data, []byte("\n"))
	home := t.TempDir()
	path := filepath.Join(home, "s.jsonl")
	mod := func(o *Options) {
		o.Redact = redactOn
		if imp {
			o.Whole, o.CloseIdle, o.CloseWrittenOnly = true, 0, true
		}
	}

	// The storage before and after the part that is killed.
	root := t.TempDir()
	a := newArchiver(t, root, mod)
	if split > 0 {
		writeAged(t, path, bytes.Join(lines[:split], nil), time.Hour)
		o := a.SyncFile(ctx, provider, path)
		require.Equal(t, ActionNew, o.Action, o.Reason)
	}
	before := snapshot(t, root)
	writeAged(t, path, data, time.Hour-time.Minute)
	o := a.SyncFile(ctx, provider, path)
	require.NotEqual(t, ActionFailed, o.Action, o.Reason)
	runID := o.RunID
	require.NoError(t, a.Close())
	after := snapshot(t, root)
	clean := readRun(t, root, runID)
	cleanRaw := clean.parts[len(clean.parts)-1].Raw
	trLines := bytes.SplitAfter(after[filepath.Join("transcripts", runID+".jsonl")], []byte("\n"))
	trLines = trLines[:len(trLines)-1]
	// The part's lines: from its step.started (or run.started) to the
	// line before its step.completed.
	first := 0
	if split > 0 {
		first = bytes.Count(before[filepath.Join("transcripts", runID+".jsonl")], []byte("\n"))
	}
	last := len(trLines) - 1
	for last > 0 && !bytes.Contains(trLines[last], []byte(`"step.completed"`)) {
		last--
	}
	require.Greater(t, last, first)

	// Kill points: lines of the part up to its step.completed, and for
	// an import the line before run.completed too. Every line would take
	// minutes: about 24 points (8 redacted) spread over the part, its ends always
	// among them.
	n := 24
	if redactOn {
		n = 8 // masking is slow: fewer points
	}
	// What a run never killed shows, computed once for every kill point.
	type subView struct {
		subs                   []string
		all                    []*transcript.Event
		search                 map[string]int
		usage                  *transcript.Usage
		totals                 views.Totals
		fromFiles, fromDigests *transcript.Usage
	}
	var want *subView
	if subs := subRunMessages(t, root, clean.events); len(subs) > 0 {
		var all []*transcript.Event
		for _, id := range append(sessionRuns(t, root), linkedRuns(clean.events)...) {
			all = append(all, readRun(t, root, id).events...)
		}
		want = &subView{subs: subs, search: searchCounts(t, root, all), usage: subRunUsage(t, root), totals: treeTotals(t, root, runID)}
		want.fromFiles, want.fromDigests = listUsage(t, root, runID)
		want.all = all
	}
	stride := max(1, (len(trLines)-first)/n)
	points := 0
	for k := first; k < len(trLines); k++ {
		if (k-first)%stride != 0 && k > first+1 && k < last-1 && k != last && k != len(trLines)-1 {
			continue
		}
		for _, torn := range []bool{false, true} {
			if torn && (k/stride)%3 != 0 {
				continue
			}
			points++
			name := strings.NewReplacer(" ", "_").Replace(strings.Join([]string{"line", itoa(k), map[bool]string{true: "torn"}[torn]}, "_"))
			t.Run(name, func(t *testing.T) {
				r := t.TempDir()
				killedAt(t, before, after, runID, k, torn, min(1, float64(k-first)/float64(last-first))).restore(t, r)
				b := newArchiver(t, r, mod)
				outs := b.Recover(ctx)
				o := b.SyncFile(ctx, provider, path)
				require.NotEqual(t, ActionFailed, o.Action, "%s (recovered: %+v)", o.Reason, outs)

				runs := sessionRuns(t, r)
				require.Len(t, runs, 1, "one run for the session (recovered: %+v)", outs)
				id := runs[0]
				if k > 0 {
					assert.Equal(t, runID, id, "the interrupted run continues")
				}
				validRun(t, r, id)
				got := readRun(t, r, id)
				assert.Equal(t, messages(t, clean.events), messages(t, got.events), "every message once")
				assert.Equal(t, clean.calls, got.calls)
				assert.Equal(t, clean.results, got.results)
				assert.Equal(t, clean.output, got.output, "tokens counted once")
				lastPart := got.parts[len(got.parts)-1]
				require.NotNil(t, lastPart.Raw)
				raw, err := rawfile.ReadFile(filepath.Join(r, lastPart.Raw.Path))
				require.NoError(t, err, "the raw capture reads whole, no frame cut short left")
				rawSum := sha256.Sum256(raw)
				assert.Equal(t, cleanRaw.SHA256, hex.EncodeToString(rawSum[:]), "the raw capture holds the session once")
				assert.Equal(t, cleanRaw.Bytes, int64(len(raw)))
				assert.Equal(t, cleanRaw.SHA256, lastPart.Raw.SHA256)
				ents, _ := os.ReadDir(filepath.Join(r, "raw", id))
				assert.Len(t, ents, 1, "no raw capture of a killed part is left")
				finished := got.events[len(got.events)-1].Type == transcript.RunCompleted
				assert.Equal(t, imp, finished, "ended as the command that was killed would have")
				open := 0
				for _, ev := range got.events {
					switch ev.Type {
					case transcript.StepStarted:
						open++
					case transcript.StepCompleted:
						open--
					}
				}
				assert.Zero(t, open, "no step left open")
				// Each sub-agent once: one sub-run of the run for each
				// of a clean run, holding its messages, beside the
				// superseded sub-runs of the cancelled step.
				if want != nil {
					assert.Equal(t, want.subs, subRunMessages(t, r, got.events), "one sub-run per sub-agent, its messages once")
					// Search finds each message as often as in a run
					// never killed.
					assert.Equal(t, want.search, searchCounts(t, r, want.all), "search finds each message once")
					assert.Equal(t, want.usage, subRunUsage(t, r), "stats count the sub-agents' tokens once")
					assert.Equal(t, want.totals, treeTotals(t, r, id), "the run's totals (view, tree) count each sub-agent once")
					gotFiles, gotDigests := listUsage(t, r, id)
					assert.Equal(t, want.fromFiles, gotFiles, "ls counts each sub-agent's tokens once")
					assert.Equal(t, want.fromDigests, gotDigests, "ls from the index counts each sub-agent's tokens once")
				}
				require.NoError(t, b.Close())

				// The ledger says it all: nothing interrupted, the whole
				// file archived, and another sync finds nothing new.
				c := newArchiver(t, r, mod)
				assert.Empty(t, c.Ledger().Interrupted())
				e := c.Ledger().ByPath(path)
				require.NotNil(t, e)
				assert.Equal(t, int64(len(data)), e.Offset)
				o = c.SyncFile(ctx, provider, path)
				assert.Equal(t, ActionUnchanged, o.Action, o.Reason)
				assert.Equal(t, []string{id}, sessionRuns(t, r))
			})
		}
	}
	t.Logf("%d kill points", points)
}

// subRunMessages lists the messages of each sub-run the events link to
// and no later link supersedes (lifecycle.SupersedesField), one sorted
// list per sub-run, the lists sorted; it fails when a superseded sub-run
// is not ended.
func subRunMessages(t *testing.T, root string, evs []*transcript.Event) []string {
	t.Helper()
	var links []string
	gone := map[string]bool{}
	for _, ev := range evs {
		if ev.Type != transcript.StepCallWorkflowStarted || ev.ChildRunID == "" {
			continue
		}
		links = append(links, ev.ChildRunID)
		if raw := ev.Step().Extra[lifecycle.SupersedesField]; raw != nil {
			var old string
			require.NoError(t, json.Unmarshal(raw, &old))
			gone[old] = true
		}
	}
	var out []string
	for _, id := range links {
		if _, err := os.Stat(filepath.Join(root, "transcripts", id+".jsonl")); err != nil {
			continue // linked, never written (the kill came first)
		}
		v := readRun(t, root, id)
		if gone[id] {
			require.Equal(t, transcript.RunCompleted, v.events[len(v.events)-1].Type, "superseded sub-run %s ended", id)
			continue
		}
		out = append(out, strings.Join(messages(t, v.events), "\n"))
	}
	sort.Strings(out)
	return out
}

// linkedRuns lists the child runs the events link to.
func linkedRuns(evs []*transcript.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID != "" {
			out = append(out, ev.ChildRunID)
		}
	}
	return out
}

// searchPhrases are the search phrases of the messages in evs: the
// first words of each text block.
func searchPhrases(evs []*transcript.Event) []string {
	seen := map[string]bool{}
	var out []string
	for _, ev := range evs {
		m := ev.Message()
		if m == nil {
			continue
		}
		for _, b := range m.Blocks {
			w := strings.Fields(strings.Map(func(r rune) rune {
				if r == '"' || r < ' ' {
					return ' '
				}
				return r
			}, b.Text))
			if len(w) < 3 {
				continue
			}
			p := `"` + strings.Join(w[:min(6, len(w))], " ") + `"`
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// searchHits runs the search of every phrase of evs over the index of
// root (every hit, none folded) and calls f with each phrase's hits.
func searchHits(t *testing.T, root string, evs []*transcript.Event, f func(phrase string, hits []index.Hit)) {
	t.Helper()
	ctx := context.Background()
	ix, _, err := index.Open(ctx, root)
	require.NoError(t, err)
	defer ix.Close()
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	for _, p := range searchPhrases(evs) {
		hits, err := ix.Search(ctx, index.Query{Text: p, Every: true, Limit: 1000})
		require.NoError(t, err)
		f(p, hits)
	}
}

// searchCounts is how many hits search finds for each phrase of evs in
// root's index.
func searchCounts(t *testing.T, root string, evs []*transcript.Event) map[string]int {
	t.Helper()
	out := map[string]int{}
	searchHits(t, root, evs, func(p string, hits []index.Hit) { out[p] = len(hits) })
	return out
}

// searchRuns is, per run, how many hits search finds for the phrases of
// evs in root's index.
func searchRuns(t *testing.T, root string, evs []*transcript.Event) map[string]int {
	t.Helper()
	out := map[string]int{}
	searchHits(t, root, evs, func(_ string, hits []index.Hit) {
		for _, h := range hits {
			out[h.RunID]++
		}
	})
	return out
}

// subRunUsage is the usage stats count in the sub-agents' runs (and in
// any run without an agent step result) of root, every run added in the
// order of its file name.
func subRunUsage(t *testing.T, root string) *transcript.Usage {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
	require.NoError(t, err)
	st := views.NewStats()
	for _, p := range paths {
		run, err := views.LoadFile(p)
		require.NoError(t, err)
		st.Add(run)
	}
	return st.SubRunUsage
}

// treeTotals are the totals of run id's tree (its sub-runs included), as
// view and tree show them.
func treeTotals(t *testing.T, root, id string) views.Totals {
	t.Helper()
	l := views.Loader{Dir: filepath.Join(root, "transcripts")}
	run, err := l.Load(id)
	require.NoError(t, err)
	return views.BuildTree(l, run).Totals()
}

// listUsage is the usage in all of run id's listing line (ls), made from
// its run tree and from its files' digests (as the index keeps them).
func listUsage(t *testing.T, root, id string) (fromTree, fromDigests *transcript.Usage) {
	t.Helper()
	l := views.Loader{Dir: filepath.Join(root, "transcripts")}
	run, err := l.Load(id)
	require.NoError(t, err)
	lookup := func(runID string) (*views.RunDigest, bool) {
		r, err := l.Load(runID)
		if err != nil {
			return nil, false
		}
		return views.DigestRun(r), true
	}
	return views.Summarize(views.BuildTree(l, run)).UsageInAll,
		views.SummarizeDigests(views.DigestTree(views.DigestRun(run), lookup)).UsageInAll
}

// wholeOnly is a copy of root's transcripts without run id's.
func wholeOnly(t *testing.T, root, id string) string {
	t.Helper()
	cp := t.TempDir()
	st := storageState{}
	for rel, b := range snapshot(t, root) {
		if strings.HasPrefix(rel, "transcripts") && !strings.Contains(rel, id) {
			st[rel] = b
		}
	}
	st.restore(t, cp)
	return cp
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestInterruptedSeenByDoctor: a read-only ledger (doctor, a dry run)
// reports an interrupted archive and settles nothing; the session is not
// counted as archived.
func TestInterruptedSeenReadOnly(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "claude/agentcmd_session_log_ansi_tool_error.jsonl")
	root, home := t.TempDir(), t.TempDir()
	path := filepath.Join(home, "s.jsonl")
	a := newArchiver(t, root, nil)
	before := snapshot(t, root)
	writeAged(t, path, data, time.Hour)
	o := a.SyncFile(ctx, "claude", path)
	require.Equal(t, ActionNew, o.Action, o.Reason)
	require.NoError(t, a.Close())
	after := snapshot(t, root)
	r := t.TempDir()
	killedAt(t, before, after, o.RunID, 6, false, 0.5).restore(t, r)
	want := snapshot(t, r)

	d := newArchiver(t, r, func(o *Options) { o.DryRun = true })
	it := d.Ledger().Interrupted()
	require.Len(t, it, 1)
	assert.Equal(t, o.RunID, it[0].Entry.RunID)
	assert.NotEmpty(t, it[0].Open, "the open step is named")
	assert.Empty(t, d.Recover(ctx))
	e := d.Ledger().ByPath(path)
	assert.True(t, e == nil || e.Offset < int64(len(data)), "not archived: %+v", e)
	require.NoError(t, d.Close())
	assert.Equal(t, want, snapshot(t, r), "a dry run writes nothing")
	assert.True(t, slices.Equal(sessionRuns(t, r), []string{o.RunID}))
}

// TestRecoverRetriesAfterFailure: an interrupted first part whose
// continuation fails (the plugin does not load) is not ended: its step is
// closed as cancelled, the failure says the next sync continues it, and
// the next sync does, in the same run, with every message once.
func TestRecoverRetriesAfterFailure(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "codex/agentcmd_rollout_v0.40_vscode_session.jsonl")
	root, home := t.TempDir(), t.TempDir()
	path := filepath.Join(home, "s.jsonl")
	a := newArchiver(t, root, nil)
	before := snapshot(t, root)
	writeAged(t, path, data, time.Hour)
	o := a.SyncFile(ctx, "codex", path)
	require.Equal(t, ActionNew, o.Action, o.Reason)
	require.NoError(t, a.Close())
	after := snapshot(t, root)
	clean := readRun(t, root, o.RunID)
	r := t.TempDir()
	killedAt(t, before, after, o.RunID, 40, false, 0.3).restore(t, r)

	broken := newArchiver(t, r, func(opts *Options) {
		opts.Plugin = func(context.Context, string) (capture.Plugin, error) { return nil, errors.New("plugin gone") }
	})
	outs := broken.Recover(ctx)
	require.Len(t, outs, 1)
	assert.Equal(t, ActionFailed, outs[0].Action)
	assert.Contains(t, outs[0].Reason, "the next sync or import continues it")
	require.NoError(t, broken.Close())
	validRun(t, r, o.RunID)
	assert.NotEqual(t, transcript.RunCompleted, readRun(t, r, o.RunID).events[len(readRun(t, r, o.RunID).events)-1].Type, "not ended")

	b := newArchiver(t, r, nil)
	assert.Empty(t, b.Recover(ctx), "settled already")
	o2 := b.SyncFile(ctx, "codex", path)
	require.Equal(t, o.RunID, o2.RunID, "%s: %s", o2.Action, o2.Reason)
	assert.Equal(t, []string{o.RunID}, sessionRuns(t, r))
	got := readRun(t, r, o.RunID)
	assert.Equal(t, messages(t, clean.events), messages(t, got.events))
	validRun(t, r, o.RunID)
}

// TestLegacyOrphanEnded: a run that an older twasm left interrupted in
// its first part and dropped from its ledger, archiving the session again
// in another run, is found once per storage and ended as cancelled,
// saying which run holds the session: no run is left "running". The run
// holding the session is untouched, and the search is not repeated.
func TestLegacyOrphanEnded(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "claude/agentcmd_session_log_ansi_tool_error.jsonl")
	home := t.TempDir()
	path := filepath.Join(home, "s.jsonl")
	writeAged(t, path, data, time.Hour)

	// The orphan: a first part killed after 12 lines.
	orphanRoot := t.TempDir()
	a := newArchiver(t, orphanRoot, nil)
	before := snapshot(t, orphanRoot)
	o := a.SyncFile(ctx, "claude", path)
	require.NoError(t, a.Close())
	orphan := killedAt(t, before, snapshot(t, orphanRoot), o.RunID, 12, false, 0.2)

	// The storage the older twasm left: the session archived whole in a
	// run of its own, the orphan beside it, not in the ledger.
	r := t.TempDir()
	b := newArchiver(t, r, nil)
	whole := b.SyncFile(ctx, "claude", path)
	require.Equal(t, ActionNew, whole.Action)
	require.NoError(t, b.Close())
	for rel, content := range orphan {
		if strings.HasPrefix(rel, "transcripts") || strings.HasPrefix(rel, "raw") {
			storageState{rel: content}.restore(t, r)
		}
	}
	require.NoError(t, os.Remove(filepath.Join(r, "archive", orphansMarker)))
	wholeBefore := snapshot(t, r)[filepath.Join("transcripts", whole.RunID+".jsonl")]

	c := newArchiver(t, r, nil)
	outs := c.Recover(ctx)
	require.Len(t, outs, 1, "%+v", outs)
	assert.Equal(t, o.RunID, outs[0].RunID)
	assert.Equal(t, ActionClosed, outs[0].Action, outs[0].Reason)
	assert.Contains(t, outs[0].Reason, whole.RunID, "names the run that holds the session")
	require.NoError(t, c.Close())
	validRun(t, r, o.RunID)
	evs := readRun(t, r, o.RunID).events
	last := evs[len(evs)-1]
	require.Equal(t, transcript.RunCompleted, last.Type)
	assert.Equal(t, transcript.StatusCancelled, last.Step().Status)
	assert.Equal(t, wholeBefore, snapshot(t, r)[filepath.Join("transcripts", whole.RunID+".jsonl")])
	assert.Contains(t, string(last.Step().Extra[lifecycle.SupersededByField]), whole.RunID, "its end names the run that supersedes it")
	// Search finds what the orphan holds once, in the run that holds the
	// session, as if there were no orphan; before, the orphan's messages
	// were found a second time.
	assert.Equal(t, searchCounts(t, wholeOnly(t, r, o.RunID), evs), searchCounts(t, r, evs), "each message found once")
	assert.Empty(t, searchRuns(t, r, evs)[o.RunID], "nothing found in the superseded orphan")
	assert.Equal(t, subRunUsage(t, wholeOnly(t, r, o.RunID)), subRunUsage(t, r), "stats count the orphan's tokens once")

	// Once per storage: another orphan put there later is not looked for.
	for rel, content := range orphan {
		if strings.HasPrefix(rel, "transcripts") {
			storageState{strings.Replace(rel, o.RunID, "00000000-0000-4000-8000-000000000001", 1): content}.restore(t, r)
		}
	}
	d := newArchiver(t, r, nil)
	assert.Empty(t, d.Ledger().Interrupted())
	o2 := d.SyncFile(ctx, "claude", path)
	assert.Equal(t, ActionUnchanged, o2.Action, o2.Reason)
}

// TestRecoverInterruptedSQLitePart: a sync killed while it wrote a part of
// a SQLite store's session (its first part, or a later one) is settled by
// the next sync: the open step closed as cancelled, the raw capture cut
// back, and the run continued by the next read of the database from the
// cursor of its last completed part; one run for the session, holding
// every message as a sync never killed does, and a valid transcript.
func TestRecoverInterruptedSQLitePart(t *testing.T) {
	ctx := context.Background()
	for _, later := range []bool{false, true} {
		t.Run(map[bool]string{false: "first part", true: "later part"}[later], func(t *testing.T) {
			p, _, home, dbPath := sqliteSetup(t)
			agent := openAgentDB(t, dbPath)
			for i := range 6 {
				agent.part("ses_1", fmt.Sprintf("prt_%d", i), fmt.Sprintf("text %d", i))
			}
			locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
			plugin := func(o *Options) {
				o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
			}
			syncAt := func(root string) []Outcome {
				a := newArchiver(t, root, plugin)
				defer a.Close()
				return a.SyncStores(ctx, locs, time.Time{}, nil).Outcomes
			}
			grow := func() {
				agent.part("ses_1", "prt_2", "text 2, edited")
				for i := 6; i < 10; i++ {
					agent.part("ses_1", fmt.Sprintf("prt_%d", i), fmt.Sprintf("text %d", i))
				}
			}
			// The storage before and after the part that is killed, and
			// what a sync never killed archives.
			root := t.TempDir()
			if later {
				syncAt(root)
				grow()
			}
			before := snapshot(t, root)
			outs := syncAt(root)
			require.Len(t, outs, 1)
			runID := outs[0].RunID
			after := snapshot(t, root)
			clean := messages(t, readRun(t, root, runID).events)
			lines := bytes.Count(after[filepath.Join("transcripts", runID+".jsonl")], []byte("\n"))
			first := bytes.Count(before[filepath.Join("transcripts", runID+".jsonl")], []byte("\n"))
			for k := first + 1; k < lines; k++ {
				r := t.TempDir()
				killedAt(t, before, after, runID, k, false, 0.5).restore(t, r)
				outs := syncAt(r)
				require.NotEmpty(t, outs, "kill at line %d", k)
				for _, o := range outs {
					require.NotEqual(t, ActionFailed, o.Action, "kill at line %d: %s", k, o.Reason)
				}
				require.Equal(t, []string{runID}, sessionRuns(t, r), "kill at line %d: one run for the session", k)
				validRun(t, r, runID)
				assert.Equal(t, clean, messages(t, readRun(t, r, runID).events), "kill at line %d: every message as a sync never killed", k)
				// And nothing more the next time.
				for _, o := range syncAt(r) {
					assert.Equal(t, ActionUnchanged, o.Action, "kill at line %d: %s", k, o.Reason)
				}
			}
		})
	}
}

// TestRecoverInterruptedFolderPart: a sync killed while it wrote a part of
// a session folder (its first part, or a later one) is settled by the next
// sync, which continues the run from what its last completed part held of
// each file: one run, every message as a sync never killed, valid.
func TestRecoverInterruptedFolderPart(t *testing.T) {
	ctx := context.Background()
	for _, later := range []bool{false, true} {
		t.Run(map[bool]string{false: "first part", true: "later part"}[later], func(t *testing.T) {
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
			home := t.TempDir()
			task := filepath.Join(home, ".fo", "tasks", "1700000000000")
			writeAged(t, filepath.Join(task, "history.json"), docOf("one", "two", "three"), time.Hour)
			writeAged(t, filepath.Join(task, "events.jsonl"), []byte(`{"text":"e1"}`+"\n"+`{"text":"e2"}`+"\n"), time.Hour)
			locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
			syncAt := func(root string) []Outcome {
				a := newArchiver(t, root, func(o *Options) {
					o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
				})
				defer a.Close()
				return a.SyncStores(ctx, locs, time.Time{}, nil).Outcomes
			}
			root := t.TempDir()
			if later {
				syncAt(root)
				writeAged(t, filepath.Join(task, "history.json"), docOf("one", "two", "three", "four", "five"), 30*time.Minute)
				writeAged(t, filepath.Join(task, "events.jsonl"), []byte(`{"text":"e1"}`+"\n"+`{"text":"e2"}`+"\n"+`{"text":"e3"}`+"\n"), 30*time.Minute)
			}
			before := snapshot(t, root)
			outs := syncAt(root)
			require.Len(t, outs, 1)
			runID := outs[0].RunID
			after := snapshot(t, root)
			clean := messages(t, readRun(t, root, runID).events)
			tr := filepath.Join("transcripts", runID+".jsonl")
			lines := bytes.Count(after[tr], []byte("\n"))
			for k := bytes.Count(before[tr], []byte("\n")) + 1; k < lines; k++ {
				r := t.TempDir()
				st := killedAt(t, before, after, runID, k, false, 0.5)
				// A folder's part writes the ledger twice after it
				// began (the part, then the folder as seen): a kill mid-
				// part leaves it at the pending entry.
				led := filepath.Join("archive", "ledger.jsonl")
				ls := bytes.SplitAfter(after[led], []byte("\n"))
				for n := len(ls) - 1; n >= 0; n-- {
					if bytes.Contains(ls[n], []byte(`"pending":true`)) {
						st[led] = bytes.Join(ls[:n+1], nil)
						break
					}
				}
				st.restore(t, r)
				for _, o := range syncAt(r) {
					require.NotEqual(t, ActionFailed, o.Action, "kill at line %d: %s", k, o.Reason)
				}
				require.Equal(t, []string{runID}, sessionRuns(t, r), "kill at line %d: one run for the session", k)
				validRun(t, r, runID)
				assert.Equal(t, clean, messages(t, readRun(t, r, runID).events), "kill at line %d: every message as a sync never killed", k)
				for _, o := range syncAt(r) {
					assert.Equal(t, ActionUnchanged, o.Action, "kill at line %d: %s", k, o.Reason)
				}
			}
		})
	}
}
