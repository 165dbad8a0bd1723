package exportcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/export"
	"github.com/twasm/twasm/internal/redact"
)

// NewCmdExport returns the export command family: `twasm export FORMAT
// RUN...`, one subcommand per row of [formats] (cobra's help lists them).
func NewCmdExport(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export FORMAT RUN...",
		Short: "Write runs in the forms other tools read",
	}
	cmd.Long = `Write runs, with the child runs they link to, in the forms other tools read
(the commands below, one per format). Every export streams the transcript: a
run of any size exports in bounded memory, and runs recorded by older
versions export too. A linked child run that cannot be followed (no file, a
cycle, deeper than 64 runs) is left out with a warning, and the rest is
exported.`
	cmd.AddCommand(formats(f)...)
	return cmd
}

// formats are export's formats, one row each (a subcommand whose Short
// is its line in export's help): adding a format is one file in this
// package, its command and its visitor of the run tree (an export.Visit,
// streamed by export.Walk, which owns the child runs), and a row here.
func formats(f *cmdutil.Factory) []*cobra.Command {
	return []*cobra.Command{
		newCmdOTLP(f, nil),
		newCmdMessages(f, nil),
		newCmdDir(f, nil),
		newCmdHTML(f, nil),
	}
}

// OTLPCmdOptions are the inputs of `export otlp`.
type OTLPCmdOptions struct {
	OTLP   OTLPOptions
	Runs   []string
	All    AllRuns
	Redact bool
	// New sends only what an earlier --new export to the same endpoint
	// did not (otlpState).
	New bool
}

func newCmdOTLP(f *cmdutil.Factory, runF func(context.Context, *OTLPCmdOptions) error) *cobra.Command {
	opts := &OTLPCmdOptions{}
	cmd := &cobra.Command{
		Use:   "otlp RUN... | --all",
		Short: "Send runs to an OpenTelemetry collector as spans",
		Long: `Send runs to an OpenTelemetry collector over OTLP (gRPC or HTTP) as spans that
follow the OpenTelemetry GenAI semantic conventions:

  invoke_workflow NAME   a run (a sub-run hangs under the step that started it)
  invoke_agent NAME      an agent step, or a sub-agent's run: gen_ai.provider.name,
                         gen_ai.request.model, gen_ai.conversation.id, usage, cost
  chat MODEL             a model turn (one assistant message): model, response id,
                         finish reason, usage
  execute_tool NAME      a tool call to its result: gen_ai.tool.name,
                         gen_ai.tool.call.id, status, exit code
  KIND NAME              any other step

Spans keep the times the transcript recorded, so old runs are backfilled as
they happened. Trace and span ids are derived from the run id and the
events, so exporting a run again sends the same ids. Message content
(prompts, answers, thinking, tool arguments and outputs, command lines) is
sent only with --content or
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.

The standard OTEL_EXPORTER_OTLP_* variables configure the endpoint,
headers, TLS and timeout; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
the resource. With none set, spans go to a local Collector's plaintext
port: http://localhost:4318 (http/protobuf) or http://localhost:4317 (grpc).
The command fails if any span did not reach the collector, saying how many
did.

--new sends only what was not sent yet: twasm keeps, per endpoint and run,
how far an earlier --new export got (<storage>/exports/otlp.json), and
sends the rest of each run up to its last completed step; a run still
recording or an archived session that may grow is finished by a later
export (its run span, sent the first time, is marked unfinished), and an
export that failed in part is sent again, with the same span ids, by the
next. Run it from cron or a timer after sync.

` + allHelp,
		Example: `  OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 twasm export otlp latest
  twasm export otlp --protocol grpc --endpoint http://localhost:4317 --all
  twasm sync && twasm export otlp --all --new`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Runs = args
			if opts.All.On == (len(args) > 0) {
				return cmdutil.FlagErrorf("name runs to export, or --all (not both)")
			}
			if err := checkAll(opts.All); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runOTLP(cmd.Context(), f, opts)
		},
	}
	AddOTLPFlags(cmd, &opts.OTLP, "")
	addRedactFlag(cmd, &opts.Redact, "the spans")
	addAllFlags(cmd, &opts.All)
	cmd.Flags().BoolVar(&opts.New, "new", false, "send only what an earlier --new export to this endpoint did not")
	return cmd
}

