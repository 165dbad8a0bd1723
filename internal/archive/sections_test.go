package archive

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/plugins/aider"
)

// TestSplitSections: every byte of a sections file is in exactly one
// session, each session starts at a start line (bytes before the first
// one are the first session's), and only a line's start counts.
func TestSplitSections(t *testing.T) {
	const p = "# aider chat started at "
	long := strings.Repeat("x", 100<<10) // longer than the reader's buffer
	cases := []struct {
		name   string
		in     string
		starts []string // each session's first bytes
	}{
		{"empty", "", nil},
		{"no start line", "hello\nworld\n", []string{"hello"}},
		{"one session", p + "1\n#### hi\n", []string{p + "1"}},
		{"preamble is the first session's", "note\n\n" + p + "1\nA\n" + p + "2\nB\n", []string{"note", p + "2"}},
		{"two sessions", p + "1\nA\n\n" + p + "2\nB\n", []string{p + "1", p + "2"}},
		{"prefix inside a line", p + "1\nsay " + p + "x\n", []string{p + "1"}},
		{"prefix after a long line", p + "1\n" + long + p + "no\n" + p + "2\n", []string{p + "1", p + "2"}},
		{"crlf", p + "1\r\nA\r\n" + p + "2\r\n", []string{p + "1", p + "2"}},
		{"no final line end", p + "1\nA\n" + p + "2", []string{p + "1", p + "2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			secs, err := splitSections(strings.NewReader(c.in), int64(len(c.in)), p)
			require.NoError(t, err)
			require.Len(t, secs, len(c.starts))
			at := int64(0)
			for i, s := range secs {
				assert.Equal(t, at, s.start, "session %d starts where the one before ends", i)
				assert.True(t, strings.HasPrefix(c.in[s.start:s.end], c.starts[i]), "session %d starts %q", i, c.in[s.start:min(s.end, s.start+40)])
				at = s.end
			}
			if len(secs) > 0 {
				assert.Equal(t, int64(len(c.in)), at, "the last session ends at the end")
			}
		})
	}
}

// FuzzSplitSections: any bytes split into contiguous sessions covering
// them, each but the first starting at a start line.
func FuzzSplitSections(f *testing.F) {
	const p = "# s "
	f.Add([]byte("a\n# s 1\nb\n# s 2\n"))
	f.Add([]byte("# s \n\n# s"))
	f.Fuzz(func(t *testing.T, b []byte) {
		secs, err := splitSections(bytes.NewReader(b), int64(len(b)), p)
		if err != nil {
			t.Fatal(err)
		}
		at := int64(0)
		for i, s := range secs {
			if s.start != at || s.end <= s.start {
				t.Fatalf("session %d is [%d,%d), after %d", i, s.start, s.end, at)
			}
			if i > 0 && !bytes.HasPrefix(b[s.start:], []byte(p)) {
				t.Fatalf("session %d does not start at a start line", i)
			}
			at = s.end
		}
		if at != int64(len(b)) {
			t.Fatalf("sessions end at %d of %d", at, len(b))
		}
	})
}

