//go:build !wasip1

package openai_test

import (
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/openai"
)

// TestImageGenerationResult: a generated image is the output of its
// image_generation call (the Responses API's ImageGenerationCall: result,
// base64) and the prompt the tool used its input, in a body and in a
// stream's output_item.done alike; a failed generation is an error.
func TestImageGenerationResult(t *testing.T) {
	const (
		done   = `{"id":"ig_1","type":"image_generation_call","status":"completed","revised_prompt":"a gray cat","result":"iVBORw0KGgo=","output_format":"png"}`
		failed = `{"id":"ig_2","type":"image_generation_call","status":"failed","result":null}`
	)
	body := func(item string) string {
		return `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5.1","output":[` + item + `]}`
	}
	stream := func(item string) string {
		return `{"type":"response.output_item.done","output_index":0,"item":` + item + `}` + "\n" +
			`{"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-5.1","output":[` + item + `]}}`
	}
	tests := []struct {
		name, in                      string
		input, output, status, errMsg string
	}{
		{"body, completed", body(done), `{"revised_prompt":"a gray cat"}`, "iVBORw0KGgo=", "ok", ""},
		{"stream, completed", stream(done), `{"revised_prompt":"a gray cat"}`, "iVBORw0KGgo=", "ok", ""},
		{"body, failed", body(failed), `{}`, "", "error", "the tool call failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, openai.Plugin, []byte(tt.in), normalize.Options{Provider: "openai"})
			calls, results := o.Tools()
			if len(calls) != 1 || len(results) != 1 {
				t.Fatalf("%d calls, %d results; want 1 each", len(calls), len(results))
			}
			if c := calls[0]; c.Name != "image_generation" || string(c.Input) != tt.input {
				t.Errorf("call %q input %s; want image_generation %s", c.Name, c.Input, tt.input)
			}
			if r := results[0]; r.Output != tt.output || r.Status != tt.status || r.Error != tt.errMsg {
				t.Errorf("result %q %q %q; want %q %q %q", r.Output, r.Status, r.Error, tt.output, tt.status, tt.errMsg)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
		})
	}
}

// TestAudioTranscript: a Chat Completions answer spoken (audio output:
// content null, message.audio {data, transcript}) is the transcript's
// text, in a body and a stream's audio deltas alike; before, the message
// had no block and the step no final text.
func TestAudioTranscript(t *testing.T) {
	const chunk = `data: {"id":"c2","object":"chat.completion.chunk","model":"gpt-4o-audio-preview","choices":[{"index":0,"delta":`
	tests := []struct{ name, in, want string }{
		{"body", `{"id":"c1","object":"chat.completion","model":"gpt-4o-audio-preview","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"audio":{"id":"audio_1","data":"UklGRg==","expires_at":1760003600,"transcript":"Yes, they are."}},"finish_reason":"stop"}]}`,
			"Yes, they are."},
		{"stream", chunk + `{"role":"assistant","content":null,"audio":{"id":"audio_2","transcript":"Hello"}},"finish_reason":null}]}` + "\n" +
			chunk + `{"audio":{"transcript":" there","data":"AAAA"}},"finish_reason":null}]}` + "\n" +
			chunk + `{"audio":{"expires_at":1760003600}},"finish_reason":"stop"}]}` + "\ndata: [DONE]\n",
			"Hello there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, openai.Plugin, []byte(tt.in), normalize.Options{Provider: "openai"})
			if o.Result.FinalText != tt.want || o.Result.Status != "ok" {
				t.Errorf("final text %q, status %q; want %q, ok", o.Result.FinalText, o.Result.Status, tt.want)
			}
			var texts []string
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Message() == nil {
					continue
				}
				for _, b := range it.Event.Message().Blocks {
					texts = append(texts, b.Text)
				}
			}
			if len(texts) != 1 || texts[0] != tt.want {
				t.Errorf("blocks' texts %q; want [%q]", texts, tt.want)
			}
		})
	}
}

// TestLocalShellCallOutputByID: a local_shell_call_output names its call
// by id (LocalShellCallOutput has no call_id), so the result a caller sent
// back is its call's, its exit code read from the JSON output; before,
// the result was lost and the call left dangling.
func TestLocalShellCallOutputByID(t *testing.T) {
	const call = `{"request":{"model":"gpt-5.1","input":[{"role":"user","content":"test"}]},"response":{"id":"resp_a","object":"response","status":"completed","model":"gpt-5.1","output":[{"id":"lsc_1","type":"local_shell_call","call_id":"call_ls1","status":"completed","action":{"type":"exec","command":["make","test"],"env":{}}}]}}`
	next := func(output string) string {
		return call + "\n" + `{"request":{"model":"gpt-5.1","previous_response_id":"resp_a","input":[{"type":"local_shell_call_output","id":"call_ls1","output":` + output + `,"status":"completed"}]},"response":{"id":"resp_b","object":"response","status":"completed","model":"gpt-5.1","output":[{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Done."}]}]}}`
	}
	tests := []struct {
		name, in, status string
		exit             int
	}{
		{"failed", next(`"{\"output\":\"FAIL\\n\",\"metadata\":{\"exit_code\":1}}"`), "error", 1},
		{"passed", next(`"{\"output\":\"ok\\n\",\"metadata\":{\"exit_code\":0}}"`), "ok", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, openai.Plugin, []byte(tt.in), normalize.Options{Provider: "openai"})
			calls, results := o.Tools()
			if len(calls) != 1 || len(results) != 1 {
				t.Fatalf("%d calls, %d results; want 1 each (dangling %v)", len(calls), len(results), o.Result.Dangling)
			}
			r := results[0]
			if r.CallID != "call_ls1" || r.Status != tt.status || r.ExitCode == nil || *r.ExitCode != tt.exit {
				t.Errorf("result %q %q exit %v; want call_ls1 %q exit %d", r.CallID, r.Status, r.ExitCode, tt.status, tt.exit)
			}
		})
	}
}
