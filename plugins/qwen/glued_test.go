//go:build !wasip1

package qwen_test

import (
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/qwen"
)

// TestGluedRecords: records written without the newline between them
// (`}{`, an append a killed process cut short: Qwen Code issues #3606 and
// #3681; its reader recovers them, jsonl-utils' recoverObjectsFromLine)
// are read each as a record, the call and its result too; what lies
// outside them is counted non_json, never silently lost.
func TestGluedRecords(t *testing.T) {
	prompt := chatRecord("u1", "user", `,"message":{"role":"user","parts":[{"text":"list {the} files"}]}`)
	call, result, answer := lsCall, lsResult, oneFile
	tests := []struct {
		name, in string
		unmapped int
	}{
		{"each on its line", prompt + "\n" + call + "\n" + result + "\n" + answer + "\n", 0},
		{"the call and its result glued", prompt + "\n" + call + result + "\n" + answer + "\n", 0},
		{"all glued", prompt + call + " " + result + answer + "\n", 0},
		{"a record cut short before the next", prompt + "\n" + call + "\n" + result + "\n" + `{"uuid":"x","type":"assis` + "\n" + answer + "\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, qwen.Plugin, []byte(tt.in), normalize.Options{Provider: "qwen"})
			texts, calls, input, output := o.Summary(plugintest.Assistant)
			if texts != "One file." || calls != 1 || input != 230 || output != 24 {
				t.Errorf("texts %q, %d calls, input %d, output %d; want \"One file.\", 1, 230, 24", texts, calls, input, output)
			}
			if st, _ := o.ResultStatus("c1"); st != "ok" {
				t.Errorf("c1's result %q, want ok", st)
			}
			n := 0
			for _, c := range o.Result.Unmapped {
				n += c
			}
			if n != tt.unmapped {
				t.Errorf("unmapped %v, want %d", o.Result.Unmapped, tt.unmapped)
			}
		})
	}
}