// TestSyncSections: an Aider history found in a configured project is
// archived one run per session, incrementally: a sync with nothing new
// archives nothing, a session that grows grows its run, a session
// appended is a new run, a line being written waits, and a file
// rewritten shorter is archived anew; each run's raw capture is exactly
// its session's bytes, with the facts line before each part's, which
// names the project the history was found in (ABI 1.8). Through the real
// plugin, natively.
func TestSyncSections(t *testing.T) {
	ctx := context.Background()
	home, repo, root := t.TempDir(), t.TempDir(), t.TempDir()
	hist := filepath.Join(repo, ".aider.chat.history.md")
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(aider.Plugin.Manifest), &Config{Projects: []string{repo}})
	require.Len(t, locs, 1)
	require.Equal(t, KindSections, locs[0].Kind)
	a := newArchiver(t, root, nil)

	s1 := "# aider chat started at 2025-01-02 10:00:00\n\n> Aider v0.80.0  \n\n#### hi\n\nHello.\n\n> Tokens: 1.2k sent, 20 received. Cost: $0.01 message, $0.01 session.  \n"
	s1more := "\n#### again\n\nHello again.\n\n"
	s2 := "# aider chat started at 2025-01-03 09:00:00\n\n#### fix it\n> litellm.RateLimitError: AnthropicException - rate limited  \n"
	s2half := "Done"
	s3 := "# aider chat started at 2025-01-04 08:00:00\n\n#### more\n\nSure.\n"
	steps := []struct {
		name    string
		content string
		counts  map[string]int
		// sessions: each session's bytes its run's raw capture holds
		sessions []string
	}{
		{"first", s1, map[string]int{ActionNew: 1}, []string{s1}},
		{"again: nothing new", s1, map[string]int{ActionUnchanged: 1}, []string{s1}},
		{"the session grows", s1 + s1more, map[string]int{ActionGrown: 1}, []string{s1 + s1more}},
		{"a session appended", s1 + s1more + s2, map[string]int{ActionUnchanged: 1, ActionNew: 1}, []string{s1 + s1more, s2}},
		{"again: nothing new", s1 + s1more + s2, map[string]int{ActionUnchanged: 2}, []string{s1 + s1more, s2}},
		{"a line being written waits", s1 + s1more + s2 + s2half, map[string]int{ActionUnchanged: 2}, []string{s1 + s1more, s2}},
		{"the line completed", s1 + s1more + s2 + s2half + ".\n", map[string]int{ActionUnchanged: 1, ActionGrown: 1}, []string{s1 + s1more, s2 + s2half + ".\n"}},
		{"rewritten shorter", s2, map[string]int{ActionNew: 1, ActionClosed: 1}, []string{s2}},
		{"again: nothing new", s2, map[string]int{ActionUnchanged: 1}, []string{s2}},
		// Aider writes "\n# aider chat started at ..." in one write: the
		// blank line is the new session's, and the run before is left
		// as it was (before placeBlanks: one more part, holding it).
		{"a session appended as Aider writes it", s2 + "\n" + s3, map[string]int{ActionUnchanged: 1, ActionNew: 1}, []string{s2, "\n" + s3}},
		{"again: nothing new", s2 + "\n" + s3, map[string]int{ActionUnchanged: 2}, []string{s2, "\n" + s3}},
	}
	for _, st := range steps {
		require.NoError(t, os.WriteFile(hist, []byte(st.content), 0o600))
		rep := a.SyncStores(ctx, locs, time.Time{}, nil)
		for _, o := range rep.Outcomes {
			require.NotEqual(t, ActionFailed, o.Action, "%s: %s: %s", st.name, o.Path, o.Reason)
		}
		assert.Equal(t, st.counts, rep.Counts, "%s: %+v", st.name, rep.Outcomes)
		for i, want := range st.sessions {
			// The run the sync says holds it (after a rewrite, an
			// older run went by the same path).
			var e *Entry
			for _, o := range rep.Outcomes {
				if o.Path == sectionPath(hist, i+1) && o.RunID != "" {
					e = a.ledger.byRun(o.RunID)
				}
			}
			require.NotNil(t, e, "%s: session %d", st.name, i+1)
			f, err := rawfile.OpenAll(filepath.Join(root, filepath.FromSlash(e.Raw)))
			require.NoError(t, err)
			got, err := io.ReadAll(f)
			f.Close()
			require.NoError(t, err)
			var bytes, facts []string
			for _, l := range strings.SplitAfter(string(got), "\n") {
				if strings.HasPrefix(l, `{"$twasm":"source",`) {
					facts = append(facts, l)
					continue
				}
				bytes = append(bytes, l)
			}
			assert.Equal(t, want, strings.Join(bytes, ""), "%s: session %d's raw capture", st.name, i+1)
			require.NotEmpty(t, facts, "%s: session %d's raw capture has no facts line", st.name, i+1)
			for _, f := range facts {
				assert.Contains(t, f, `"project":"`+repo+`"`, "%s: session %d's facts line", st.name, i+1)
			}
		}
	}
}

