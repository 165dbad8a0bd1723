package synccmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/twasm/twasm/internal/redact"
	"io"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/plugload"
	"github.com/twasm/twasm/internal/cli/searchcmd"
	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/runid"
)

// Options are the sync flags.
type Options struct {
	F         *cmdutil.Factory
	Plugins   plugload.Flags
	Providers []string
	Since     string
	DryRun    bool
	Redact    bool
	Watch     bool
	Interval  time.Duration
	Config    string
	Wait      bool
	JSON      bool
	// Repair checks every session run's raw capture first and archives
	// the damaged ones again from the agents' files (archive.Repair).
	Repair bool
	// Indexed is called with the runs a round wrote (the search index).
	Indexed func(ctx context.Context, runIDs []string) error
	// IndexLive opens the search index for the runs a round writes to be
	// indexed while it goes on (liveIndex); nil: only Indexed, after the
	// round.
	IndexLive func(ctx context.Context) (RunIndexer, error)
}

// indexRuns is the search index as a RunIndexer.
type indexRuns struct{ ix *index.Index }

func (r indexRuns) UpdateRuns(ctx context.Context, ids []string) error {
	_, err := r.ix.UpdateRuns(ctx, ids)
	return err
}

func (r indexRuns) Close() error { return r.ix.Close() }

// storesHelpMark stands in sync's Long for the list of the bundled
// plugins' stores (storesHelp).
const storesHelpMark = "<stores>"

// NewCmdSync returns the sync command.
func NewCmdSync(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f, Indexed: func(ctx context.Context, ids []string) error { return searchcmd.Refresh(ctx, f) },
		IndexLive: func(ctx context.Context) (RunIndexer, error) {
			ix, _, err := index.Open(ctx, f.StorageRoot())
			if err != nil {
				return nil, err
			}
			if err := ix.SetCacheKiB(ctx, liveCacheKiB); err != nil {
				ix.Close()
				return nil, err
			}
			ix.SetPendingKiB(livePendingKiB)
			return indexRuns{ix}, nil
		}}
	cmd := &cobra.Command{
		Use:   "sync [--provider P]... [--since WHEN] [--dry-run] [--watch]",
		Short: "Archive every agent's native session logs before the agent deletes them",
		Long: `Sync finds the native session stores every plugin declares, bundled or
dropped into a plugin directory (` + "`twasm doctor`" + ` lists them), and archives what
is new in them, one run per session. The bundled plugins read:

` + storesHelpMark + `
plus the stores of the config file (--config, default
$XDG_CONFIG_HOME/twasm/sync.json), for directories no plugin knows:

  {"stores": [{"provider": "claude", "dir": "/mnt/old-home/.claude/projects", "pattern": "**/*.jsonl"}]}

It never writes to the agents' files. A session is recognised by its
content, not its path: synced twice, or found again at another path, it is
one run. A session that grew gets one more step (path "agent", the next
iteration) holding only its new lines, and its raw capture is extended; a
file still being written is read up to its last complete line. Runs are
dated with the session's own times. A run stays open (no run.completed)
while its session file exists, however long it is idle: a session resumed
later grows the same run. Its status is its latest part's, judged from the
log (ok, error or incomplete), shown as open. It is ended when the agent
deleted the file.

The changes are printed on stdout (action, run id, provider, file; --json:
one object per line), progress and the summary on stderr. A file its
plugin understood no line of (another provider's session in a store, or
no session at all) is said on stderr, as record and import say it: the
provider looks wrong, and what detection says. Exit 1 when a session
failed or was not understood (the others are archived).

--repair first checks every archived session's raw capture against the
bytes its source held, as ` + "`twasm doctor`" + ` does (a twasm before 2873b2b
damaged the capture, and the transcript, of a session with a line longer
than 256 KiB), and archives each damaged session again, whole, from the
agent's file when it still holds the bytes archived: a new run (with its
sub-agent files' runs), and the damaged run is ended, superseded by it, so
stats, usage and search count the session once (ls still lists the old
run, ended). A damaged run whose file is gone or changed is kept as it is,
printed "damaged" with the reason, and sync exits 1.`,
		Example: `  twasm sync
  twasm sync --provider claude --since 7d --dry-run
  twasm sync --watch --interval 1m
  twasm sync --redact --json
  twasm sync --repair`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Watch && opts.DryRun {
				return cmdutil.FlagErrorf("--watch and --dry-run exclude each other")
			}
			if opts.Interval <= 0 {
				return cmdutil.FlagErrorf("--interval must be positive")
			}
			if _, err := cmdutil.ParseTime(opts.Since, opts.F.Now()); err != nil {
				return cmdutil.FlagErrorf("--since: %v", err)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	// The list of stores is made when help is shown, not each time the
	// command is built.
	help := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		c.Long = strings.Replace(c.Long, storesHelpMark+"\n", storesHelp(runtime.GOOS), 1)
		help(c, args)
	})
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Providers, "provider", nil, "only these providers (repeatable or comma-separated)")
	fl.StringVar(&opts.Since, "since", "", "only session files modified since: an age (7d, 12h), a date (2026-11-01, 20261101) or today, yesterday")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "say what would be archived, write nothing")
	fl.BoolVar(&opts.Redact, "redact", false, redact.FlagUsage)
	fl.BoolVar(&opts.Watch, "watch", false, "keep syncing every --interval until interrupted")
	fl.DurationVar(&opts.Interval, "interval", 30*time.Second, "how often --watch looks for changes")
	fl.StringVar(&opts.Config, "config", "", "sync config file (default $XDG_CONFIG_HOME/twasm/sync.json)")
	fl.BoolVar(&opts.Wait, "wait", false, "wait for another sync or import on the same storage instead of failing")
	fl.BoolVar(&opts.JSON, "json", false, "print one JSON object per changed session, then the summary")
	fl.BoolVar(&opts.Repair, "repair", false, "check every archived raw capture against its source first, and archive the damaged sessions again from the agents' files")
	opts.Plugins.Register(cmd, false)
	return cmd
}

