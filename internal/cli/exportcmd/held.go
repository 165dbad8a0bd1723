package exportcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/export"
	"github.com/twasm/twasm/internal/views"
)

// AllRuns says which runs --all names: every top-level run ls lists
// (Superseded false: a run another stands for, views.Superseded, is
// left out with its child runs, so that a session is exported once), or
// with --superseded every top-level run in storage.
type AllRuns struct {
	On         bool
	Superseded bool
}

// addAllFlags binds --all and --superseded.
func addAllFlags(cmd *cobra.Command, all *AllRuns) {
	cmd.Flags().BoolVar(&all.On, "all", false, "export every run ls lists that is not a child of another run (children go with their parents)")
	cmd.Flags().BoolVar(&all.Superseded, "superseded", false, "with --all, export the runs another run stands for too (as ls --superseded lists them)")
}

// allHelp is what --all exports, for a command's help.
const allHelp = `--all exports the runs ls lists (children go with their parents): a run
another stands for is left out, so that a session is sent once, as ls,
stats, usage and search count it once: a run recorded from an agent's
output (twasm record of claude -p, codex exec --json, ...) whose session
sync or import archived from the agent's store, the original of a
renormalize rebuild, an archive sync found damaged and made again.
--superseded exports them too; a run named as an argument is exported
whatever stands for it.`

// checkAll refuses --superseded without --all.
func checkAll(all AllRuns) error {
	if all.Superseded && !all.On {
		return cmdutil.FlagErrorf("--superseded goes with --all")
	}
	return nil
}

// allTargets are the top-level runs in storage --all exports, and how
// many it leaves out because another run stands for them (their child
// runs not counted). Each run's digest comes from the index, as ls's
// does (cmdutil.Factory.RunDigests), else from its file.
func allTargets(ctx context.Context, f *cmdutil.Factory, superseded bool) ([]export.Run, int, error) {
	ids, err := f.ListRuns()
	if err != nil {
		return nil, 0, err
	}
	dir := f.TranscriptDir()
	digests, err := f.RunDigests(ctx, ids, io.Discard)
	if err != nil {
		digests = make(map[string]*views.RunDigest, len(ids))
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return nil, 0, fmt.Errorf("export: %w", err)
			}
			digests[id] = views.DigestFile(dir + "/" + id + ".jsonl")
		}
	}
	heads := map[string]views.RunHead{}
	for _, id := range ids {
		if d := digests[id]; d != nil && d.LoadErr == "" && d.ParentRunID == "" {
			heads[id] = d.RunHead
		}
	}
	var gone map[string]bool
	if !superseded {
		gone = views.Superseded(heads, views.TreeTime(views.TreeFiles(digests)))
	}
	var out []export.Run
	for _, id := range ids {
		d := digests[id]
		if d != nil && d.LoadErr == "" && d.ParentRunID != "" || gone[id] {
			continue
		}
		if d == nil || d.LoadErr != "" {
			// Not read: its export says why (as before, a child run
			// not known as one is exported on its own).
			if export.IsChild(export.Run{Path: dir + "/" + id + ".jsonl", Dir: dir}) {
				continue
			}
		}
		out = append(out, export.Run{Path: dir + "/" + id + ".jsonl", Dir: dir})
	}
	return out, len(gone), nil
}

// reportSuperseded says on w how many runs --all left out as superseded.
func reportSuperseded(w io.Writer, n int) {
	switch {
	case n == 1:
		fmt.Fprintln(w, "1 superseded run not exported (--superseded exports it)")
	case n > 1:
		fmt.Fprintf(w, "%d superseded runs not exported (--superseded exports them)\n", n)
	}
}