// TestPlaceBlanks: the blank line right before a start line is the new
// session's, unless the run of the session before holds it already (it
// was archived before the next session was appended); the sessions stay
// contiguous either way.
func TestPlaceBlanks(t *testing.T) {
	const p = "# s "
	in := p + "1\nA\n\n" + p + "2\nB\n"
	cases := []struct {
		name   string
		held   int64 // bytes session 1's run holds (0: no run)
		starts []string
	}{
		{"no run yet", 0, []string{p + "1\nA\n", "\n" + p + "2"}},
		{"the run holds the session without it", int64(len(p + "1\nA\n")), []string{p + "1\nA\n", "\n" + p + "2"}},
		{"the run holds it", int64(len(p + "1\nA\n\n")), []string{p + "1\nA\n\n", p + "2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			secs, err := splitSections(strings.NewReader(in), int64(len(in)), p)
			require.NoError(t, err)
			l, _, err := OpenLedger(t.TempDir(), false)
			require.NoError(t, err)
			defer l.Close()
			if tc.held > 0 {
				head, _, err := readHead(strings.NewReader(in[:tc.held]), tc.held, true)
				require.NoError(t, err)
				require.NoError(t, l.Put(&Entry{RunID: "0b0221db-831d-4246-9800-82ae8ca5c503", Provider: "aider", Head: sum(head), SHA256: sum([]byte(in[:tc.held])),
					Path: sectionPath("f", 1), Offset: tc.held, Parts: 1}))
			}
			require.NoError(t, placeBlanks(l, strings.NewReader(in), secs))
			require.Len(t, secs, 2)
			assert.Equal(t, secs[0].end, secs[1].start, "contiguous")
			assert.Equal(t, int64(len(in)), secs[1].end)
			for i, want := range tc.starts {
				assert.True(t, strings.HasPrefix(in[secs[i].start:secs[i].end], want), "session %d is %q", i+1, in[secs[i].start:secs[i].end])
			}
			assert.Equal(t, tc.starts[0], in[secs[0].start:secs[0].end])
		})
	}
}

// SectionsStore picks the store a file imported as provider is split by:
// the one its name matches, else the provider's first sections store;
// none for a provider without one, or one without a start line.
func TestSectionsStore(t *testing.T) {
	hist := Declared{Store: abi.Store{Name: "history", Kind: abi.StoreKindSections, Pattern: ".aider.chat.history.md", SessionStart: "# aider chat started at "}, Provider: "aider", Plugin: "aider"}
	other := Declared{Store: abi.Store{Name: "notes", Kind: abi.StoreKindSections, Pattern: "*.notes.md", SessionStart: "# notes from "}, Provider: "aider", Plugin: "aider"}
	plain := Declared{Store: abi.Store{Name: "logs", Pattern: "*.jsonl"}, Provider: "claude", Plugin: "claude"}
	noStart := Declared{Store: abi.Store{Name: "broken", Kind: abi.StoreKindSections, Pattern: "*.md"}, Provider: "broken", Plugin: "broken"}
	dir := t.TempDir()
	tests := []struct {
		name     string
		declared []Declared
		provider string
		file     string
		want     string // store name, "" for none
	}{
		{"the name matches", []Declared{hist, other}, "aider", "repo/.aider.chat.history.md", "history"},
		{"the name matches the second", []Declared{hist, other}, "aider", "repo/x.notes.md", "notes"},
		{"renamed: the first", []Declared{other, hist}, "aider", "saved/history-copy.md", "notes"},
		{"no sections store", []Declared{plain, hist}, "claude", "a.jsonl", ""},
		{"another provider's", []Declared{hist}, "codex", ".aider.chat.history.md", ""},
		{"no start line", []Declared{noStart}, "broken", "a.md", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, filepath.FromSlash(tc.file))
			loc, ok := SectionsStore(tc.declared, tc.provider, path)
			if tc.want == "" {
				require.False(t, ok, "%+v", loc)
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.want, loc.Name)
			require.Equal(t, KindSections, loc.Kind)
			require.Equal(t, filepath.Dir(path), loc.Dir)
			require.Equal(t, tc.provider, loc.Provider)
			require.NotEmpty(t, loc.SessionStart)
		})
	}
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n *int64
}

func (c countingReaderAt) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(b, off)
	*c.n += int64(n)
	return n, err
}

