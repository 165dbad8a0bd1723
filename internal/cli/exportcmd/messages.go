package exportcmd

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/export"
)

// MessagesOptions are the inputs of `export messages`.
type MessagesOptions struct {
	Run      string
	Format   string
	Path     string
	Dangling string
	Output   string
	Injected bool
	Redact   bool
}

func newCmdMessages(f *cmdutil.Factory, runF func(context.Context, *MessagesOptions) error) *cobra.Command {
	opts := &MessagesOptions{}
	cmd := &cobra.Command{
		Use:   "messages --format openai|anthropic RUN",
		Short: "Rebuild a run's conversation as an API's message list",
		Long: `Rebuild the conversation of a run, or of one step (--path), as the message
list a provider API takes, so that a session can be resumed in, or handed to,
another agent or an API call:

  openai     {"messages": [...]}: Chat Completions messages: system, user,
             assistant with tool_calls, tool results as role "tool"
  anthropic  {"messages": [...], "system": "..."}: Messages API messages:
             tool_use blocks, tool_result blocks paired by id, thinking
             where the provider's signature was recorded

A message the target cannot express is refused with the reason and nothing
is written (exit 1): a tool result whose call the conversation never made,
a conversation that goes on while calls await results, calls left without
results (--dangling note answers each with a note saying no result was
recorded). Content a target has no field for (thinking without a
signature, raw output streams) is left out and counted on stderr. So is
injected context (the agent's notices, hook output, local command echoes
such as "Caveat: ..." or "<command-name>/clear"), which is noise to a
resumed conversation: --injected keeps it as user text.

A call id the provider reused for a new call once the first was answered
(some providers number calls per response, not per session) is kept as a
call of its own: since both APIs refuse a tool call id that repeats in a
conversation, its second call is written as <id>-2, its third as <id>-3
(the first free such id), in the call and in its result alike, and stderr
lists each.`,
		Example: `  twasm export messages --format anthropic latest > messages.json
  twasm export messages --format openai --path fix --dangling note RUN`,
		Args: cmdutil.ExactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			switch opts.Format {
			case export.FormatOpenAI, export.FormatAnthropic:
			default:
				return cmdutil.FlagErrorf("--format must be openai or anthropic")
			}
			switch opts.Dangling {
			case export.DanglingRefuse, export.DanglingNote:
			default:
				return cmdutil.FlagErrorf("--dangling must be refuse or note")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runMessages(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Format, "format", "", "target API: openai or anthropic (required)")
	fl.StringVar(&opts.Path, "path", "", "only the step at this path (and the steps inside it)")
	fl.StringVar(&opts.Dangling, "dangling", export.DanglingRefuse, "calls without results: refuse, or note (answer each with a note)")
	fl.StringVarP(&opts.Output, "output", "o", "", "write to this file instead of stdout")
	fl.BoolVar(&opts.Injected, "injected", false, "keep injected context (agent notices, hook output, command echoes) as user text")
	addRedactFlag(cmd, &opts.Redact, "the messages")
	return cmd
}

func runMessages(ctx context.Context, f *cmdutil.Factory, opts *MessagesOptions) error {
	targets, _, err := Targets(ctx, f, []string{opts.Run}, AllRuns{})
	if err != nil {
		return err
	}
	red := masked(targets, opts.Redact)
	// The list is shown only when whole: a refused conversation writes
	// nothing.
	var rep *export.MessagesReport
	err = writeWhole(f.IOStreams.Out, opts.Output, func(w io.Writer) error {
		var err error
		rep, err = export.ExportMessages(ctx, w, targets[0], export.MessagesOptions{Format: opts.Format, Path: opts.Path, Dangling: opts.Dangling, Injected: opts.Injected})
		if err != nil && !export.IsRefused(err) {
			return cmdutil.PathInputError(targets[0].Path, err)
		}
		return err
	})
	if err != nil {
		return err
	}
	reportLeftOut(f.IOStreams.ErrOut, rep)
	reportRedacted(f, red)
	return nil
}

func reportLeftOut(w io.Writer, rep *export.MessagesReport) {
	var parts []string
	for k, n := range rep.LeftOut {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(parts)
	if len(parts) > 0 {
		fmt.Fprintf(w, "messages: left out: %s\n", strings.Join(parts, "; "))
	}
	if len(rep.Noted) > 0 {
		fmt.Fprintf(w, "messages: %d calls had no result and were answered with a note: %s\n", len(rep.Noted), strings.Join(rep.Noted, ", "))
	}
	if len(rep.Renamed) > 0 {
		ids := make([]string, 0, len(rep.Renamed))
		for _, r := range rep.Renamed {
			ids = append(ids, r.CallID+" as "+r.ID)
		}
		fmt.Fprintf(w, "messages: %d calls reused a call id already in the conversation and were written under ids of their own: %s\n", len(rep.Renamed), strings.Join(ids, ", "))
	}
}
