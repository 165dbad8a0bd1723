package searchcmd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
)

// A hit's run is called as ls calls it: by its first prompt where twasm
// made its name up, by the name a person gave it otherwise.
func TestRunName(t *testing.T) {
	for _, c := range []struct {
		hit  index.Hit
		want string
	}{
		{index.Hit{RunID: "0f3e8a11-0000", RunName: "claude session 5b1c", RunTitle: "fix the login page", RunSession: true}, "fix the login page"},
		{index.Hit{RunID: "0f3e8a11-0000", RunName: "record codex", RunTitle: "add a --json flag"}, "add a --json flag"},
		{index.Hit{RunID: "0f3e8a11-0000", RunName: "nightly", RunTitle: "run the suite"}, "nightly"},
		{index.Hit{RunID: "0f3e8a11-0000", RunName: "claude session 5b1c", RunSession: true}, "claude session 5b1c"},
		{index.Hit{RunID: "0f3e8a11-0000"}, "0f3e8a11"},
	} {
		if got := runName(c.hit); got != c.want {
			t.Errorf("runName(%+v) = %q, want %q", c.hit, got, c.want)
		}
	}
}

// TestProjectFlag: --project is a filter of its own (no words needed),
// read as a directory: cleaned, and made absolute from the current one.
func TestProjectFlag(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv string
		want string
	}{
		{"--project /src/app/", "/src/app"},
		{"--project . flaky", wd},
		{"--project ./web/..", wd},
	} {
		env := cmdtest.New(t)
		var got []string
		err := cmdtest.Parse(NewCmdSearch(env.F, func(_ context.Context, o *Options) error { got = o.Query.Projects; return nil }), tc.argv)
		if err != nil || len(got) == 0 || got[0] != tc.want {
			t.Errorf("%q: %v, projects %v, want %s first", tc.argv, err, got, tc.want)
		}
	}
}

// TestSearchSaysRankedAmongNewest: a search whose word matches more
// messages than are ranked says on stderr that its hits were ranked
// among the newest, in text and in JSON (stdout stays the hits); one
// that matches fewer, or asks for every hit, says nothing.
func TestSearchSaysRankedAmongNewest(t *testing.T) {
	const note = "hits ranked among the newest 2 "
	for _, tc := range []struct {
		argv string
		told bool
	}{
		{"--every --limit 1 the", true},
		{"--json --every --limit 1 the", true},
		{"the", false}, // every hit asked for: every match ranked
	} {
		env := cmdtest.New(t)
		err := cmdtest.Parse(NewCmdSearch(env.F, func(ctx context.Context, o *Options) error {
			o.Query.RankAmong = 2
			return Run(ctx, o)
		}), tc.argv)
		if err != nil || env.Out.Len() == 0 {
			t.Fatalf("%q: %v, no hits in %q", tc.argv, err, env.Out)
		}
		if got := strings.Contains(env.ErrOut.String(), note); got != tc.told {
			t.Errorf("%q: told %v, want %v: stderr %q", tc.argv, got, tc.told, env.ErrOut)
		}
	}
}

// TestWindowFromClock: --since and --until are read from the factory's
// clock, not the machine's: an age is counted back from it.
func TestWindowFromClock(t *testing.T) {
	now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, tc := range []struct {
		argv             string
		wantSince, until time.Time
	}{
		{"--since 7d x", now.Add(-7 * 24 * time.Hour), time.Time{}},
		{"--since 2h --until 1h x", now.Add(-2 * time.Hour), now.Add(-time.Hour)},
	} {
		env := cmdtest.New(t)
		env.F.Clock = func() time.Time { return now }
		var since, until time.Time
		err := cmdtest.Parse(NewCmdSearch(env.F, func(_ context.Context, o *Options) error { since, until = o.Query.Since, o.Query.Until; return nil }), tc.argv)
		if err != nil || !since.Equal(tc.wantSince) || !until.Equal(tc.until) {
			t.Errorf("%q: %v, since %v until %v, want %v and %v", tc.argv, err, since, until, tc.wantSince, tc.until)
		}
	}
}

// TestSearchFindsSessionOnce: a claude session recorded (twasm record)
// and synced from claude's store is found once, in the synced run, as
// ls, stats and usage count it once; --superseded finds it in both.
// Before, both runs' prompts were found (one folded into the other).
func TestSearchFindsSessionOnce(t *testing.T) {
	recorded, synced := viewstest.RunID(0x71), viewstest.RunID(0x72)
	for _, tc := range []struct {
		argv string
		want []string
	}{
		{"--json --every xylophone", []string{synced}},
		{"--json xylophone", []string{synced}},
		{"--json --every --superseded xylophone", []string{recorded, synced}},
		{"--json --every --project /work/app module", []string{synced}},
	} {
		t.Run(tc.argv, func(t *testing.T) {
			env := cmdtest.New(t)
			viewstest.WriteFile(t, filepath.Join(env.Dir, recorded+".jsonl"), viewstest.ClaudeTwice(t, recorded, "s-7", false).Bytes(t))
			viewstest.WriteFile(t, filepath.Join(env.Dir, synced+".jsonl"), viewstest.ClaudeTwice(t, synced, "s-7", true).Bytes(t))
			if err := cmdtest.Parse(NewCmdSearch(env.F, nil), tc.argv); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range cmdtest.JSONLines[index.Hit](t, env.Out.Bytes()) {
				got = append(got, h.RunID)
				if h.Also != 0 {
					t.Errorf("a hit folds %d more with the same text", h.Also)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("hits in %v, want %v", got, tc.want)
			}
		})
	}
}