// sectionsArchive is what a sync of a sections file archived, by
// session path: the outcome's action, part and bytes, and the run's raw
// capture and messages.
func sectionsArchive(t *testing.T, a *Archiver, root string, rep Report) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, o := range rep.Outcomes {
		require.NotEqual(t, ActionFailed, o.Action, "%s: %s", o.Path, o.Reason)
		got := []string{o.Action, fmt.Sprint(o.Part), fmt.Sprint(o.Bytes)}
		if e := a.ledger.byRun(o.RunID); e != nil {
			raw, err := rawfile.ReadFile(filepath.Join(root, filepath.FromSlash(e.Raw)))
			require.NoError(t, err)
			got = append(got, string(raw))
			v := readRun(t, root, e.RunID)
			for _, ev := range v.events {
				if m := ev.Message(); m != nil {
					for _, b := range m.Blocks {
						got = append(got, m.Role+": "+b.Text)
					}
				}
			}
		}
		out[o.Path] = got
	}
	return out
}

// TestSyncSectionsReadsTail: a sections file that grew is split from
// the start of the last session known, not from its first byte, and
// what is archived is what splitting it whole archives. The file is
// made of the real Aider captures, many times over (their start lines
// dated apart, so that no two sessions are the same bytes), with one
// capture appended in two steps: its first session cut mid-way, then
// the rest (the last session known grows, new sessions follow). The
// bytes read by the sync after the growth are at most six times the
// tail from the last session known (each byte is read a few times),
// plus a read at the end for a line being written and the first
// session's head, whatever the file's length; the archive equals that
// of an archiver that splits the file whole at every sync.
func TestSyncSectionsReadsTail(t *testing.T) {
	const start = "# aider chat started at "
	dir := filepath.Join("..", "..", "testdata", "captures", "aider")
	names := []string{"coding_aider_edits_commits.md", "trading_bot_connection_errors.md", "zen_mcp_sessions_interrupts.md"}
	caps := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		caps[n] = string(b)
	}
	// The captures 16 times over, every start line dated apart.
	var base strings.Builder
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 16 {
		for _, n := range names {
			for _, l := range strings.SplitAfter(caps[n], "\n") {
				if strings.HasPrefix(l, start) {
					at = at.Add(time.Minute)
					l = start + at.Format(time.DateTime) + "\n"
				}
				base.WriteString(l)
			}
			if !strings.HasSuffix(base.String(), "\n") {
				base.WriteString("\n")
			}
		}
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			ctx := context.Background()
			c := caps[n]
			// The tail read again: from the start of the last session of
			// the file before the capture.
			b := base.String()
			tailLen := int64(len(b) - strings.LastIndex(b, "\n"+start) + len(c))
			// The cut: half way through the lines of the capture's first
			// session that starts with a start line.
			p0 := 0
			if !strings.HasPrefix(c, start) {
				p0 = strings.Index(c, "\n"+start) + 1
			}
			first := c[p0:]
			if i := strings.Index(first, "\n"+start); i >= 0 {
				first = first[:i+1]
			}
			lines := strings.SplitAfter(first, "\n")
			require.Greater(t, len(lines), 4)
			cut := p0 + len(strings.Join(lines[:len(lines)/2], ""))
			home, repo := t.TempDir(), t.TempDir()
			hist := filepath.Join(repo, ".aider.chat.history.md")
			locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(aider.Plugin.Manifest), &Config{Projects: []string{repo}})
			require.Len(t, locs, 1)
			var read int64
			rootTail, rootWhole := t.TempDir(), t.TempDir()
			tail := newArchiver(t, rootTail, func(o *Options) {
				o.sectionsRead = func(r io.ReaderAt) io.ReaderAt { return countingReaderAt{r: r, n: &read} }
			})
			whole := newArchiver(t, rootWhole, func(o *Options) { o.sectionsWhole = true })
			for _, step := range []struct {
				name    string
				content string
			}{
				{"the last session cut", base.String() + c[:cut]},
				{"it grows and sessions follow", base.String() + c},
				{"nothing new", base.String() + c},
			} {
				require.NoError(t, os.WriteFile(hist, []byte(step.content), 0o600))
				read = 0
				got := sectionsArchive(t, tail, rootTail, tail.SyncStores(ctx, locs, time.Time{}, nil))
				want := sectionsArchive(t, whole, rootWhole, whole.SyncStores(ctx, locs, time.Time{}, nil))
				require.Equal(t, want, got, step.name)
				if step.name != "the last session cut" {
					// Each byte of the tail is read a few times (split,
					// head, hash of what a run holds, the new part, the
					// blank line's placing); the end and the first
					// session's head at most 64 KiB each.
					bound := 6*tailLen + 2*64<<10
					assert.LessOrEqual(t, read, bound, "%s: bytes read of %d (the tail from the last session known: %d)", step.name, len(step.content), tailLen)
					t.Logf("%s: %d bytes read of %d, tail %d", step.name, read, len(step.content), tailLen)
				}
			}
		})
	}
}

