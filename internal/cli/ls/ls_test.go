package ls

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// ls reads the runs two ways, from the index's digests and from the
// transcripts, with the same output; the index is checked against the
// files each time (a transcript changed behind its back is read again)
// and rebuilt, said on stderr, when damaged.
func TestIndexAndScanAgree(t *testing.T) {
	variants := []struct {
		name string
		set  func(*Options)
	}{
		{"all", func(*Options) {}},
		{"children json", func(o *Options) { o.Children, o.JSON = true, true }},
		{"status incomplete", func(o *Options) { o.Filter.Status = "incomplete"; o.JSON = true }},
		{"provider codex, since, limit", func(o *Options) {
			o.Filter.Provider, o.Filter.Since, o.Limit = "codex", viewstest.T0.Add(30*time.Minute), 3
		}},
	}
	for _, s := range viewstest.Storages() {
		t.Run(s.Name, func(t *testing.T) {
			root := t.TempDir()
			s.Write(t, root)
			ios, _, _, _ := iostreams.Test()
			f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, StorageFlag: root}
			run := func(v func(*Options), digests bool) (string, string) {
				t.Helper()
				ios, _, out, errOut := iostreams.Test()
				o := &Options{IO: ios, List: f.ListRuns, Dir: f.TranscriptDir, Logger: f.Logger, Now: time.Now, Usage: f.UsageSource()}
				if digests {
					o.Digests = f.RunDigests
				} else {
					o.Usage.Ledgers = nil // the ledgers read from the files too
				}
				v(o)
				if err := runLs(context.Background(), o); err != nil {
					t.Fatal(err)
				}
				return out.String(), errOut.String()
			}
			check := func(stage string) {
				t.Helper()
				for _, v := range variants {
					want, _ := run(v.set, false)
					got, _ := run(v.set, true)
					if got != want {
						t.Errorf("%s, %s: from the index\n%s\nfrom the transcripts\n%s", stage, v.name, got, want)
					}
				}
			}
			check("first")
			ids, err := f.ListRuns()
			if err != nil {
				t.Fatal(err)
			}
			// The index path is taken (not a fallback to the scan).
			if d, err := f.RunDigests(context.Background(), ids, io.Discard); err != nil || len(d) != len(ids) {
				t.Fatalf("digests: %d of %d, %v", len(d), len(ids), err)
			}
			check("cached")
			// A transcript changed behind the index's back: appended to,
			// and rewritten with the same size.
			if len(ids) > 0 {
				p := filepath.Join(root, "transcripts", ids[0]+".jsonl")
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				later := time.Now().Add(time.Minute)
				viewstest.WriteFile(t, p, append(append([]byte(nil), b...), []byte(`{"seq":999,"run_id":"`+ids[0]+`","type":"run.completed","path":"","iteration":0,"timestamp":"2025-05-01T13:00:00.000Z","payload":{"name":"x","kind":"workflow","status":"error","error":"ended behind its back"}}`+"\n")...))
				if err := os.Chtimes(p, later, later); err != nil {
					t.Fatal(err)
				}
				check("grown behind its back")
			}
			// Damaged: rebuilt and said so, same answer.
			for _, sfx := range []string{"", "-wal", "-shm"} {
				os.Remove(index.File(root) + sfx)
			}
			viewstest.WriteFile(t, index.File(root), bytes.Repeat([]byte("not sqlite "), 100))
			_, errOut := run(variants[0].set, true)
			if len(ids) > 0 && !strings.Contains(errOut, "rebuilt from the transcripts") {
				t.Errorf("damaged index not reported: %q", errOut)
			}
			check("rebuilt")
			// Missing: built and said so.
			for _, sfx := range []string{"", "-wal", "-shm"} {
				os.Remove(index.File(root) + sfx)
			}
			_, errOut = run(variants[0].set, true)
			if len(ids) > 0 && !strings.Contains(errOut, "was missing") {
				t.Errorf("missing index not reported: %q", errOut)
			}
		})
	}
}

