package synccmd_test

import (
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// A sync.json store sync could never archive is refused, naming the file
// and the reason: a provider no plugin serves (its files would be found
// and never archived), a relative dir (relative to whatever directory
// sync runs in). A valid store is taken.
func TestSyncConfigRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, config string
		code         int
		want         []string
	}{
		{"unknown provider", `{"stores":[{"provider":"claud","dir":"~/old"}]}`, 2, []string{"claud", "no plugin serves provider", "available: "}},
		{"relative dir", `{"stores":[{"provider":"claude","dir":"old/projects"}]}`, 2, []string{`"old/projects" is relative`}},
		{"dot dir", `{"stores":[{"provider":"claude","dir":"./old"}]}`, 2, []string{`"./old" is relative`}},
		{"valid", `{"stores":[{"provider":"claude","dir":"~/old"}]}`, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			h.Put("old/p/s.jsonl", clitest.ReadFile(t, clitest.Golden("claude", "session_log.jsonl")), time.Hour)
			config := h.Put(".config/twasm/sync.json", []byte(tc.config), time.Hour)
			for _, cmd := range []string{"sync", "doctor"} {
				if cmd == "doctor" && tc.name == "unknown provider" {
					continue
				}
				r := h.Run(cmd)
				if r.Code != tc.code {
					t.Errorf("%s: exit %d, want %d\n%v", cmd, r.Code, tc.code, r)
				}
				if tc.code == 0 {
					continue
				}
				if !strings.Contains(r.ErrOut, config) {
					t.Errorf("%s: the message does not name %s: %s", cmd, config, r.ErrOut)
				}
				for _, w := range tc.want {
					if !strings.Contains(r.ErrOut, w) {
						t.Errorf("%s: the message lacks %q: %s", cmd, w, r.ErrOut)
					}
				}
			}
			if tc.code == 0 {
				if r := h.OK("ls"); !strings.Contains(r.Out, "claude") {
					t.Errorf("the valid store's session was not archived: %s", r.Out)
				}
			}
		})
	}
}
