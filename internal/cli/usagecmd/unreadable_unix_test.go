//go:build unix

package usagecmd

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/usage"
)

// TestUsageUnreadable: a named pipe where a transcript goes (as in
// e2e TestFIFOInStorage) is not read (it would block) and not counted;
// usage still reports the runs it could read, names the file and the
// reason on stderr (in --json too, unreadable_runs), and exits 2 as
// stats does for input that cannot be read. From the index and from the
// files alike.
func TestUsageUnreadable(t *testing.T) {
	const pipe = "0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a"
	for _, index := range []bool{true, false} {
		for _, js := range []bool{false, true} {
			env := cmdtest.New(t)
			path := filepath.Join(env.Dir, pipe+".jsonl")
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
			ios, _, out, errOut := iostreams.Test()
			o := &Options{IO: ios, List: env.F.ListRuns, Usage: env.F.UsageSource(), ModTime: env.F.FileModTime, JSON: js}
			if !index {
				o.Usage.Ledgers = nil
			}
			o.Report.By = usage.ByProvider
			err := runUsage(context.Background(), o)
			if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
				t.Errorf("index %v, json %v: err %v (exit %d), want exit %d", index, js, err, cmdutil.ExitCode(err), cmdutil.ExitUsage)
			}
			if msg := errOut.String() + "\n" + err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "named pipe") {
				t.Errorf("index %v, json %v: the file and the reason are not named:\n%s", index, js, msg)
			}
			if !js {
				if !strings.Contains(out.String(), "total\t1\t") {
					t.Errorf("index %v: the readable session is not reported:\n%s", index, out)
				}
				continue
			}
			var rep usage.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Total.Sessions != 1 || len(rep.Unreadable) != 1 || rep.Unreadable[0].RunID != pipe || !strings.Contains(rep.Unreadable[0].Error, "named pipe") {
				t.Errorf("index %v: %d sessions, unreadable %+v", index, rep.Total.Sessions, rep.Unreadable)
			}
		}
	}
}
