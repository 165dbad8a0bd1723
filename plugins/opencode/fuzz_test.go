//go:build !wasip1

package opencode_test

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/opencode"
)

// FuzzOpenCode: arbitrary bytes never make the plugin fault, through the
// host pipeline or the bare driver (sdktest.Fuzz).
func FuzzOpenCode(f *testing.F) {
	sdktest.Fuzz(f, opencode.Plugin, sdktest.Options{Provider: "opencode", Golden: goldenDir},
		[]byte(`{"$twasm":"row","table":"part","key":"p","version":1,"row":{"message_id":"m","message":{"role":"assistant","error":{"name":7}},"data":{"type":"tool","state":{"status":"completed","input":[1],"metadata":{"exit":"x"}}}}}`+"\n"),
		[]byte(`{"$twasm":"row","table":"part","key":"p","version":1,"row":{"message_id":"m","data":{"type":"step-finish","tokens":{"input":1e400,"cache":[]},"cost":"free"}}}`+"\n"),
		[]byte(`{"type":"text","part":{"messageID":null,"type":"text","text":7}}`+"\n"+`{"type":"error","error":null}`),
		// The older file tree: a document that is no object, a part
		// naming no message, a message without an id, a file line last.
		[]byte(`{"$twasm":"file","path":"part/m/p.json","document":true}`+"\n"+`[1,2]`+"\n"+`{"$twasm":"file","path":"part/m/p.json"}`+"\n"+`{"id":"p","type":"text"}`+"\n"+
			`{"$twasm":"file","path":"message/s/m.json"}`+"\n"+`{"role":"user","time":{"created":"x"}}`+"\n"+`{"$twasm":"file","path":"session/x/s.json"}`),
	)
}
