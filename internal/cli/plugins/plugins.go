package plugins

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/plugload"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/verify"
	"github.com/twasm/twasm/internal/wasm/wasmcheck"
)

// ListOptions are the flags of plugins list.
type ListOptions struct {
	F       *cmdutil.Factory
	Plugins plugload.Flags
	JSON    bool
}

// VerifyOptions are the flags of plugins verify.
type VerifyOptions struct {
	F    *cmdutil.Factory
	File string
	JSON bool
}

// NewCmdPlugins returns the plugins command group.
func NewCmdPlugins(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins <command>",
		Short: "List and check normalizer plugins",
		Long: `Normalizer plugins are WebAssembly modules: the bundled ones are built into
twasm; external ones are found in --plugin-path, $TWASM_PLUGIN_PATH and
~/.config/twasm/plugins (your config directory). A plugin is identified by
its manifest (name, version, providers, formats) and its sha256.`,
	}
	lo := &ListOptions{F: f}
	list := &cobra.Command{
		Use:     "list",
		Short:   "List bundled and external plugins",
		Example: "  twasm plugins list\n  twasm plugins list --plugin-path ./build --json",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return List(cmd.Context(), lo) },
	}
	lo.Plugins.Register(list, false)
	list.Flags().BoolVar(&lo.JSON, "json", false, "print JSON")
	vo := &VerifyOptions{F: f}
	verify := &cobra.Command{
		Use:     "verify FILE",
		Short:   "Check a plugin file: ABI version, imports, exports, manifest",
		Example: "  twasm plugins verify ./myplugin.wasm",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			vo.File = args[0]
			return Verify(cmd.Context(), vo)
		},
	}
	verify.Flags().BoolVar(&vo.JSON, "json", false, "print JSON")
	cmd.AddCommand(list, verify)
	return cmd
}

type infoJSON struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Providers   []string `json:"providers"`
	Formats     []string `json:"formats"`
	Description string   `json:"description,omitempty"`
	SDK         string   `json:"sdk,omitempty"`
	SHA256      string   `json:"sha256"`
	Origin      string   `json:"origin"`
	Disabled    bool     `json:"disabled,omitempty"`
	Problems    []string `json:"problems,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// List prints the plugins.
func List(ctx context.Context, opts *ListOptions) error {
	rt, err := plugload.Open(ctx, opts.F, opts.Plugins)
	if err != nil {
		return err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	infos := rt.List(ctx)
	out := opts.F.IOStreams.Out
	if opts.JSON {
		list := make([]infoJSON, 0, len(infos))
		// One object per plugin (JSON Lines), as every --json.
		for _, i := range infos {
			j := infoJSON{Name: i.Name, Version: i.Version, Providers: i.Providers, Formats: i.Formats, Description: i.Description,
				SDK: i.SDK, SHA256: i.SHA256, Origin: i.Origin, Disabled: i.Disabled, Problems: i.Problems}
			if i.Err != nil {
				j.Error = i.Err.Error()
				j.Origin = i.File
			}
			list = append(list, j)
		}
		return cmdutil.WriteJSONLines(out, list)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tPROVIDERS\tFORMATS\tSHA256\tFROM")
	for _, i := range infos {
		if i.Err != nil {
			fmt.Fprintf(tw, "-\t-\t-\t-\t%s\t%s: %v\n", short(i.SHA256), i.File, i.Err)
			continue
		}
		from := i.Origin
		if len(i.Problems) > 0 {
			from += " (" + strings.Join(i.Problems, "; ") + ")"
		}
		if i.Disabled {
			from += " (disabled)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", i.Name, i.Version, strings.Join(i.Providers, ","), strings.Join(i.Formats, ","), short(i.SHA256), from)
	}
	return tw.Flush()
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// Verify checks one plugin file; exit 1 when it has problems.
func Verify(ctx context.Context, opts *VerifyOptions) error {
	b, err := regfile.ReadFile(opts.File, wasmcheck.MaxModuleBytes)
	if err != nil {
		return &cmdutil.InputError{Path: opts.File, Err: err}
	}
	rt, err := host.New(ctx, host.Options{Bundled: []host.Bundled{}, PluginPath: []string{}, Logger: opts.F.Logger()})
	if err != nil {
		return err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	rep, err := rt.Verify(ctx, b)
	if err != nil {
		return err
	}
	out := opts.F.IOStreams.Out
	if opts.JSON {
		if err := cmdutil.WriteJSON(out, verifyJSON(rep)); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "%s: %s\n", opts.File, verdict(rep))
		fmt.Fprintf(out, "  sha256:  %s\n", rep.SHA256)
		fmt.Fprintf(out, "  abi:     %s\n", rep.ABIVersion)
		if rep.Manifest != nil {
			m := rep.Manifest
			fmt.Fprintf(out, "  plugin:  %s %s\n  providers: %s\n  formats: %s\n", m.Name, m.Version, strings.Join(m.Providers, ", "), strings.Join(m.Formats, ", "))
		}
		var imports []string
		for _, fn := range rep.Imports {
			imp := fn.Module + "." + fn.Name
			if fn.Problem != "" {
				imp += " (refused: " + fn.Problem + ")"
			}
			imports = append(imports, imp)
		}
		fmt.Fprintf(out, "  imports: %s\n", strings.Join(imports, ", "))
		for _, p := range rep.Problems {
			fmt.Fprintf(out, "  problem: %s\n", p)
		}
	}
	if len(rep.Problems) > 0 {
		return cmdutil.ErrSilent
	}
	return nil
}

func verdict(rep *verify.Report) string {
	if len(rep.Problems) == 0 {
		return "ok"
	}
	return fmt.Sprintf("%d problem(s)", len(rep.Problems))
}

// verifyJSONReport is verify.Report with the snake_case keys every
// --json of twasm uses.
type verifyJSONReport struct {
	SHA256     string        `json:"sha256"`
	Size       int           `json:"size"`
	ABIVersion string        `json:"abi_version,omitempty"`
	Imports    []funcJSON    `json:"imports"`
	Exports    []funcJSON    `json:"exports"`
	Manifest   *abi.Manifest `json:"manifest,omitempty"`
	Problems   []string      `json:"problems"`
	OK         bool          `json:"ok"`
}

type funcJSON struct {
	Module    string `json:"module,omitempty"`
	Name      string `json:"name"`
	Signature string `json:"signature"`
	Problem   string `json:"problem,omitempty"`
}

func verifyJSON(rep *verify.Report) verifyJSONReport {
	funcs := func(fs []verify.Func) []funcJSON {
		out := make([]funcJSON, 0, len(fs))
		for _, f := range fs {
			out = append(out, funcJSON(f))
		}
		return out
	}
	return verifyJSONReport{SHA256: rep.SHA256, Size: rep.Size, ABIVersion: rep.ABIVersion, Imports: funcs(rep.Imports),
		Exports: funcs(rep.Exports), Manifest: rep.Manifest, Problems: append([]string{}, rep.Problems...), OK: len(rep.Problems) == 0}
}
