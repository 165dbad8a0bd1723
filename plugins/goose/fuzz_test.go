//go:build !wasip1

package goose_test

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/goose"
)

// FuzzGoose: arbitrary bytes never make the plugin fault, through the
// host pipeline or the bare driver (sdktest.Fuzz).
func FuzzGoose(f *testing.F) {
	sdktest.Fuzz(f, goose.Plugin, sdktest.Options{Provider: "goose", Golden: goldenDir},
		[]byte(`{"$twasm":"row","table":"messages","key":"k","version":1,"row":{"role":"assistant","content_json":[{"type":"toolRequest","id":7,"toolCall":{"status":"success","value":{"name":[1],"arguments":"x"}}},{"type":"toolResponse","id":null,"toolResult":{"status":"success","value":{"content":"no","isError":"yes"}}}],"created_timestamp":1e400}}`+"\n"),
		[]byte(`{"$twasm":"row","table":"sessions","key":"s","version":1,"row":{"model_config_json":"{\"model_name\":7}","accumulated_input_tokens":"x","accumulated_cost":"free","parent_session_id":{}}}`+"\n"),
		[]byte(`{"working_dir":null}`+"\n"+`{"role":"tool","content":[]}`+"\n"+`{"role":"user","content":[{"type":"toolResponse","toolResult":{"status":"error","error":{"code":-32603}}}]}`),
	)
}
