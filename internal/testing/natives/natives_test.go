package natives

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryBundledPlugin: the list is exactly the directories
// plugins/<plugin>/ with a wasm entry point, in their order.
func TestEveryBundledPlugin(t *testing.T) {
	mains, err := filepath.Glob(filepath.Join("..", "..", "..", "plugins", "*", "wasm", "main.go"))
	require.NoError(t, err)
	require.NotEmpty(t, mains)
	var want []string
	for _, m := range mains {
		want = append(want, filepath.Base(filepath.Dir(filepath.Dir(m))))
	}
	var got []string
	for _, n := range Plugins() {
		got = append(got, n.Name)
		assert.NotEmpty(t, n.Plugin.Manifest.Providers, "%s: a plugin with no provider", n.Name)
	}
	assert.Equal(t, want, got, "natives.Plugins must list every bundled plugin (plugins/*/wasm/main.go), in order")
}

func TestForProvider(t *testing.T) {
	for _, c := range []struct {
		provider, plugin string
	}{
		{"claude", "claude"},
		{"roo", "cline"},
		{"kilocode", "cline"},
		{"aider", "aider"},
	} {
		p, ok := ForProvider(c.provider)
		require.True(t, ok, c.provider)
		var name string
		for _, n := range Plugins() {
			if n.Plugin.Manifest.Name == p.Manifest.Name {
				name = n.Name
			}
		}
		assert.Equal(t, c.plugin, name, c.provider)
	}
	_, ok := ForProvider("no-such-agent")
	assert.False(t, ok)
}

// TestNamed: Named finds each plugin by its directory's name, and panics
// on a name that is none.
func TestNamed(t *testing.T) {
	for _, n := range Plugins() {
		got := Named(n.Name)
		assert.Equal(t, n.Name, got.Name)
		assert.Equal(t, n.Plugin.Manifest.Name, got.Plugin.Manifest.Name)
	}
	assert.Panics(t, func() { Named("roo") }, "a provider name is not a plugin's directory")
	assert.Panics(t, func() { Named("no-such-agent") })
}