// An index that cannot be used (the storage is read-only) leaves ls
// reading the transcripts.
func TestIndexUnusable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores file modes")
	}
	root := t.TempDir()
	viewstest.WriteStore(t, root)
	if err := os.Chmod(root, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(root, 0o700) })
	ios, _, out, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, StorageFlag: root}
	o := &Options{IO: ios, List: f.ListRuns, Digests: f.RunDigests, Dir: f.TranscriptDir, Logger: f.Logger, Now: time.Now}
	if err := runLs(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), viewstest.Root) {
		t.Errorf("read-only storage: %q", out)
	}
}

// A synced session is listed by its first prompt, which --name also
// matches; --json keeps the made-up name beside the title.
func TestListsByFirstPrompt(t *testing.T) {
	root := t.TempDir()
	b := viewstest.NewBuilder(viewstest.RunID(7), "")
	ev := viewstest.Started("claude session 5b1c2d3e")
	ev.Step().Extra = map[string]json.RawMessage{views.SessionSourceField: json.RawMessage(`{"provider":"claude"}`)}
	b.Add(ev)
	b.Add(viewstest.Msg(transcript.MessageUser, "", transcript.TextBlock("make the login page load faster")))
	if err := os.MkdirAll(filepath.Join(root, "transcripts"), 0o700); err != nil {
		t.Fatal(err)
	}
	viewstest.WriteFile(t, filepath.Join(root, "transcripts", b.RunID+".jsonl"), b.Bytes(t))
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, StorageFlag: root}
	run := func(set func(*Options)) string {
		t.Helper()
		ios, _, out, _ := iostreams.Test()
		o := &Options{IO: ios, List: f.ListRuns, Dir: f.TranscriptDir, Logger: f.Logger, Now: time.Now, Digests: f.RunDigests}
		set(o)
		if err := runLs(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := run(func(*Options) {}); !strings.Contains(got, "\tmake the login page load faster\t") {
		t.Fatalf("not listed by its prompt:\n%s", got)
	}
	if got := run(func(o *Options) { o.Filter.Name = "LOGIN page" }); !strings.Contains(got, b.RunID) {
		t.Fatalf("--name does not match the prompt:\n%q", got)
	}
	got := run(func(o *Options) { o.JSON = true })
	var row struct{ Name, Title string }
	if err := json.Unmarshal([]byte(got), &row); err != nil || row.Name != "claude session 5b1c2d3e" || row.Title != "make the login page load faster" {
		t.Fatalf("--json: %q (%v)", got, err)
	}
}

func TestCostString(t *testing.T) {
	for _, c := range []struct {
		usd  float64
		tty  bool
		want string
	}{
		{0.01 + 0.02 + 0.05609 + 0.0001, false, "0.08619"},
		{0.1 + 0.2, false, "0.3"},
		{0, false, "0"},
		{1.23456789, false, "1.234568"},
		{0.08619, true, "$0.0862"},
	} {
		if got := costString(c.usd, c.tty); got != c.want {
			t.Errorf("costString(%v, %v) = %q, want %q", c.usd, c.tty, got, c.want)
		}
	}
}

// TestSubRunUsage: --json states a run's own tokens, its sub-runs' and
// the two together, from the transcripts and from the index alike (ls
// said nothing of tokens, so a session whose work is all in a sub-agent's
// run read as using none).
func TestSubRunUsage(t *testing.T) {
	root := t.TempDir()
	viewstest.WriteStore(t, root)
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, StorageFlag: root}
	for _, digests := range []bool{false, true} {
		ios, _, out, _ := iostreams.Test()
		o := &Options{IO: ios, List: f.ListRuns, Dir: f.TranscriptDir, Logger: f.Logger, Now: time.Now, JSON: true}
		if digests {
			o.Digests = f.RunDigests
		}
		if err := runLs(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		var row struct {
			RunID       string           `json:"run_id"`
			Usage       map[string]int64 `json:"usage"`
			SubRunUsage map[string]int64 `json:"sub_run_usage"`
			UsageInAll  map[string]int64 `json:"usage_in_all"`
		}
		found := false
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatal(err)
			}
			if row.RunID != viewstest.Root {
				continue
			}
			found = true
			want := []struct {
				name string
				got  map[string]int64
				in   int64
				out  int64
			}{{"usage", row.Usage, 200, 200}, {"sub_run_usage", row.SubRunUsage, 50, 5}, {"usage_in_all", row.UsageInAll, 250, 205}}
			for _, w := range want {
				if w.got["uncached_input_tokens"] != w.in || w.got["output_tokens"] != w.out {
					t.Errorf("index %v: %s %v, want uncached input %d, output %d", digests, w.name, w.got, w.in, w.out)
				}
			}
		}
		if !found {
			t.Fatalf("root not listed:\n%s", out)
		}
	}
}

