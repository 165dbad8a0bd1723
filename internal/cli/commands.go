package cli

import (
	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	exportCmd "github.com/twasm/twasm/internal/cli/exportcmd"
	goldenCmd "github.com/twasm/twasm/internal/cli/goldencmd"
	importCmd "github.com/twasm/twasm/internal/cli/importcmd"
	lsCmd "github.com/twasm/twasm/internal/cli/ls"
	pluginsCmd "github.com/twasm/twasm/internal/cli/plugins"
	recordCmd "github.com/twasm/twasm/internal/cli/record"
	renormalizeCmd "github.com/twasm/twasm/internal/cli/renormalize"
	runCmd "github.com/twasm/twasm/internal/cli/runcmd"
	searchCmd "github.com/twasm/twasm/internal/cli/searchcmd"
	serveCmd "github.com/twasm/twasm/internal/cli/servecmd"
	statsCmd "github.com/twasm/twasm/internal/cli/stats"
	syncCmd "github.com/twasm/twasm/internal/cli/synccmd"
	tailCmd "github.com/twasm/twasm/internal/cli/tail"
	toolsCmd "github.com/twasm/twasm/internal/cli/tools"
	treeCmd "github.com/twasm/twasm/internal/cli/tree"
	usageCmd "github.com/twasm/twasm/internal/cli/usagecmd"
	validateCmd "github.com/twasm/twasm/internal/cli/validate"
	versionCmd "github.com/twasm/twasm/internal/cli/version"
	viewCmd "github.com/twasm/twasm/internal/cli/view"
	"github.com/twasm/twasm/internal/redact"
)

// addCommands registers every subcommand; a new command is one line here.
// cobra adds "help" and "completion" itself.
func addCommands(root *cobra.Command, f *cmdutil.Factory) {
	root.AddCommand(lsCmd.NewCmdLs(f, nil))
	root.AddCommand(validateCmd.NewCmdValidate(f, nil))
	root.AddCommand(treeCmd.NewCmdTree(f, nil))
	root.AddCommand(viewCmd.NewCmdView(f, nil))
	root.AddCommand(toolsCmd.NewCmdTools(f, nil))
	root.AddCommand(tailCmd.NewCmdTail(f, nil))
	root.AddCommand(statsCmd.NewCmdStats(f, nil))
	root.AddCommand(usageCmd.NewCmdUsage(f, nil))
	root.AddCommand(usageCmd.NewCmdPrices(f, nil))
	root.AddCommand(versionCmd.NewCmdVersion(f, nil))
	root.AddCommand(recordCmd.NewCmdRecord(f, nil))
	root.AddCommand(importCmd.NewCmdImport(f, nil))
	root.AddCommand(runCmd.NewCmdRun(f, nil, nil))
	root.AddCommand(pluginsCmd.NewCmdPlugins(f))
	root.AddCommand(goldenCmd.NewCmdGolden(f, nil))
	root.AddCommand(renormalizeCmd.NewCmdRenormalize(f, nil))
	root.AddCommand(syncCmd.NewCmdSync(f, nil))
	root.AddCommand(syncCmd.NewCmdDoctor(f, nil))
	root.AddCommand(exportCmd.NewCmdExport(f))
	root.AddCommand(searchCmd.NewCmdSearch(f, nil))
	root.AddCommand(searchCmd.NewCmdIndex(f, nil))
	root.AddCommand(serveCmd.NewCmdServe(f, nil))
	root.AddCommand(&cobra.Command{Use: "redact", Short: "What --redact masks, and what it does not", Long: redact.Help})
}
