//go:build !wasip1

package crush_test

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/crush"
)

// FuzzCrush: arbitrary bytes never make the plugin fault, through the
// host pipeline or the bare driver (sdktest.Fuzz).
func FuzzCrush(f *testing.F) {
	sdktest.Fuzz(f, crush.Plugin, sdktest.Options{Provider: "crush", Golden: goldenDir},
		[]byte(`{"$twasm":"row","table":"messages","key":"k","version":1,"row":{"role":"tool","parts":"[{\"type\":\"tool_result\",\"data\":{\"tool_call_id\":7,\"content\":null,\"is_error\":\"yes\"}}]","created_at":1e400,"is_summary_message":true}}`+"\n"),
		[]byte(`{"$twasm":"row","table":"messages","key":"k","version":1,"row":{"role":"assistant","parts":[{"type":"tool_call","data":{"id":null,"name":"bash","input":"{\"command\":[1]}"}},{"type":"finish","data":{"reason":7,"message":{}}},{"type":"shell_command","data":{"exit_code":"x"}}]}}`+"\n"),
		[]byte(`{"$twasm":"row","table":"sessions","key":"s","version":1,"row":{"id":null,"cost":"free","children_cost":1e308,"parent_session_id":{}}}`+"\n"),
	)
}