// A run's cost has its provenance, in the COST column and --json: the
// fixture's root run states $0.25 (its Claude step), its child run's
// Codex step states none and is priced (gpt-5, 50 input and 5 output
// tokens: 112.5 µ$, 113 rounded): 0.250113, mixed. cost_usd stays what
// the providers stated.
func TestCost(t *testing.T) {
	root := t.TempDir()
	viewstest.WriteStore(t, root)
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, StorageFlag: root}
	for _, js := range []bool{false, true} {
		ios, _, out, _ := iostreams.Test()
		o := &Options{IO: ios, List: f.ListRuns, Digests: f.RunDigests, Dir: f.TranscriptDir, Logger: f.Logger, Now: time.Now, Usage: f.UsageSource(), JSON: js}
		if err := runLs(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if !js {
			if !strings.Contains(out.String(), "\t0.250113\n") {
				t.Errorf("ls:\n%s", out)
			}
			continue
		}
		var row struct {
			CostUSD float64 `json:"cost_usd"`
			Cost    struct {
				MicroUSD int64  `json:"micro_usd"`
				USD      string `json:"usd"`
				Source   string `json:"source"`
				Prices   string `json:"prices"`
			} `json:"cost"`
		}
		if err := json.Unmarshal(out.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if row.CostUSD != 0.25 || row.Cost.MicroUSD != 250113 || row.Cost.USD != "0.250113" || row.Cost.Source != "mixed" || !strings.HasPrefix(row.Cost.Prices, "twasm-bundled@") {
			t.Errorf("ls --json: %s", out)
		}
	}
}

// TestProject: --project lists the runs of a directory and those below it
// (cleaned and made absolute from the current directory), and --json
// states each run's project (the repository root, else the directory the
// agent ran in); from the index and from the files alike.
func TestProject(t *testing.T) {
	root := t.TempDir()
	runs := viewstest.ProjectStorage(t, root, viewstest.T0)
	id := func(i int) string { return runs[i].ID }
	tests := []struct {
		project, wd string
		want        []string // newest first
	}{
		{"", "", []string{id(4), id(3), id(2), id(1), id(0)}},
		{"/src/app", "", []string{id(3), id(1), id(0)}},
		{"/src/app/web/", "", []string{id(1)}},
		{"..", "/src/app/web", []string{id(3), id(1), id(0)}},
		{"/src/apple", "", []string{id(2)}},
		{"/src/ap", "", nil},
	}
	f := &cmdutil.Factory{Getenv: func(string) string { return "" }, StorageFlag: root}
	for _, digests := range []bool{true, false} {
		for _, tc := range tests {
			ios, _, out, _ := iostreams.Test()
			o := &Options{IO: ios, List: f.ListRuns, Dir: f.TranscriptDir, Logger: f.Logger, Now: time.Now, JSON: true}
			if digests {
				o.Digests = f.RunDigests
			}
			var err error
			if o.Filter.Project, err = cmdutil.ParseProject(tc.project, tc.wd, ""); err != nil {
				t.Fatal(err)
			}
			if err := runLs(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if line == "" {
					continue
				}
				var r views.RunSummary
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				got = append(got, r.RunID)
				want := ""
				for _, pr := range runs {
					if pr.ID == r.RunID {
						want = transcript.ProjectOf(pr.Project, pr.Cwd)
					}
				}
				if r.Project != want {
					t.Errorf("digests %v: run %s project %q, want %q", digests, r.RunID, r.Project, want)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("digests %v, --project %q from %q: %v, want %v", digests, tc.project, tc.wd, got, tc.want)
			}
		}
	}
}
