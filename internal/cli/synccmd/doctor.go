package synccmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/plugload"
)

// DoctorOptions are the doctor flags.
type DoctorOptions struct {
	F         *cmdutil.Factory
	Plugins   plugload.Flags
	Config    string
	Providers []string
	JSON      bool
	Now       func() time.Time
	// Extra adds checks of other parts (the search index).
	Extra func(ctx context.Context) []Check
}

// Check is one finding of doctor.
type Check struct {
	Level   string `json:"level"` // ok, warn, error
	Subject string `json:"subject"`
	Message string `json:"message"`
}

// StoreHealth is one store as doctor sees it.
type StoreHealth struct {
	archive.StoreReport
	Archived    int `json:"archived"`
	NotArchived int `json:"not_archived"`
	// Elsewhere counts the sessions (and sub-agent files) archived from
	// another store that keeps them too, not from this one
	// (archive.ArchivedElsewhere: Cursor's transcripts the IDE holds, an
	// older Cursor's workspace databases' composers its global one holds).
	Elsewhere int `json:"archived_elsewhere,omitempty"`
	// SubAgentsNotArchived counts the sub-agent files (counted in
	// SubAgents, not in Sessions) not archived yet.
	SubAgentsNotArchived int `json:"sub_agents_not_archived,omitempty"`
	// AtRisk counts sessions not archived that the agent's retention
	// deletes within a week.
	AtRisk int `json:"at_risk"`
}

