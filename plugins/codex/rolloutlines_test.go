//go:build !wasip1

package codex_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/codex"
)

// rolloutEvent and rolloutItem make a rollout line of an event message
// or a response item payload.
func rolloutEvent(p string) string {
	return `{"timestamp":"t","type":"event_msg","payload":` + p + `}`
}

func rolloutItem(p string) string {
	return `{"timestamp":"t","type":"response_item","payload":` + p + `}`
}

// runRollout normalizes rollout lines natively with the codex plugin.
func runRollout(t *testing.T, lines []string) *plugintest.Outcome {
	t.Helper()
	return plugintest.Run(t, codex.Plugin, []byte(strings.Join(lines, "\n")+"\n"), normalize.Options{Provider: "codex"})
}
