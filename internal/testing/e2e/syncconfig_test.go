package e2e

import (
	"strings"
	"testing"
	"time"
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
			h := newFakeHome(t)
			h.put("old/p/s.jsonl", readFile(t, golden("claude", "session_log.jsonl")), time.Hour)
			config := h.put(".config/twasm/sync.json", []byte(tc.config), time.Hour)
			for _, cmd := range []string{"sync", "doctor"} {
				if cmd == "doctor" && tc.name == "unknown provider" {
					continue
				}
				r := h.run(cmd)
				if r.code != tc.code {
					t.Errorf("%s: exit %d, want %d\n%v", cmd, r.code, tc.code, r)
				}
				if tc.code == 0 {
					continue
				}
				if !strings.Contains(r.errOut, config) {
					t.Errorf("%s: the message does not name %s: %s", cmd, config, r.errOut)
				}
				for _, w := range tc.want {
					if !strings.Contains(r.errOut, w) {
						t.Errorf("%s: the message lacks %q: %s", cmd, w, r.errOut)
					}
				}
			}
			if tc.code == 0 {
				if r := h.ok("ls"); !strings.Contains(r.out, "claude") {
					t.Errorf("the valid store's session was not archived: %s", r.out)
				}
			}
		})
	}
}