// Targets resolves RUN arguments, or --all (allTargets: the runs ls
// lists, unless all.Superseded), to transcript files; left is how many
// runs --all left out as superseded.
func Targets(ctx context.Context, f *cmdutil.Factory, runs []string, all AllRuns) (_ []export.Run, left int, _ error) {
	if all.On {
		return allTargets(ctx, f, all.Superseded)
	}
	out := make([]export.Run, 0, len(runs))
	for _, a := range runs {
		ref, err := f.ResolveRun(a)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, export.Run{Path: ref.Path, Dir: ref.Dir})
	}
	return out, 0, nil
}

func runOTLP(ctx context.Context, f *cmdutil.Factory, opts *OTLPCmdOptions) error {
	targets, left, err := Targets(ctx, f, opts.Runs, opts.All)
	if err != nil {
		return err
	}
	red := masked(targets, opts.Redact)
	p, err := NewPipeline(ctx, &opts.OTLP, f.Getenv, f.Logger())
	if err != nil {
		return err
	}
	var state *otlpState
	var sentTo map[string]uint64 // with --new: this endpoint's cursors
	statePath := otlpStateFile(f.StorageRoot())
	if opts.New {
		if state, err = loadOTLPState(statePath); err != nil {
			_, _ = p.Close(context.WithoutCancel(ctx))
			return err
		}
		if sentTo = state.Endpoints[p.Endpoint()]; sentTo == nil {
			sentTo = map[string]uint64{}
			state.Endpoints[p.Endpoint()] = sentTo
		}
	}
	var runs, spans, unchanged int
	var exportErr error
	advanced := map[string]uint64{}
	for _, t := range targets {
		var rng export.OTLPOptions
		if opts.New {
			id, settled, _, err := export.Settled(ctx, t)
			if err != nil {
				exportErr = cmdutil.PathInputError(t.Path, err)
				break
			}
			if settled <= sentTo[id] {
				unchanged++
				continue
			}
			// The first export of a run sends its span (marked
			// unfinished while the run is open); later ones never again.
			rng = export.OTLPOptions{FromSeq: sentTo[id] + 1, ToSeq: settled, RunSpanSent: sentTo[id] > 0}
			advanced[id] = settled
		}
		st, err := p.Export(ctx, t, rng)
		runs, spans = runs+st.Runs, spans+st.Spans
		cmdutil.WarnSkipped(f.IOStreams.ErrOut, t.Path, st.Skipped)
		if err != nil {
			exportErr = cmdutil.PathInputError(t.Path, err)
			break
		}
	}
	sent, cerr := p.Close(context.WithoutCancel(ctx))
	if exportErr != nil {
		return exportErr
	}
	if cerr != nil {
		return fmt.Errorf("%w (%d of %d spans sent)", cerr, sent, spans)
	}
	if opts.New {
		for id, seq := range advanced {
			sentTo[id] = seq
		}
		if err := state.save(statePath); err != nil {
			return fmt.Errorf("otlp: %d spans sent, but what was sent could not be kept (the next --new export sends them again): %w", sent, err)
		}
	}
	msg := fmt.Sprintf("otlp: %d spans of %d runs sent to %s", sent, runs, p.Endpoint())
	if opts.New {
		msg += fmt.Sprintf("; %d runs had nothing new", unchanged)
	}
	fmt.Fprintln(f.IOStreams.ErrOut, msg)
	reportSuperseded(f.IOStreams.ErrOut, left)
	reportRedacted(f, red)
	return nil
}

// addRedactFlag binds --redact, which every export takes: what it masks
// is what `record --redact` masks (redact.Help).
func addRedactFlag(cmd *cobra.Command, on *bool, what string) {
	cmd.Flags().BoolVar(on, "redact", false, "mask secrets in "+what+" (what is and is not masked: twasm help redact); a line that cannot be read fails the export")
}

// masked makes every target (and the child runs read through it) masked
// by one redactor when on, which it returns.
func masked(targets []export.Run, on bool) *redact.Redactor {
	if !on {
		return nil
	}
	r := redact.New()
	for i := range targets {
		targets[i].Mask = r.Mask
	}
	return r
}

// reportRedacted says on stderr what a --redact export masked.
func reportRedacted(f *cmdutil.Factory, r *redact.Redactor) {
	if r != nil {
		fmt.Fprintf(f.IOStreams.ErrOut, "redacted: %s\n", cmdutil.RedactedSummary(r.Counts()))
	}
}
