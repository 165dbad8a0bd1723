package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/plugins/gemini"
)

// TestReassembledLinesAccounted checks spec §6.8 on the documents the
// SDK reassembles (sdk.Plugin.Reassemble: claude, gemini, and cline for
// Roo Code's CLI json): every line
// of a pretty-printed document, blank lines inside it and the lines of a
// document that does not parse included, is accounted for against its own
// line number, natively and through the bundled wasm module (twasm
// record). A count the SDK reported covered the lines ending at the
// current one: a blank line (never sent to the plugin) or the foreign
// line that cut the document shifted it, and line 1 was left silent.
func TestReassembledLinesAccounted(t *testing.T) {
	plugins := []struct {
		name string
		p    sdk.Plugin
		doc  string // a whole document of the provider, a blank line inside
	}{
		{"claude", claude.Plugin, "{\n  \"type\": \"result\",\n  \"subtype\": \"success\",\n\n  \"is_error\": false,\n  \"result\": \"hi\"\n}\n"},
		{"gemini", gemini.Plugin, "{\n  \"session_id\": \"s\",\n\n  \"response\": \"hi\"\n}\n"},
		{"cline", cline.Plugin, "{\n  \"type\": \"result\",\n  \"success\": true,\n\n  \"content\": \"hi\",\n  \"events\": []\n}\n"}, // Roo Code's CLI --output-format json
	}
	tests := []struct {
		name    string
		in      string // "" for the provider's document
		nonJSON int    // lines counted unmapped non_json
		exit    int    // of twasm record: 1 when the plugin understood no line
	}{
		{"broken document around a blank line", "{\n\n]", 2, 1},
		{"document cut by a JSON line", "{\n{\"type\":\"x\"}\n", 1, 1},
		{"document cut by a JSON line after a blank one", "{\n\n{\"type\":\"x\"}\n", 1, 1},
		{"document open at the end around a blank line", "{\n\n  \"a\": 1,\n", 2, 1},
		{"broken document after blank lines", "\n\n{\n  nope\n\n}\n", 3, 1},
		{"whole document with a blank line inside", "", 0, 0},
	}
	for _, pl := range plugins {
		for _, tt := range tests {
			in := tt.in
			if in == "" {
				in = pl.doc
			}
			t.Run(pl.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				native, err := sdktest.Run(context.Background(), pl.p, pl.name, []byte(in))
				require.NoError(t, err)
				assert.Zero(t, native.SilentN, "native: silent lines %v", native.Silent)
				assert.Equal(t, tt.nonJSON, native.Step.Unmapped["non_json"], "native: unmapped %v", native.Step.Unmapped)
				assert.Zero(t, native.Step.FailedLines)

				file := filepath.Join(t.TempDir(), "in.txt")
				require.NoError(t, os.WriteFile(file, []byte(in), 0o600))
				run, silent := recordInput(t, pl.name, file, tt.exit)
				assert.Zero(t, silent.N, "wasm: silent lines %v", silent.First)
				require.NotNil(t, run.result)
				assert.Equal(t, native.Step.Unmapped, run.result.Unmapped, "wasm and native count the same lines unmapped")
				assert.Equal(t, native.Step.Status, run.result.Status, "wasm and native agree on the status")
				assert.Zero(t, run.result.FailedLines)
			})
		}
	}
}
