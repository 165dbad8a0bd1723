package goldencmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/plugload"
)

// Options are the flags and arguments.
type Options struct {
	F        *cmdutil.Factory
	Plugins  plugload.Flags
	Provider string
	Dirs     []string
	Update   bool
}

// NewCmdGolden returns the golden command group.
func NewCmdGolden(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "golden <command>",
		Short: "Check plugins against golden files",
		Long: `A golden directory holds raw provider outputs (<case>.<ext>) and the
expected normalization of each (<case>.golden.jsonl). "check" runs the
plugin over every input through the WebAssembly host and prints a diff for
every case whose output differs, as the fields that differ; it exits 1
when any does. "update" rewrites the expected files instead: review the
diff before committing.

A directory with no case (empty, mistyped, or the parent of the provider
directories) is an error (exit 2). An expected output may not hold lines
lost to a plugin fault unless <case>.fault says why; check and update
both refuse it otherwise.

The plugin is --plugin (a .wasm file or a loaded plugin's name), else the
plugin serving --provider, else the one serving the directory's name.`,
		Example: `  twasm golden check testdata/golden/claude
  twasm golden check --plugin ./myplugin.wasm --provider myprovider testdata/golden
  twasm golden update --plugin ./myplugin.wasm testdata/golden/myprovider`,
	}
	for _, update := range []bool{false, true} {
		opts := &Options{F: f, Update: update}
		use, short := "check [DIR...]", "Compare plugin output with the golden files"
		if update {
			use, short = "update [DIR...]", "Rewrite the golden files from the plugin's output"
		}
		sub := &cobra.Command{
			Use:   use,
			Short: short,
			RunE: func(cmd *cobra.Command, args []string) error {
				opts.Dirs = args
				if len(opts.Dirs) == 0 {
					opts.Dirs = defaultDirs()
					if len(opts.Dirs) == 0 {
						return cmdutil.FlagErrorf("no DIR given and no testdata/golden/* directory here")
					}
				}
				if runF != nil {
					return runF(cmd.Context(), opts)
				}
				return Run(cmd.Context(), opts)
			},
		}
		opts.Plugins.Register(sub, true)
		sub.Flags().StringVar(&opts.Provider, "provider", "", "provider whose plugin to check (default: the directory's name)")
		cmd.AddCommand(sub)
	}
	return cmd
}

func defaultDirs() []string {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// Run checks (or updates) every directory.
func Run(ctx context.Context, opts *Options) error {
	rt, err := plugload.Open(ctx, opts.F, opts.Plugins)
	if err != nil {
		return err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	out := opts.F.IOStreams.Out
	passed, failed := 0, 0
	for _, dir := range opts.Dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return &cmdutil.InputError{Path: dir, Err: fmt.Errorf("not a directory")}
		}
		provider := opts.Provider
		if provider == "" && opts.Plugins.Plugin == "" {
			provider = filepath.Base(dir)
		}
		p, err := plugload.Resolve(ctx, rt, opts.Plugins, provider)
		if err != nil {
			return err
		}
		if provider == "" || !slices.Contains(p.Info().Manifest.Providers, provider) {
			provider = p.Info().Manifest.Providers[0]
		}
		outs, err := golden.Check(ctx, dir, p, golden.Options{Provider: provider, Update: opts.Update})
		if err != nil {
			return &cmdutil.InputError{Path: dir, Err: err}
		}
		for _, o := range outs {
			switch {
			case o.Err != nil:
				failed++
				fmt.Fprintf(out, "FAIL %s: %v\n", o.Input, o.Err)
			case o.Updated:
				passed++
				fmt.Fprintf(out, "updated %s\n", o.Golden)
			case o.Diff != "":
				failed++
				fmt.Fprintf(out, "FAIL %s (plugin %s differs from %s):\n%s\n", o.Name, p.Info().Name, o.Golden, o.Diff)
			default:
				passed++
				if opts.F.Verbose {
					fmt.Fprintf(out, "ok   %s\n", o.Name)
				}
			}
		}
	}
	fmt.Fprintf(out, "golden: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return cmdutil.ErrSilent
	}
	return nil
}