// NewCmdDoctor returns the doctor command.
func NewCmdDoctor(f *cmdutil.Factory, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{F: f, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the session stores, what is not archived yet, and the agents' retention",
		Long: `Doctor lists the native session stores twasm syncs (those every plugin
declares, bundled or dropped in, and those of the sync config file; found
or not, where from), how many sessions each holds (a sub-agent's own file,
Claude Code's subagents/agent-*.jsonl or the rollout of a thread Codex
spawned, whose first line names its session's, is counted apart: it is
archived as a child run of its session's), how many are archived and how many
are not yet (new, or grown since the last sync), and warns where an
agent's retention will delete sessions that are not archived: Claude Code
deletes session logs after cleanupPeriodDays (default 30, in its
settings.json). It also checks the sync ledger and the search index.

It checks every archived session's raw capture against the bytes its
source held (each part's result states their sha256, hashed from the
agent's file): a twasm before 2873b2b wrote a wrong raw capture, and a
transcript normalized from it, for a session with a line longer than 256
KiB. Each damaged run is an error, named with its run id and file, where
its capture first differs from the agent's file (read, never written) or,
when the file is gone, its first line that is not JSON, and whether
` + "`twasm sync --repair`" + ` can archive it again from the file.

It reads; it never writes. Exit 0 even with warnings; 1 when a check
failed (a damaged raw capture among them).`,
		Example: `  twasm doctor
  twasm doctor --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Doctor(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Config, "config", "", "sync config file (default $XDG_CONFIG_HOME/twasm/sync.json)")
	cmd.Flags().StringSliceVar(&opts.Providers, "provider", nil, "only these providers")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the stores, checks and damaged runs as one JSON object")
	opts.Plugins.Register(cmd, false)
	return cmd
}

// Doctor runs the checks.
func Doctor(ctx context.Context, opts *DoctorOptions) error {
	f := opts.F
	plugins := &Plugins{F: f, Flags: opts.Plugins}
	defer plugins.Close(context.WithoutCancel(ctx))
	declared, err := plugins.Declared(ctx)
	if err != nil {
		return err
	}
	locs, err := Locations(ctx, f, declared, opts.Config, opts.Providers)
	if err != nil {
		return err
	}
	now := opts.Now()
	var checks []Check
	// A dry-run archiver reads the ledger (rebuilding it in memory when
	// it is missing) and writes nothing.
	a, rebuilt, err := archive.Open(archive.Options{Store: f.Store(), DryRun: true, CloseIdle: -1})
	if err != nil {
		checks = append(checks, Check{"error", "sync ledger", err.Error()})
	} else {
		defer a.Close()
		switch rebuilt {
		case "":
			checks = append(checks, Check{"ok", "sync ledger", fmt.Sprintf("%d session run(s) archived", len(a.Ledger().Entries()))})
		case "no ledger yet":
			checks = append(checks, Check{"warn", "sync ledger", "nothing synced yet into " + f.StorageRoot() + ": run `twasm sync`"})
		default:
			checks = append(checks, Check{"warn", "sync ledger", "rebuilt from the transcripts: " + rebuilt})
		}
		for _, it := range a.Ledger().Interrupted() {
			what := "no part completed"
			switch {
			case len(it.Open) > 0:
				what = "step " + strings.Join(it.Open, ", ") + " never completed"
			case it.Resume != nil && it.Resume.Held:
				what = "it held the session's run open for its sub-agents' files and never ended it: the sub-agents' files on disk are linked into it and the run ended"
			case it.Entry.Parts > 0:
				what = "the run was not ended"
			}
			checks = append(checks, Check{"warn", "sync ledger", fmt.Sprintf("the archive of %s in run %s was interrupted (a sync or import was killed: %s); it holds %d of its bytes: the next `twasm sync` or `twasm import` settles it", it.Entry.Path, it.Entry.RunID, what, it.Entry.Offset)})
		}
		for _, e := range a.Ledger().Superseding() {
			checks = append(checks, Check{"warn", "sync ledger", fmt.Sprintf("run %s archived %s again (a sub-agent linked again at its call) and a sync or import was killed before it ended run %s, which held it before: both hold it until the next `twasm sync` or `twasm import` ends run %s, superseded by run %s", e.RunID, e.Path, e.Resume.Supersedes, e.Resume.Supersedes, e.RunID)})
		}
		for _, e := range a.Ledger().Unsealed() {
			checks = append(checks, Check{"warn", "sync ledger", fmt.Sprintf("the raw capture %s of run %s (%s) is not sealed yet in whole frames: a sync or import was killed while it sealed it, or stopped before, after it ended the run; the capture is whole, and the next `twasm sync` seals it, removing any partial copy left beside it", e.Raw, e.RunID, e.Path)})
		}
	}
	damaged := []archive.RawDamage{}
	if a != nil {
		var dc []Check
		damaged, dc = rawChecks(ctx, f.StorageRoot(), a.Ledger(), opts.Providers)
		checks = append(checks, dc...)
	}
	stores, sessions := archive.Scan(locs, time.Time{})
	sessions = archive.WithoutStorage(f.StorageRoot(), stores, sessions)
	stores, sessions = archive.ExpandDatabases(ctx, stores, sessions)
	var ledger *archive.Ledger
	if a != nil {
		ledger = a.Ledger()
	}
	stores, sessions = archive.ExpandSections(stores, sessions, ledger)
	// A Codex sub-agent's rollout names its session's in its first line:
	// a sub-agent file, as sync archives it (a child run), not a session.
	archive.NameSubAgents(stores, sessions)
	health := make([]StoreHealth, len(stores))
	for i := range stores {
		health[i].StoreReport = stores[i]
	}
	idx := map[string]int{}
	for i := range stores {
		idx[stores[i].Key()] = i
	}
	for _, s := range sessions {
		h := &health[idx[s.Loc.Key()]]
		archived := a != nil && archive.Archived(a.Ledger(), s)
		if a != nil {
			if p, _ := archive.ArchivedElsewhere(a.Ledger(), s); p != "" {
				h.Elsewhere++
			}
		}
		switch {
		case archived && s.Parent == "":
			h.Archived++
		case archived: // a sub-agent file: counted apart
		case s.Parent != "":
			h.SubAgentsNotArchived++
		default:
			h.NotArchived++
		}
		if archived {
			continue
		}
		if days := s.Loc.RetentionDays; days > 0 && now.Sub(s.ModTime) > time.Duration(days-7)*24*time.Hour {
			h.AtRisk++
		}
	}
	for _, h := range health {
		switch {
		case !h.Found:
			for _, p := range h.Problems { // why it cannot be read (Unusable)
				checks = append(checks, Check{"warn", h.Name, p})
			}
			continue
		case h.AtRisk > 0:
			checks = append(checks, Check{"warn", h.Name, fmt.Sprintf("%d session(s) not archived will be deleted by the agent within 7 days (retention %d days): run `twasm sync` now", h.AtRisk, h.RetentionDays)})
		case h.NotArchived > 0 || h.SubAgentsNotArchived > 0:
			msg := fmt.Sprintf("%d of %d session(s) not archived yet", h.NotArchived, h.Sessions)
			if h.SubAgents > 0 {
				msg += fmt.Sprintf(", %d of %d sub-agent file(s)", h.SubAgentsNotArchived, h.SubAgents)
			}
			checks = append(checks, Check{"warn", h.Name, msg + ": run `twasm sync`"})
		default:
			msg := fmt.Sprintf("all %d session(s) archived", h.Sessions)
			if h.SubAgents > 0 {
				msg += fmt.Sprintf(", with their %d sub-agent file(s)", h.SubAgents)
			}
			checks = append(checks, Check{"ok", h.Name, msg})
		}
		switch {
		case h.Elsewhere > 0 && h.Kind == abi.StoreKindSQLite:
			checks = append(checks, Check{"ok", h.Name, fmt.Sprintf("%d of its session(s) skipped: the same session is kept in another database of the agent and is archived from there", h.Elsewhere)})
		case h.Elsewhere > 0:
			checks = append(checks, Check{"ok", h.Name, fmt.Sprintf("%d of its file(s) skipped: the same session is kept in a database store of the agent, whose copy states more, and is archived from there", h.Elsewhere)})
		}
		if h.RetentionDays > 0 {
			setting := ""
			if h.RetentionKey != "" {
				setting = " (" + h.RetentionKey + ")"
			}
			checks = append(checks, Check{"warn", h.Name, fmt.Sprintf("the agent deletes sessions after %d days%s: sync at least that often (`twasm sync --watch`, or a cron job)", h.RetentionDays, setting)})
		}
		for _, p := range h.Problems {
			checks = append(checks, Check{"warn", h.Name, p})
		}
	}
	if opts.Extra != nil {
		checks = append(checks, opts.Extra(ctx)...)
	}
	ios := f.IOStreams
	if opts.JSON {
		b, _ := json.Marshal(map[string]any{"storage": f.StorageRoot(), "stores": health, "checks": checks, "damaged": damaged})
		fmt.Fprintln(ios.Out, string(b))
	} else {
		printDoctor(ios.Out, f.StorageRoot(), health, checks)
	}
	for _, c := range checks {
		if c.Level == "error" {
			return cmdutil.ErrSilent
		}
	}
	return nil
}

// rawChecks checks every session run's raw capture against its source
// (archive.CheckRaw; only providers' runs, when given): the damaged runs,
// and a check for each (an error) or one saying all are whole.
func rawChecks(ctx context.Context, root string, l *archive.Ledger, providers []string) ([]archive.RawDamage, []Check) {
	rc, err := archive.CheckRaw(ctx, root, l)
	if err != nil {
		return []archive.RawDamage{}, []Check{{"error", "raw captures", err.Error()}}
	}
	damaged := []archive.RawDamage{}
	var checks []Check
	for _, d := range rc.Damaged {
		if len(providers) > 0 && !slices.Contains(providers, d.Provider) {
			continue
		}
		damaged = append(damaged, d)
		checks = append(checks, Check{"error", "raw captures", DamageText(d)})
	}
	if len(damaged) == 0 {
		msg := fmt.Sprintf("the raw captures of %d session run(s) hold their sources' bytes", rc.Checked)
		if rc.Masked > 0 {
			msg += fmt.Sprintf(" (%d masked with --redact: checked against what was written, not against their sources)", rc.Masked)
		}
		checks = append(checks, Check{"ok", "raw captures", msg})
	}
	return damaged, checks
}

// DamageText says in one line what is wrong with a damaged run and what
// can be done.
func DamageText(d archive.RawDamage) string {
	msg := fmt.Sprintf("run %s (%s %s): part %d: %s", d.RunID, d.Provider, d.Path, d.Part, d.Problem)
	if d.Differs != nil {
		msg += fmt.Sprintf("; it first differs from the agent's file at byte %d (line %d)", d.Differs.Byte, d.Differs.Line)
	}
	return msg + "; " + d.Repair
}

func printDoctor(w io.Writer, root string, health []StoreHealth, checks []Check) {
	fmt.Fprintf(w, "storage: %s\n\n", root)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STORE\tPROVIDER\tDIR\tFROM\tSESSIONS\tARCHIVED\tNOT YET")
	for _, h := range health {
		if !h.Found {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\tnot found\t\t\n", h.Name, h.Provider, h.Dir, h.From)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\n", h.Name, h.Provider, h.Dir, h.From, h.Sessions, h.Archived, h.NotArchived)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, c := range checks {
		fmt.Fprintf(w, "%-5s %s: %s\n", c.Level, c.Subject, c.Message)
	}
}
