package sdktest_test

import (
	"context"
	"flag"
	"fmt"
	"log"
	"strconv"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/abi/sdk/sdktest"
)

var update = flag.Bool("update", false, "rewrite testdata/myagent/golden/*.golden.jsonl")

// myPlugin is an author's plugin: every JSON line with a "text" is an
// assistant message, a line of another shape is counted unmapped.
var myPlugin = sdk.Plugin{
	Manifest: abi.Manifest{Name: "myagent", Version: "0.1.0", Providers: []string{"myagent"}, Formats: []string{"jsonl"}},
	New:      func(abi.BeginOptions) sdk.Normalizer { return &myNormalizer{} },
}

type myNormalizer struct{ n int }

func (m *myNormalizer) Line(l *sdk.Line, out *sdk.Out) error {
	text := l.JSON().Get("text")
	if text.Kind() != abi.KindString {
		out.Unmapped(sdk.S("other"))
		return nil
	}
	m.n++
	key := sdk.S(strconv.Itoa(m.n))
	out.Open(key, sdk.Message{})
	out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text)})
	out.Close(key, sdk.MessageEnd{})
	return nil
}

func (m *myNormalizer) End(out *sdk.Out) error {
	out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	return nil
}

// TestMyPlugin is what an author's test looks like: the golden cases
// and a capture (whose unmapped line capture.jsonl.unmapped.json
// explains) through every check.
func TestMyPlugin(t *testing.T) {
	sdktest.Test(t, myPlugin, sdktest.Options{
		Provider: "myagent",
		Golden:   "testdata/myagent/golden",
		Captures: []string{"testdata/myagent/capture.jsonl"},
		Update:   *update,
		Check: func(t *testing.T, r *sdktest.Result) {
			if r.Step.Status != "ok" {
				t.Errorf("status %s", r.Step.Status)
			}
		},
	})
}

// FuzzMyPlugin is the author's fuzz test, seeded with the golden inputs.
func FuzzMyPlugin(f *testing.F) {
	sdktest.Fuzz(f, myPlugin, sdktest.Options{Provider: "myagent", Golden: "testdata/myagent/golden"}, []byte("{\"text\":\"\x00\"}\n"))
}

// Run shows what the host makes of one input, for an author's own table
// tests; Test runs every check over a plugin's golden cases and
// captures (TestMyPlugin in this file).
func ExampleRun() {
	raw := []byte(`{"text":"hello"}` + "\nbanner\n" + `{"text":"bye"}` + "\n")
	r, err := sdktest.Run(context.Background(), myPlugin, "myagent", raw)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", r.Step.Status, "events:", len(r.Events), "unmapped:", r.Step.Unmapped, "silent lines:", r.SilentN)
	// Output:
	// status: ok events: 2 unmapped: map[other:1] silent lines: 0
}
