package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/twasm/twasm/internal/runtree"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// TestChildLinksOnePolicy checks that every reader of a run tree (the
// views' tree, the dir, html and otlp exports, and Walk) follows the same child
// runs and leaves out the same ones for the same reasons: runtree's rules,
// written out here by hand for a storage with a shared child, a cycle, a
// missing child, a chain deeper than MaxDepth, a child that is not a
// transcript and an id that is not a run id.
func TestChildLinksOnePolicy(t *testing.T) {
	dir := linksStorage(t)
	id := viewstest.RunID
	// 5 calls a file that is not a transcript (7) and an id that names
	// no file (a path).
	b := viewstest.NewBuilder(id(5), "")
	b.Add(viewstest.Started("odd links"))
	for i, c := range []string{id(7), "../../etc/passwd"} {
		p := fmt.Sprintf("call%d", i)
		b.Add(&transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: p, ChildRunID: c,
			Payload: &transcript.StepPayload{Name: p, Kind: transcript.KindCallWorkflow}})
	}
	viewstest.WriteFile(t, filepath.Join(dir, id(5)+".jsonl"), b.Bytes(t))
	viewstest.WriteFile(t, filepath.Join(dir, id(7)+".jsonl"), []byte("just some text\n"))

	type skip struct {
		child  string
		reason runtree.Reason
	}
	chain := func(from, n int) []string {
		var out []string
		for i := from; i < from+n; i++ {
			out = append(out, id(i))
		}
		return out
	}
	cases := []struct {
		root     string
		followed []string // depth first
		skipped  []skip
	}{
		{root: id(1), followed: []string{id(1), id(2), id(3)},
			// 2 → 3 is followed; 1 → 3 then finds 3 visited, and 3 → 1 closes the cycle.
			skipped: []skip{{id(1), runtree.Cycle}, {id(3), runtree.Cycle}}},
		{root: id(4), followed: []string{id(4)}, skipped: []skip{{id(99), runtree.Missing}}},
		{root: id(10), followed: chain(10, runtree.MaxDepth), skipped: []skip{{id(10 + runtree.MaxDepth), runtree.TooDeep}}},
		{root: id(5), followed: []string{id(5)}, skipped: []skip{{id(7), runtree.Unreadable}, {"../../etc/passwd", runtree.Invalid}}},
	}
	sortSkips := func(s []skip) []skip {
		s = slices.Clone(s)
		slices.SortFunc(s, func(a, b skip) int { return strings.Compare(a.child+string(a.reason), b.child+string(b.reason)) })
		return s
	}
	ofErrs := func(ces []*runtree.ChildError) []skip {
		var out []skip
		for _, ce := range ces {
			out = append(out, skip{ce.Child, ce.Reason})
		}
		return out
	}
	check := func(t *testing.T, who string, followed []string, skipped []skip, wantF []string, wantS []skip) {
		t.Helper()
		if !slices.Equal(followed, wantF) {
			t.Errorf("%s followed %d runs %v, want %d %v", who, len(followed), followed, len(wantF), wantF)
		}
		if got, want := sortSkips(skipped), sortSkips(wantS); !slices.Equal(got, want) {
			t.Errorf("%s left out %v, want %v", who, got, want)
		}
	}
	for _, tc := range cases {
		t.Run(tc.root[:8], func(t *testing.T) {
			ctx := context.Background()
			run := Run{Path: filepath.Join(dir, tc.root+".jsonl"), Dir: dir}

			// The views' tree: a step's ChildError is the reason's text.
			vr, err := views.LoadFile(run.Path)
			if err != nil {
				t.Fatal(err)
			}
			tree := views.BuildTree(views.Loader{Dir: dir}, vr)
			var followed []string
			for _, n := range tree.Runs() {
				followed = append(followed, n.RunID)
			}
			var texts []string
			for _, n := range tree.Runs() {
				n.Walk(func(s *views.StepNode, _ int) bool {
					if s.ChildError != "" {
						texts = append(texts, s.ChildError)
					}
					return true
				})
			}
			var wantTexts []string
			for _, s := range tc.skipped {
				ce := &runtree.ChildError{Child: s.child, Reason: s.reason}
				if s.reason == runtree.Invalid || s.reason == runtree.Unreadable {
					continue // the cause's own text
				}
				wantTexts = append(wantTexts, ce.Error())
			}
			for _, w := range wantTexts {
				if !slices.Contains(texts, w) {
					t.Errorf("views: no step says %q (steps say %q)", w, texts)
				}
			}
			if len(texts) != len(tc.skipped) {
				t.Errorf("views: %d child errors %q, want %d", len(texts), texts, len(tc.skipped))
			}
			check(t, "views", followed, nil, tc.followed, nil)

			// export dir.
			rep, err := ExportDir(ctx, t.TempDir(), run)
			if err != nil {
				t.Fatalf("export dir: %v", err)
			}
			followed = nil
			for _, r := range rep.Runs {
				followed = append(followed, filepath.Base(r))
			}
			check(t, "export dir", followed, ofErrs(rep.Skipped), tc.followed, tc.skipped)

			// Walk, what a new format is written on: each run followed
			// begun once at its depth (each case is a chain: depth is its
			// place), every event given, End called once per run.
			followed = nil
			var depths []int
			ends := 0
			skipped, err := Walk(ctx, run, func(_ context.Context, r Run, depth int) (RunVisit, error) {
				depths = append(depths, depth)
				first := true
				return RunVisit{
					Event: func(ev *transcript.Event) error {
						if first {
							followed, first = append(followed, ev.RunID), false
						}
						return nil
					},
					End: func(err error) error { ends++; return err },
				}, nil
			})
			if err != nil {
				t.Fatalf("walk: %v", err)
			}
			check(t, "walk", followed, ofErrs(skipped), tc.followed, tc.skipped)
			for i, d := range depths {
				if d != i {
					t.Errorf("walk: run %d at depth %d, want %d", i, d, i)
				}
			}
			if ends != len(tc.followed) {
				t.Errorf("walk: End called %d times, want %d", ends, len(tc.followed))
			}

			// export otlp: one run span per run followed.
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(IDGenerator{}))
			st, err := ExportOTLP(ctx, tp, run, OTLPOptions{})
			if err != nil {
				t.Fatalf("export otlp: %v", err)
			}
			if st.Runs != len(tc.followed) {
				t.Errorf("export otlp exported %d runs, want %d", st.Runs, len(tc.followed))
			}
			check(t, "export otlp", tc.followed, ofErrs(st.Skipped), tc.followed, tc.skipped)

			// export html: a section per run, a warning per child left out.
			var page bytes.Buffer
			if err := ExportHTML(ctx, &page, []Run{run}, HTMLOptions{}); err != nil {
				t.Fatalf("export html: %v", err)
			}
			followed = nil
			for _, m := range regexp.MustCompile(`<section class="run" id="run-([0-9a-f-]+)"`).FindAllStringSubmatch(page.String(), -1) {
				followed = append(followed, m[1])
			}
			if !sameSet(followed, tc.followed) {
				t.Errorf("export html has sections of %v, want %v", followed, tc.followed)
			}
			if n := strings.Count(page.String(), `<div class="warnbox">child run `); n != len(tc.skipped) {
				t.Errorf("export html warns of %d child runs, want %d", n, len(tc.skipped))
			}
		})
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestWalkEnds: a run's End is called whatever ends its events (a
// format's own error, a visit error after it began), with that error, and
// its outcome is the walk's; a Visit error ends the walk before any event.
func TestWalkEnds(t *testing.T) {
	dir := linksStorage(t)
	run := Run{Path: filepath.Join(dir, viewstest.RunID(1)+".jsonl"), Dir: dir}
	errEvent, errEnd, errBegin := errors.New("event failed"), errors.New("end failed"), errors.New("begin failed")
	tests := []struct {
		name     string
		event    error // what Event returns
		end      error // what End returns, when not nil
		begin    error // what Visit returns
		want     error
		wantEnds int
		wantSeen error // what End receives
	}{
		{name: "event error ends the walk", event: errEvent, want: errEvent, wantEnds: 1, wantSeen: errEvent},
		{name: "end's error ends the walk", end: errEnd, want: errEnd, wantEnds: 1},
		{name: "begin error, no end", begin: errBegin, want: errBegin},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ends, events := 0, 0
			var seen error
			_, err := Walk(context.Background(), run, func(context.Context, Run, int) (RunVisit, error) {
				return RunVisit{
					Event: func(*transcript.Event) error { events++; return tc.event },
					End: func(err error) error {
						ends, seen = ends+1, err
						if tc.end != nil {
							return tc.end
						}
						return err
					},
				}, tc.begin
			})
			if !errors.Is(err, tc.want) {
				t.Fatalf("walk: %v, want %v", err, tc.want)
			}
			if ends != tc.wantEnds || !errors.Is(seen, tc.wantSeen) || (tc.wantSeen == nil && seen != nil) {
				t.Fatalf("End called %d times with %v, want %d with %v", ends, seen, tc.wantEnds, tc.wantSeen)
			}
			if tc.begin != nil && events != 0 {
				t.Fatalf("%d events after a failed begin", events)
			}
		})
	}
}

// linksStorage writes viewstest's storage of linked runs (a shared child,
// a cycle, a missing child, a chain deeper than MaxDepth) and returns its
// transcripts directory.
func linksStorage(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, s := range viewstest.Storages() {
		if s.Name == "links" {
			s.Write(t, root)
			return filepath.Join(root, "transcripts")
		}
	}
	t.Fatal("viewstest has no storage named links")
	return ""
}
