package servecmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/searchcmd"
	"github.com/twasm/twasm/internal/usage"
	"github.com/twasm/twasm/internal/web"
)

// DefaultAddr is where serve listens unless told otherwise: this
// machine's loopback only.
const DefaultAddr = "127.0.0.1:8421"

// Options are the serve flags.
type Options struct {
	F      *cmdutil.Factory
	Addr   string
	Token  string
	Redact bool
	// Timezone is the zone the usage page cuts days in ("": the local
	// one), as twasm usage's --timezone.
	Timezone string
	// Ready, when set, is told the address the server listens on once it
	// does (tests).
	Ready func(addr string)
}

// NewCmdServe returns the serve command.
func NewCmdServe(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Browse every run in a local web app: sessions, a run's page, search, live updates",
		Long: `Serve starts a read-only web app over the storage, at http://127.0.0.1:8421
unless --addr says otherwise:

  /            every run newest first, filtered by project, agent, model,
               status and day: its first prompt, when, how long, tool
               calls, errors, tokens and cost; open runs (synced sessions
               that may grow) are marked, new runs appear as they come
  /s/RUN       a run's page, the same as export html's, with its child
               runs one click away, #seq-N opening it at an event, the line
               behind each event ("raw"), and new events as they are
               written (record --live, sync --watch)
  /search      search with the filters of twasm search; a hit opens its
               run at its event
  /usage       tokens and cost by day, model, agent and project as charts,
               the figures twasm usage prints (days cut in the local time
               zone unless --timezone says another, as twasm usage's)

Keys: / goes to the search box, j and k move through the list, Enter opens.

It listens on 127.0.0.1 and answers only to localhost. Any other --addr
(0.0.0.0:8421, a LAN address) requires a token: --token, or one generated
and printed with the address to open; every request must carry it (the
address once, then a cookie). The token is sent in clear: use TLS in front
of it on a network you do not trust. Nothing it serves changes the
storage. Every page forbids inline script and anything from elsewhere
(Content-Security-Policy); transcript text is always shown as text.
--redact masks secrets in everything served ("twasm help redact").
Ctrl-C stops it.`,
		Example: `  twasm serve
  twasm serve --redact
  twasm serve --addr 0.0.0.0:8421            # prints a token to open it with`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := net.SplitHostPort(opts.Addr); err != nil {
				return cmdutil.FlagErrorf("--addr: %v", err)
			}
			if _, err := time.LoadLocation(opts.Timezone); err != nil {
				return cmdutil.FlagErrorf("--timezone: %v", err)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Addr, "addr", DefaultAddr, "address to listen on (host:port); any but a loopback one requires a token")
	fl.StringVar(&opts.Token, "token", "", "the token every request must carry (default: none on loopback, else one generated and printed)")
	fl.BoolVar(&opts.Redact, "redact", false, "mask secrets in everything served")
	fl.StringVar(&opts.Timezone, "timezone", "", "cut the usage page's days in this time zone (UTC, Europe/Paris; default the local one)")
	return cmd
}

// Run serves until ctx ends.
func Run(ctx context.Context, opts *Options) error {
	f := opts.F
	ios := f.IOStreams
	if err := f.RequireStorage(); err != nil {
		return err
	}
	token := opts.Token
	if token == "" && !web.IsLoopback(opts.Addr) {
		var err error
		if token, err = web.NewToken(); err != nil {
			return err
		}
	}
	loc := time.Local
	if opts.Timezone != "" {
		var err error
		if loc, err = time.LoadLocation(opts.Timezone); err != nil {
			return cmdutil.FlagErrorf("--timezone: %v", err)
		}
	}
	ix, err := searchcmd.Open(ctx, f, ios.ErrOut)
	if err != nil {
		return err
	}
	defer ix.Close()
	srv, err := web.New(web.Options{Root: f.StorageRoot(), Index: ix, DigestKind: cmdutil.DigestKind(), Token: token, Redact: opts.Redact, Logger: f.Logger(),
		Usage: UsageSource(f, ios.ErrOut), Location: loc})
	if err != nil {
		return err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	printAddr(ios.Out, ln.Addr().String(), token)
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String())
	}
	return srv.Serve(ctx, ln)
}

// UsageSource gives the usage page what twasm usage reads: every run's
// ledger, from the index (the transcripts when it cannot be used), priced
// with the table in force.
func UsageSource(f *cmdutil.Factory, w io.Writer) web.UsageSource {
	src := f.UsageSource()
	return func(ctx context.Context) (usage.Sources, string, error) {
		ids, err := f.ListRuns()
		if err != nil {
			return usage.Sources{}, "", err
		}
		tbl, ledgers, err := src.Load(ctx, ids, w)
		if err != nil {
			return usage.Sources{}, "", err
		}
		return usage.Sources{IDs: ids, Ledgers: ledgers, ModTime: f.FileModTime}, tbl.Version(), nil
	}
}

func printAddr(w io.Writer, addr, token string) {
	u := "http://" + addr + "/"
	if token != "" {
		u += "?token=" + token
	}
	fmt.Fprintf(w, "twasm serve: %s (Ctrl-C stops it)\n", u)
}