// Locations are the stores sync and doctor look at: those the plugins
// declare, then the config file's.
func Locations(ctx context.Context, f *cmdutil.Factory, declared []archive.Declared, config string, providers []string) ([]archive.Location, error) {
	env := archive.Env(f.Getenv)
	if f.Getenv == nil {
		env = os.Getenv
	}
	path, required := configPath(f, config)
	cfg, err := archive.LoadConfig(path, required)
	if err != nil {
		return nil, &cmdutil.InputError{Err: err}
	}
	if slices.ContainsFunc(declared, func(d archive.Declared) bool {
		return slices.ContainsFunc(d.Roots, func(r abi.Root) bool { return r.Projects })
	}) {
		cfg.Seen = seenProjects(ctx, f.StorageRoot())
	}
	locs := archive.Discover(env, runtime.GOOS, declared, cfg)
	if len(providers) == 0 {
		return locs, nil
	}
	var out []archive.Location
	known := map[string]bool{}
	for _, l := range locs {
		known[l.Provider] = true
	}
	for _, p := range providers {
		if !known[p] {
			names := make([]string, 0, len(known))
			for k := range known {
				names = append(names, k)
			}
			sort.Strings(names)
			return nil, cmdutil.FlagErrorf("--provider %q: no store known for it (known: %s)", p, strings.Join(names, ", "))
		}
	}
	for _, l := range locs {
		for _, p := range providers {
			if l.Provider == p {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// seenProjects are the projects of the runs archived in the storage
// root, as its search index knows them (none when it has no index yet:
// the stores of the projects the config lists are still read). A store
// in each project directory (abi.Root.Projects) is looked for there.
func seenProjects(ctx context.Context, root string) []string {
	if _, err := os.Stat(index.File(root)); err != nil {
		return nil
	}
	ix, _, err := index.Open(ctx, root)
	if err != nil {
		return nil
	}
	defer ix.Close()
	projects, err := ix.Projects(ctx)
	if err != nil {
		return nil
	}
	return projects
}

// configPath is the sync config file: the one given, which must exist,
// else the default, sync.json in twasm's configuration directory, which
// may not; "" for none (no configuration directory is known).
func configPath(f *cmdutil.Factory, config string) (path string, required bool) {
	if config != "" {
		return config, true
	}
	return f.ConfigFile("sync.json"), false
}

// checkConfigProviders refuses a store of the config file whose provider
// no plugin serves: its files would be found and never archived.
func checkConfigProviders(ctx context.Context, f *cmdutil.Factory, config string, locs []archive.Location, plugins *Plugins) error {
	for _, l := range locs {
		if l.From != "config" {
			continue
		}
		if err := plugins.Serves(ctx, l.Provider); err != nil {
			var unknown *host.UnknownProviderError
			if errors.As(err, &unknown) {
				path, _ := configPath(f, config)
				return &cmdutil.InputError{Err: fmt.Errorf("sync config %s: store %q (%s): %w", path, l.Name, l.Dir, err)}
			}
			return err
		}
	}
	return nil
}

// Run syncs once, or until interrupted with --watch.
func Run(ctx context.Context, opts *Options) error {
	gc := &collector{keepLimit: opts.F.Getenv != nil && opts.F.Getenv("GOMEMLIMIT") != ""}
	gc.listing()
	defer gc.settle()
	plugins := &Plugins{F: opts.F, Flags: opts.Plugins, using: gc.archiving}
	defer plugins.Close(context.WithoutCancel(ctx))
	declared, err := plugins.Declared(ctx)
	if err != nil {
		return err
	}
	locs, err := Locations(ctx, opts.F, declared, opts.Config, opts.Providers)
	if err != nil {
		return err
	}
	if err := checkConfigProviders(ctx, opts.F, opts.Config, locs, plugins); err != nil {
		return err
	}
	for pass := 0; ; pass++ {
		gc.listing()
		err := round(ctx, opts, locs, plugins, gc, pass == 0)
		gc.settle()
		if opts.Watch && ctx.Err() != nil {
			// Ctrl-C is how a watch ends; every part written is whole.
			return nil
		}
		if !opts.Watch || ctx.Err() != nil {
			return err
		}
		if err != nil && !errors.Is(err, errFailed) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil // interrupted between rounds: everything written is whole
		case <-time.After(opts.Interval):
		}
	}
}

var errFailed = errors.New("some sessions could not be archived")

// round syncs once. The first round of a watch, or a single sync, shows
// the progress of a long scan; a later round of a watch prints only what
// it changed, and its summary when it changed something.
func round(ctx context.Context, opts *Options, locs []archive.Location, plugins *Plugins, gc *collector, first bool) error {
	f := opts.F
	ios := f.IOStreams
	since, _ := cmdutil.ParseTime(opts.Since, f.Now())
	var lock *archive.Lock
	if !opts.DryRun {
		var err error
		lock, err = archive.AcquireLock(ctx, f.StorageRoot(), opts.Wait || opts.Watch, func(pid string) {
			fmt.Fprintf(ios.ErrOut, "twasm: waiting for another sync or import on %s (pid %s)\n", f.StorageRoot(), pid)
		})
		var busy *archive.BusyError
		if errors.As(err, &busy) {
			return &cmdutil.InputError{Err: busy}
		}
		if err != nil {
			return err
		}
		defer lock.Release()
	}
	var written runIDs
	var open func(context.Context) (RunIndexer, error)
	if !opts.DryRun && opts.Indexed != nil {
		open = opts.IndexLive
	}
	live := newLiveIndex(open)
	defer live.finish()
	if open != nil {
		gc.reserve(liveIndexReserve)
	}
	a, rebuilt, err := archive.Open(archive.Options{
		Store: f.Store(), Plugin: plugins.Func(), Producer: f.Producer(), Logger: f.Logger(),
		Declared: func(ctx context.Context, _ string) []archive.Declared {
			d, _ := plugins.Declared(ctx) // started already: it cannot fail now
			return d
		},
		Redact: opts.Redact, DryRun: opts.DryRun, CloseIdle: -1, Streamed: true,
		Written: func(id string) {
			written.add(id)
			live.written(ctx, id)
		},
	})
	if err != nil {
		return err
	}
	// release closes the archiver and drops it, once, so that its ledger
	// (about 120 bytes a session) is garbage before the round's
	// index build.
	release := func() {
		if a != nil {
			a.Close()
			a = nil
		}
	}
	defer release()
	if rebuilt != "" && rebuilt != "no ledger yet" {
		fmt.Fprintf(ios.ErrOut, "twasm: sync ledger rebuilt from the transcripts (%s)\n", rebuilt)
	}
	var notUnderstood []string
	understood := func(o *archive.Outcome) {
		if msg := notUnderstoodPart(f, o); msg != "" {
			fmt.Fprintf(ios.ErrOut, "twasm: %s: %s\n", o.Path, msg)
			notUnderstood = append(notUnderstood, o.Path)
		}
	}
	settled := a.Recover(ctx) // what a killed sync or import left unfinished
	for i := range settled {
		printOutcome(ios.Out, &settled[i], opts.JSON)
		understood(&settled[i])
	}
	var repaired []archive.Outcome
	if opts.Repair && first {
		damaged, _ := rawChecks(ctx, f.StorageRoot(), a.Ledger(), opts.Providers)
		repaired = a.Repair(ctx, damaged)
		for i := range repaired {
			printOutcome(ios.Out, &repaired[i], opts.JSON)
		}
	}
	var bar *progress
	if first {
		bar = newProgress(ios.ErrOut, isTerminal(ios.ErrOut))
	} else {
		bar = newProgress(io.Discard, false)
	}
	gc.arm(a.Workers())
	// The report keeps no outcome but the failed and damaged ones
	// (Streamed): each is printed as it comes, and the settled sessions
	// found unchanged are noted for withSettled.
	unchangedSettled := map[string]bool{}
	rep := a.SyncStores(ctx, locs, since, func(done, total int, o *archive.Outcome) {
		if o.Action == archive.ActionUnchanged && len(settled) > 0 && !unchangedSettled[o.Path] &&
			slices.ContainsFunc(settled, func(s archive.Outcome) bool { return s.Path == o.Path }) {
			unchangedSettled[o.Path] = true
		}
		printOutcome(ios.Out, o, opts.JSON)
		understood(o)
		bar.update(done, total)
		if o.Action != archive.ActionUnchanged {
			// An unchanged session adds nothing to the heap but its
			// outcome, and the collections' watch follows the live heap
			// anyway: reading the runtime's metrics for each was 2% of a
			// re-sync with nothing new.
			gc.follow()
		}
	})
	bar.done()
	if opts.Repair && first && !opts.DryRun {
		left := a.Repaired()
		for i := range left {
			printOutcome(ios.Out, &left[i], opts.JSON)
		}
		repaired = append(repaired, left...)
	}
	rep = withSettled(rep, settled, unchangedSettled)
	rep = withRepaired(rep, repaired)
	// The archiving is done: the archiver, whose ledger grows with every
	// session the storage holds, the plugins' idle instances and the
	// heap the archiving used are given back before the live indexer
	// catches up and the index is built, which add SQLite's memory
	// outside Go's heap; the live heap under them is then a few MiB at
	// any size (a first sync of 8,000 sessions: 5 MiB, 17 with the
	// ledger kept).
	release()
	if written.n > 0 {
		plugins.ReleaseIdle()
		debug.FreeOSMemory()
	}
	if written.n > 0 {
		// Nothing written, nothing to index (the live indexer never
		// started, Indexed is not called): the limit for the index build
		// is not set, and the collection that measures the live heap for
		// it, with the sweep it waits for, was 5-10% of a re-sync with
		// nothing new.
		gc.indexing()
	}
	if err := live.finish(); err != nil {
		f.Logger().Debug("search index: indexing while syncing", "err", err)
	}
	if opts.Indexed != nil && written.n > 0 {
		// What the live indexer's catch-up left is given back too.
		debug.FreeOSMemory()
		if err := opts.Indexed(context.WithoutCancel(ctx), written.list()); err != nil {
			fmt.Fprintf(ios.ErrOut, "twasm: search index: %v\n", err)
		}
	}
	if !opts.Watch || changed(rep) {
		summary(ios.ErrOut, rep, opts)
	}
	if opts.JSON {
		b, _ := json.Marshal(map[string]any{"summary": rep.Counts, "bytes": rep.Bytes, "stores": rep.Stores, "dry_run": opts.DryRun})
		fmt.Fprintln(ios.Out, string(b))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// rep counts the settled outcomes (withSettled), failures included;
	// the summary, always written when one failed, names them.
	nfailed := rep.Counts[archive.ActionFailed]
	if nfailed > 0 {
		return fmt.Errorf("%w: %d failed", errFailed, nfailed)
	}
	if n := rep.Counts[archive.ActionDamaged]; n > 0 {
		return fmt.Errorf("%w: %d damaged run(s) kept as they are", errFailed, n)
	}
	if len(notUnderstood) > 0 {
		return fmt.Errorf("%w: %w: %s", errFailed, cmdutil.ErrNotUnderstood, strings.Join(notUnderstood, ", "))
	}
	return nil
}

// runIDs are the runs a round wrote, in order, each by its 16 bytes
// (runid.Key; a run id without a key, which a sync does not make, by
// itself), kept until the index is told: 16 bytes a run instead of a
// string's 64.
type runIDs struct {
	keys  [][16]byte
	other map[int]string // by position in keys
	n     int
}

func (r *runIDs) add(id string) {
	k, ok := runid.Key(id)
	if !ok {
		if r.other == nil {
			r.other = map[int]string{}
		}
		r.other[len(r.keys)] = id
	}
	r.keys = append(r.keys, k)
	r.n++
}

// list is the ids as strings.
func (r *runIDs) list() []string {
	if r.n == 0 {
		return nil
	}
	out := make([]string, len(r.keys))
	for i, k := range r.keys {
		if id, ok := r.other[i]; ok {
			out[i] = id
		} else {
			out[i] = runid.FromKey(k)
		}
	}
	return out
}

// notUnderstoodPart says, for a part just written, that its plugin
// understood none of its lines (a file of another provider in a store,
// or not an agent's session at all): the run holds nothing but its raw
// capture, and the provider looks wrong (what detection says, as record
// and import say it). "" when the part was understood.
func notUnderstoodPart(f *cmdutil.Factory, o *archive.Outcome) string {
	if o.Result == nil || o.RunID == "" {
		return ""
	}
	tpath, err := f.Store().TranscriptPath(o.RunID)
	if err != nil {
		return ""
	}
	so := cmdutil.StepOutcome(f.StorageRoot(), tpath, o.Result)
	if so.Understood || len(so.Problems) == 0 {
		return ""
	}
	return fmt.Sprintf("%s; archived as run %s (status %s), which holds nothing of it but its raw capture", so.Problems[0], o.RunID, o.Result.Status)
}

func changed(rep archive.Report) bool {
	for k, n := range rep.Counts {
		if n > 0 && k != archive.ActionUnchanged && k != archive.ActionPending && k != archive.ActionSkipped {
			return true
		}
	}
	return false
}

func printOutcome(w io.Writer, o *archive.Outcome, asJSON bool) {
	if o.Action == archive.ActionUnchanged || o.Action == archive.ActionPending {
		return
	}
	if asJSON {
		b, _ := json.Marshal(o)
		fmt.Fprintln(w, string(b))
		return
	}
	line := fmt.Sprintf("%s\t%s\t%s\t%s", o.Action, dash(o.RunID), o.Provider, o.Path)
	if o.Reason != "" {
		line += "\t" + o.Reason
	}
	fmt.Fprintln(w, line)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// summary says on stderr what the round did, the stores it could not
// find and every failure with its reason.
// withSettled counts in rep what Recover did before the stores were
// read: a session whose killed part it continued is new or grown there,
// and the same session, unchanged when the stores were read after it, is
// not counted unchanged too (unchanged: the settled sessions' paths the
// stores' read found unchanged). The summary then says what this sync
// did.
func withSettled(rep archive.Report, settled []archive.Outcome, unchanged map[string]bool) archive.Report {
	if len(settled) == 0 {
		return rep
	}
	counts := make(map[string]int, len(rep.Counts)+1)
	for k, v := range rep.Counts {
		counts[k] = v
	}
	for _, s := range settled {
		counts[s.Action]++
		rep.Bytes += s.Bytes
		if unchanged[s.Path] && counts[archive.ActionUnchanged] > 0 {
			counts[archive.ActionUnchanged]--
		}
	}
	rep.Counts = counts
	rep.Outcomes = append(append([]archive.Outcome(nil), settled...), rep.Outcomes...)
	return rep
}

// withRepaired counts in rep what --repair did before and after the
// stores were read: the damaged runs kept as they are, and those ended
// because another run held their session already.
func withRepaired(rep archive.Report, repaired []archive.Outcome) archive.Report {
	if len(repaired) == 0 {
		return rep
	}
	rep.Counts = maps.Clone(rep.Counts)
	if rep.Counts == nil {
		rep.Counts = map[string]int{}
	}
	for _, o := range repaired {
		rep.Counts[o.Action]++
	}
	rep.Outcomes = append(rep.Outcomes, repaired...)
	return rep
}

func summary(w io.Writer, rep archive.Report, opts *Options) {
	found := 0
	for _, s := range rep.Stores {
		if s.Found {
			found++
		}
		for _, p := range s.Problems {
			fmt.Fprintf(w, "twasm: %s: %s\n", s.Name, p)
		}
	}
	verb := "sync"
	if opts.DryRun {
		verb = "sync (dry run, nothing written)"
	}
	c := rep.Counts
	settled := ""
	if n := c[archive.ActionSettled]; n > 0 {
		settled = fmt.Sprintf(", %d settled", n)
	}
	if n := c[archive.ActionSkipped]; n > 0 {
		settled += fmt.Sprintf(", %d skipped", n)
	}
	if n := c[archive.ActionDamaged]; n > 0 {
		settled += fmt.Sprintf(", %d damaged (kept as they are)", n)
	}
	fmt.Fprintf(w, "%s: %d store(s) found of %d; %d new, %d grown, %d continued, %d unchanged, %d closed%s, %d pending, %d failed; %s archived\n",
		verb, found, len(rep.Stores), c[archive.ActionNew], c[archive.ActionGrown], c[archive.ActionContinued], c[archive.ActionUnchanged],
		c[archive.ActionClosed], settled, c[archive.ActionPending], c[archive.ActionFailed], humanBytes(rep.Bytes))
	for _, o := range rep.Outcomes {
		if o.Action == archive.ActionFailed || o.Action == archive.ActionDamaged {
			fmt.Fprintf(w, "%s: %s: %s\n", o.Action, o.Path, o.Reason)
		}
	}
	if found == 0 {
		fmt.Fprintln(w, "no session store found; `twasm doctor` lists where twasm looked")
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// progress draws a bar on a terminal and, elsewhere, a plain line every
// 10% of a long sync.
type progress struct {
	w    io.Writer
	tty  bool
	last int
	drew bool
}

func newProgress(w io.Writer, tty bool) *progress { return &progress{w: w, tty: tty, last: -1} }

func (p *progress) update(done, total int) {
	if total < 20 {
		return
	}
	pct := done * 100 / total
	if p.tty {
		if pct == p.last {
			return
		}
		const width = 30
		fill := width * done / total
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d sessions", strings.Repeat("#", fill), strings.Repeat(" ", width-fill), done, total)
		p.last, p.drew = pct, true
		return
	}
	if step := pct / 10; step != p.last && (step > 0 || done == total) {
		p.last = step
		fmt.Fprintf(p.w, "sync: %d/%d sessions\n", done, total)
	}
}

func (p *progress) done() {
	if p.tty && p.drew {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