// TestRecoverInterruptedSectionsPart: a sync killed at any line of a
// later part of an Aider session it was writing is settled by the next
// sync, which continues the session as the killed one would have
// (recover.go): one run, every message as a sync never killed, valid,
// and every part's facts line and step naming the project the history
// was found in (Resume.Project), as a sync never killed names it.
func TestRecoverInterruptedSectionsPart(t *testing.T) {
	ctx := context.Background()
	home, repo := t.TempDir(), t.TempDir()
	hist := filepath.Join(repo, ".aider.chat.history.md")
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(aider.Plugin.Manifest), &Config{Projects: []string{repo}})
	require.Len(t, locs, 1)
	syncAt := func(root string) []Outcome {
		a := newArchiver(t, root, nil)
		defer a.Close()
		return a.SyncStores(ctx, locs, time.Time{}, nil).Outcomes
	}
	s1 := "# aider chat started at 2025-01-02 10:00:00\n\n> Aider v0.80.0  \n\n#### hi\n\nHello.\n\n> Tokens: 1.2k sent, 20 received. Cost: $0.01 message, $0.01 session.  \n"
	more := "\n#### again\n\nHello again.\n\n#### and once more\n\nSure.\n\n> Tokens: 1.5k sent, 30 received. Cost: $0.01 message, $0.02 session.  \n"
	root := t.TempDir()
	writeAged(t, hist, []byte(s1), time.Hour)
	syncAt(root)
	writeAged(t, hist, []byte(s1+more), 30*time.Minute)
	before := snapshot(t, root)
	outs := syncAt(root)
	require.Len(t, outs, 1)
	require.Equal(t, ActionGrown, outs[0].Action, outs[0].Reason)
	runID := outs[0].RunID
	after := snapshot(t, root)
	clean := messages(t, readRun(t, root, runID).events)
	// projects are the projects of the run's steps, and whether every
	// facts line its raw captures hold names the repository.
	projects := func(r string) ([]string, bool) {
		t.Helper()
		var got []string
		facts := true
		for _, p := range readRun(t, r, runID).parts { // the agent steps' results
			got = append(got, p.Project)
			require.NotNil(t, p.Raw)
			raw, err := rawfile.ReadFile(filepath.Join(r, p.Raw.Path))
			require.NoError(t, err)
			for _, l := range strings.Split(string(raw), "\n") {
				if strings.HasPrefix(l, `{"$twasm":"source",`) && !strings.Contains(l, `"project":"`+repo+`"`) {
					facts = false
				}
			}
		}
		return got, facts
	}
	wantProjects, facts := projects(root)
	require.Equal(t, []string{repo, repo}, wantProjects, "a sync never killed")
	require.True(t, facts)
	tr := filepath.Join("transcripts", runID+".jsonl")
	lines := bytes.Count(after[tr], []byte("\n"))
	for k := bytes.Count(before[tr], []byte("\n")) + 1; k < lines; k++ {
		r := t.TempDir()
		killedAt(t, before, after, runID, k, false, 0.5).restore(t, r)
		for _, o := range syncAt(r) {
			require.NotEqual(t, ActionFailed, o.Action, "kill at line %d: %s", k, o.Reason)
		}
		require.Equal(t, []string{runID}, sessionRuns(t, r), "kill at line %d: one run for the session", k)
		validRun(t, r, runID)
		assert.Equal(t, clean, messages(t, readRun(t, r, runID).events), "kill at line %d: every message as a sync never killed", k)
		got, facts := projects(r)
		assert.Subset(t, []string{repo}, got, "kill at line %d: every step's project", k)
		assert.NotEmpty(t, got, "kill at line %d", k)
		assert.True(t, facts, "kill at line %d: a facts line without the project", k)
	}
}
