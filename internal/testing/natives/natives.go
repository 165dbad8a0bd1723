package natives

import (
	"slices"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/plugins/aider"
	"github.com/twasm/twasm/plugins/amp"
	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/plugins/codex"
	"github.com/twasm/twasm/plugins/copilot"
	"github.com/twasm/twasm/plugins/crush"
	"github.com/twasm/twasm/plugins/cursor"
	"github.com/twasm/twasm/plugins/droid"
	"github.com/twasm/twasm/plugins/gemini"
	"github.com/twasm/twasm/plugins/goose"
	"github.com/twasm/twasm/plugins/kimi"
	"github.com/twasm/twasm/plugins/openai"
	"github.com/twasm/twasm/plugins/opencode"
	"github.com/twasm/twasm/plugins/pi"
	"github.com/twasm/twasm/plugins/qwen"
)

// Native is one bundled plugin: its directory name under plugins/ (the
// name of its bundled module, <plugin>.wasm) and its native build.
type Native struct {
	Name   string
	Plugin sdk.Plugin
}

// Plugins returns every bundled plugin, in the order of plugins/'s
// listing.
func Plugins() []Native {
	return []Native{
		{"aider", aider.Plugin},
		{"amp", amp.Plugin},
		{"claude", claude.Plugin},
		{"cline", cline.Plugin},
		{"codex", codex.Plugin},
		{"copilot", copilot.Plugin},
		{"crush", crush.Plugin},
		{"cursor", cursor.Plugin},
		{"droid", droid.Plugin},
		{"gemini", gemini.Plugin},
		{"goose", goose.Plugin},
		{"kimi", kimi.Plugin},
		{"openai", openai.Plugin},
		{"opencode", opencode.Plugin},
		{"pi", pi.Plugin},
		{"qwen", qwen.Plugin},
	}
}

// Named returns the bundled plugin whose directory under plugins/ is
// name, for a test table whose rows name their plugin once. It panics
// when there is none: a row naming no bundled plugin is a mistake of the
// table, found when its package's tests start.
func Named(name string) Native {
	for _, n := range Plugins() {
		if n.Name == name {
			return n
		}
	}
	panic("natives: no bundled plugin " + name)
}

// ForProvider returns the bundled plugin whose manifest accepts
// provider, and false when none does.
func ForProvider(provider string) (sdk.Plugin, bool) {
	for _, n := range Plugins() {
		if slices.Contains(n.Plugin.Manifest.Providers, provider) {
			return n.Plugin, true
		}
	}
	return sdk.Plugin{}, false
}
