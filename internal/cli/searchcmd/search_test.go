package searchcmd

import (
	"testing"

	"github.com/twasm/twasm/internal/index"
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
