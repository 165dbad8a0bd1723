package transcript

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// outlineCases are lines for DecodeOutline: each must give what
// DecodeEvent gives (the same nil event and error, the same fields), and
// fast says whether the one pass reads it (true) or leaves it to
// DecodeEvent (false). want is "" for a line that decodes with no
// problem, else a part of the error or warning.
var outlineCases = []struct {
	name, line string
	fast       bool
	want       string
}{
	// Lines twasm writes, and variants DecodeEvent reads alike.
	{"user", `{"seq":3,"run_id":"r1","type":"message.user","path":"agent","timestamp":"2026-01-02T03:04:05.678Z","payload":{"role":"user","blocks":[{"type":"text","fidelity":"router","text":"fix \"it\"\n"}]}}`, true, ""},
	{"assistant", `{"seq":4,"run_id":"r1","type":"message.assistant","path":"agent","iteration":2,"timestamp":"2026-01-02T03:04:05Z","payload":{"role":"assistant","model":"m","id":"x","stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":-2,"cache_read_tokens":null},"raw_line":7,"blocks":[{"type":"thinking","thinking":"t","redacted":false},{"type":"tool_use","tool_id":"c1","tool_name":"Bash","tool_input":{"command":"ls","n":[1,2.5e-3,true,null]},"fidelity":"agent_emitted"},{"type":"tool_result","tool_content":"ok","is_error":true},{"type":"command","command":"ls"},{"type":"stream","chunk":"x","origin":"prompt","x-extra":{"a":[]}}]}}`, true, ""},
	{"tool call", `{"seq":5,"run_id":"r1","type":"tool.call","path":"agent","timestamp":"2026-01-02T03:04:05+01:00","payload":{"name":"Bash","call_id":"c1","kind":"execute","command":"ls","input":{"command":"ls"},"fidelity":"agent_emitted","raw_line":3}}`, true, ""},
	{"tool result", `{"seq":6,"run_id":"r1","type":"tool.result","path":"agent","payload":{"name":"Bash","call_id":"c1","output":"a\u0000b","error":"","exit_code":-1,"status":"error"}}`, true, ""},
	{"payload before type", `{"payload":{"call_id":"c2","fidelity":"router"},"seq":7,"type":"tool.call"}`, true, ""},
	{"white space", " \t{ \"seq\" : 8 ,\r\n\"type\" :\"message.user\" , \"payload\" : { \"blocks\" : [ { \"type\" : \"text\" } , {\"type\":\"text\"} ] } } \t", true, ""},
	{"nulls", `{"seq":null,"run_id":null,"parent_run_id":null,"child_run_id":null,"type":"tool.result","path":null,"iteration":null,"timestamp":null,"payload":{"call_id":null,"exit_code":null,"input":null,"raw_line":null}}`, true, ""},
	{"null payload", `{"type":"message.assistant","payload":null}`, true, ""},
	{"no payload", `{"type":"tool.call"}`, true, ""},
	{"null and empty blocks", `{"type":"message.user","payload":{"blocks":null,"usage":null}}`, true, ""},
	{"empty blocks", `{"type":"message.user","payload":{"blocks":[]}}`, true, ""},
	{"escaped values", `{"type":"tool.call","run_id":"r\u0031","path":"a\/b","payload":{"call_id":"c\udc80\ud83d\ude00\t","fidelity":"rout\u0065r"}}`, true, ""},
	{"raw bytes", "{\"type\":\"tool.call\",\"path\":\"\xff\xfe\",\"payload\":{\"call_id\":\"\xed\xa0\x80\",\"output\":\"\x7f\"}}", true, ""},
	{"keys of another case", `{"Seq":"x","TYPE":5,"type":"message.user","Payload":1,"payload":{"Blocks":7}}`, true, ""},
	{"unknown fields", `{"type":"message.user","x":{"a":[{},[],-0,0.5,1E+2,"s"]},"y":false,"payload":{"z":[[[]]],"blocks":[{"type":"text","w":null}]}}`, true, ""},
	{"big numbers", `{"seq":18446744073709551615,"iteration":-9223372036854775808,"type":"tool.call","payload":{"exit_code":9223372036854775807}}`, true, ""},
	{"empty strings", `{"run_id":"","path":"","timestamp":"","type":"tool.call","payload":{"call_id":"","fidelity":""}}`, true, ""},
	{"unknown fidelity", `{"type":"message.user","payload":{"blocks":[{"type":"text","fidelity":"other"}]}}`, true, ""},

	// Lines DecodeEvent reads with no problem that the one pass leaves
	// to it.
	{"run started", `{"seq":1,"run_id":"r1","type":"run.started","payload":{"name":"wf","kind":"workflow","source":{"x":1}}}`, false, ""},
	{"step", `{"seq":2,"run_id":"r1","child_run_id":"r2","type":"step.call_workflow.started","path":"a","payload":{"name":"a"}}`, false, ""},
	{"escaped key", `{"typ\u0065":"message.user","payload":{}}`, false, ""},
	{"escaped unknown key", `{"type":"message.user","\u0078":1}`, false, ""},
	{"repeated field", `{"seq":1,"seq":2,"type":"tool.call"}`, false, ""},
	{"repeated payload field", `{"type":"tool.call","payload":{"call_id":"a","call_id":"b"}}`, false, ""},
	{"repeated block field", `{"type":"message.user","payload":{"blocks":[{"type":"text","text":"a","text":"b"}]}}`, false, ""},
	{"usage of another kind", `{"type":"message.assistant","payload":{"usage":{"note":"x","cost":1.5}}}`, false, ""},
	{"escaped type", `{"type":"tool.cal\u006c"}`, false, ""},
	{"deep", `{"type":"tool.call","x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, false, ""},

	// Warnings: the event is kept, with DecodeEvent's warnings.
	{"unknown type", `{"seq":1,"type":"run.paused","payload":{"a":1}}`, false, `unknown event type "run.paused"`},
	{"unknown block type", `{"type":"message.user","payload":{"blocks":[{"type":"text"},{"type":"image"}]}}`, false, `unknown block type "image" (block 1)`},
	{"null block", `{"type":"message.user","payload":{"blocks":[null]}}`, false, `unknown block type "" (block 0)`},
	{"block without type", `{"type":"message.user","payload":{"blocks":[{"text":"a"}]}}`, false, `unknown block type ""`},

	// Lines that are not events: no event, DecodeEvent's error.
	{"not json", `not json`, false, "malformed"},
	{"empty", ``, false, "malformed"},
	{"null", `null`, false, "not a JSON object"},
	{"array", `[]`, false, "malformed"},
	{"no type", `{"seq":1}`, false, "missing type"},
	{"empty type", `{"type":""}`, false, "missing type"},
	{"null type", `{"type":null}`, false, "missing type"},
	{"cut", `{"type":"tool.call","payload":{"call_id":"c"`, false, "malformed"},
	{"trailing data", `{"type":"tool.call"} x`, false, "malformed"},
	{"two objects", `{"type":"tool.call"}{}`, false, "malformed"},
	{"trailing comma", `{"type":"tool.call",}`, false, "malformed"},
	{"leading zero", `{"type":"tool.call","x":01}`, false, "malformed"},
	{"bare minus", `{"type":"tool.call","x":-}`, false, "malformed"},
	{"dot without digits", `{"type":"tool.call","x":1.}`, false, "malformed"},
	{"bad exponent", `{"type":"tool.call","x":1e}`, false, "malformed"},
	{"bad literal", `{"type":"tool.call","x":tru}`, false, "malformed"},
	{"single quotes", `{'type':"tool.call"}`, false, "malformed"},
	{"control character", "{\"type\":\"tool.call\",\"path\":\"a\tb\"}", false, "malformed"},
	{"bad escape", `{"type":"tool.call","path":"a\xb"}`, false, "malformed"},
	{"short unicode escape", `{"type":"tool.call","path":"\u12"}`, false, "malformed"},
	{"seq string", `{"seq":"1","type":"tool.call"}`, false, "field seq"},
	{"seq negative", `{"seq":-1,"type":"tool.call"}`, false, "field seq"},
	{"seq fraction", `{"seq":1.5,"type":"tool.call"}`, false, "field seq"},
	{"seq exponent", `{"seq":1e2,"type":"tool.call"}`, false, "field seq"},
	{"seq too big", `{"seq":18446744073709551616,"type":"tool.call"}`, false, "field seq"},
	{"iteration too big", `{"iteration":9223372036854775808,"type":"tool.call"}`, false, "field iteration"},
	{"iteration bool", `{"iteration":true,"type":"tool.call"}`, false, "field iteration"},
	{"run id number", `{"run_id":1,"type":"tool.call"}`, false, "field run_id"},
	{"path object", `{"path":{},"type":"tool.call"}`, false, "field path"},
	{"type number", `{"type":5}`, false, "field type"},
	{"bad timestamp", `{"type":"tool.call","timestamp":"yesterday"}`, false, "timestamp"},
	{"payload number", `{"type":"tool.call","payload":5}`, false, "payload"},
	{"payload string", `{"type":"message.user","payload":"x"}`, false, "payload"},
	{"payload array", `{"payload":[],"type":"message.user"}`, false, "payload"},
	{"call id number", `{"type":"tool.call","payload":{"call_id":1}}`, false, "field call_id"},
	{"fidelity array", `{"type":"tool.call","payload":{"fidelity":[]}}`, false, "field fidelity"},
	{"output bool", `{"type":"tool.result","payload":{"output":false}}`, false, "field output"},
	{"exit code string", `{"type":"tool.result","payload":{"exit_code":"1"}}`, false, "field exit_code"},
	{"exit code fraction", `{"type":"tool.result","payload":{"exit_code":1.5}}`, false, "field exit_code"},
	{"raw line too big", `{"type":"tool.result","payload":{"raw_line":99999999999999999999}}`, false, "field raw_line"},
	{"role number", `{"type":"message.user","payload":{"role":1}}`, false, "field role"},
	{"blocks object", `{"type":"message.user","payload":{"blocks":{}}}`, false, "field blocks"},
	{"block number", `{"type":"message.user","payload":{"blocks":[5]}}`, false, "block 0"},
	{"block text number", `{"type":"message.user","payload":{"blocks":[{"type":"text"},{"type":"text","text":5}]}}`, false, "block 1"},
	{"block type number", `{"type":"message.user","payload":{"blocks":[{"type":1}]}}`, false, "field type"},
	{"redacted string", `{"type":"message.user","payload":{"blocks":[{"type":"thinking","redacted":"yes"}]}}`, false, "field redacted"},
	{"is error number", `{"type":"message.user","payload":{"blocks":[{"type":"tool_result","is_error":1}]}}`, false, "field is_error"},
	{"usage string", `{"type":"message.assistant","payload":{"usage":"x"}}`, false, "field usage"},
	{"usage figure string", `{"type":"message.assistant","payload":{"usage":{"input_tokens":"5"}}}`, false, "field usage"},
	{"usage figure fraction", `{"type":"message.assistant","payload":{"usage":{"output_tokens":1.5}}}`, false, "field usage"},
	{"bad line after a good type", `{"type":"tool.call","seq":"x"}`, false, "field seq"},
}

func TestDecodeOutline(t *testing.T) {
	for _, c := range outlineCases {
		t.Run(c.name, func(t *testing.T) {
			line := []byte(c.line)
			checkOutline(t, line)
			_, fast := decodeOutline(line)
			if fast != c.fast {
				t.Errorf("read in one pass: %v, want %v", fast, c.fast)
			}
			_, err := DecodeOutline(line)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// checkOutline asserts that DecodeOutline gives for line what
// DecodeEvent gives: no event exactly when it gives none, the same
// error or warnings, and its event's fields that the outline keeps.
func checkOutline(t *testing.T, line []byte) {
	t.Helper()
	full, ferr := DecodeEvent(line)
	out, oerr := DecodeOutline(line)
	if (full == nil) != (out == nil) || fmt.Sprint(ferr) != fmt.Sprint(oerr) {
		t.Fatalf("line %q:\nDecodeEvent  %v, %v\nDecodeOutline %v, %v", line, full != nil, ferr, out != nil, oerr)
	}
	if full == nil {
		return
	}
	want := outlineOf(full)
	if !want.Timestamp.Equal(out.Timestamp) || want.Timestamp.Location().String() != out.Timestamp.Location().String() {
		t.Fatalf("line %q: timestamp %v, want %v", line, out.Timestamp, want.Timestamp)
	}
	w, o := *want, *out
	w.Timestamp = o.Timestamp
	if !reflect.DeepEqual(w, o) {
		t.Fatalf("line %q:\noutline  %#v %#v\nwant     %#v %#v", line, o, o.Payload, w, w.Payload)
	}
	if _, fast := decodeOutline(line); fast && ferr != nil {
		t.Fatalf("line %q read in one pass, but DecodeEvent says %v", line, ferr)
	}
}

// TestReaderOutline reads the same file with and without
// ReaderOptions.Outline: the same lines give events, with the same
// problems (a line too long, a torn tail), and the same outlines.
func TestReaderOutline(t *testing.T) {
	var b bytes.Buffer
	for _, c := range outlineCases {
		b.WriteString(c.line + "\n")
	}
	b.WriteString("\n  \r\n" + `{"type":"tool.call","payload":{"call_id":"` + strings.Repeat("x", 600) + `"}}` + "\n")
	b.WriteString(`{"type":"tool.result","payload":{"call_id":"c"}}`) // a torn tail that decodes
	data := b.Bytes()
	for _, tail := range []string{"", `{"type":"tool.res`} {
		in := append(bytes.Clone(data), tail...)
		full := NewReader(bytes.NewReader(in), ReaderOptions{MaxLineSize: 512, BufferSize: 64})
		out := NewReader(bytes.NewReader(in), ReaderOptions{MaxLineSize: 512, BufferSize: 64, Outline: true})
		n, events := 0, 0
		for full.Next() {
			n++
			if !out.Next() {
				t.Fatalf("line %d: the outline reader ended first", n)
			}
			if fmt.Sprint(full.Problems()) != fmt.Sprint(out.Problems()) {
				t.Fatalf("line %d: problems %v, want %v", n, out.Problems(), full.Problems())
			}
			if (full.Event() == nil) != (out.Event() == nil) {
				t.Fatalf("line %d: event %v, want %v", n, out.Event() != nil, full.Event() != nil)
			}
			if full.Event() != nil {
				events++
				if w, o := outlineOf(full.Event()), out.Event(); !reflect.DeepEqual(w.Payload, o.Payload) || w.Seq != o.Seq || w.Type != o.Type {
					t.Fatalf("line %d: outline %#v, want %#v", n, o, w)
				}
			}
		}
		if out.Next() || full.Err() != nil || out.Err() != nil {
			t.Fatalf("the outline reader went on, or an error: %v %v", full.Err(), out.Err())
		}
		if events < 30 || n != len(outlineCases)+2 {
			t.Fatalf("%d lines, %d events: the cases were not all read", n, events)
		}
	}
}

func FuzzDecodeOutline(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	for _, c := range outlineCases {
		f.Add([]byte(c.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkOutline(t, line)
	})
}
