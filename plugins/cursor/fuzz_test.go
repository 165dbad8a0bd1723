//go:build !wasip1

package cursor_test

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/cursor"
)

// FuzzCursor: arbitrary bytes never make the plugin fault, through the
// host pipeline or the bare driver (sdktest.Fuzz).
func FuzzCursor(f *testing.F) {
	sdktest.Fuzz(f, cursor.Plugin, sdktest.Options{Provider: "cursor", Golden: goldenDir},
		[]byte(`{"role":"user","message":{"content":[{"type":"text","text":"<timestamp>Monday, Feb 30, 2026, 25:61 PM (UTC+99:99)</timestamp><user_query></user_query></user_query><user_query>"}]}}`+"\n"),
		[]byte(`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"\n","input":null},{"type":"tool_result","content":[1,{}],"is_error":"yes"}]}}`+"\n"+`{"type":"turn_ended","status":7,"error":{}}`),
		[]byte(`{"$twasm":"source","name":".jsonl"}`+"\n"+`{"role":"system","message":{"content":"x"}}`),
		[]byte(`{"$twasm":"row","table":"bubble","key":"b","version":1,"row":{"value":{"type":2,"createdAt":1e400,"tokenCount":{"inputTokens":"x"},"toolFormerData":{"name":"run_terminal_cmd_v","rawArgs":"{","status":"completed","result":"{\"exitCode\":\"1\"}"}}}}`+"\n"+`{"$twasm":"row","table":"composer","key":"c","version":1,"row":{"value":{"conversation":[{"type":1,"text":7},null]}}}`),
	)
}
