//go:build !wasip1

package aider_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestErrorReports: what Aider prints with an error it gives up on is the
// error's report, not the session going on after it. check_and_open_urls
// offers to open the error's documentation URL ("Open URL for more info?",
// io.offer_url's own question): before, that offer was a tool call, so a
// session ending on an error read as answered (status ok). An exception
// Aider caught while sending the message (base_coder.py send_message)
// is printed as a traceback, then str(err): before, no error at all (ok,
// or incomplete when the file ends in the traceback); now the exception
// is a provider error, its class the code. A traceback after a litellm
// error is that error's (its cause's), no second error; the offer of a
// model warning's documentation ("Open documentation url for more
// info?") stays a confirmation. Lines as a real history of Aider v0.86.2
// wrote them (Asphyksia/OpenCoder's, kept in testdata/captures/aider).
func TestErrorReports(t *testing.T) {
	const (
		offer = "> Open URL for more info? (Y)es/(N)o/(D)on't ask again [Yes]: y  "
		add   = "> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: y  "
	)
	badRequest := []string{
		"> litellm.BadRequestError: LLM Provider NOT provided. Pass in the LLM provider you are trying to call. You passed model=Qwen/Qwen3-Coder  ",
		"> Pass model as E.g. For 'Huggingface' inference endpoints pass in `completion(model='huggingface/starcoder',..)` Learn more: https://docs.litellm.ai/docs/providers  ",
		"> https://docs.litellm.ai/docs/providers  ",
	}
	trace := func(last ...string) []string {
		return append([]string{
			"> Traceback (most recent call last):  ",
			`> File "/home/u/.venv/lib/python3.12/site-packages/aider/coders/base_coder.py", line 1459, in send_message  `,
			"> yield from self.send(messages, functions=self.functions)  ",
			"> raise OpenGPUPatchError(f\"OpenGPU error {response.status_code}: {error_text}\")  ",
		}, last...)
	}
	join := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	answered := []string{"#### que eres capaz de hacer?  ", "", "Please add these files to the chat.", "", "> Tokens: 1.6k sent, 81 received.  ", "> a.ts  ", add}
	tests := []struct {
		name, status string
		lines        []string
		errors       []string // code: message
		confirms     int
	}{
		{"an error, its URL offered", "error", join([]string{"#### Hello  "}, badRequest, []string{offer}), []string{"BadRequestError: LLM Provider NOT provided. Pass in the LLM provider you are trying to call. You passed model=Qwen/Qwen3-Coder"}, 0},
		{"an error, then an answered prompt", "ok", join([]string{"#### Hello  "}, badRequest, []string{offer, "", "#### again  ", "", "Hi.", "", "> Tokens: 1.0k sent, 5 received.  "}), []string{"BadRequestError: LLM Provider NOT provided. Pass in the LLM provider you are trying to call. You passed model=Qwen/Qwen3-Coder"}, 0},
		{"a traceback and str(err) after a confirmation", "error", join(answered, trace("> litellm_patch.OpenGPUPatchError: OpenGPU error 500: Internal Server Error  ", "> OpenGPU error 500: Internal Server Error  ")), []string{"OpenGPUPatchError: OpenGPU error 500: Internal Server Error"}, 1},
		{"a traceback the file ends in", "error", join([]string{"#### print('hello')  ", "> Repo-map can't include /p/calculator.py  "}, trace(`> litellm_patch.OpenGPUPatchError: OpenGPU error 403: {"detail":"Your tier does not have access"}  `)), []string{`OpenGPUPatchError: OpenGPU error 403: {"detail":"Your tier does not have access"}`}, 0},
		{"a litellm error's cause printed after it", "error", []string{"#### Hello  ",
			"> litellm.APIConnectionError: Error parsing chunk: Expecting value: line 1 column 1 (char 0),  ",
			"> Traceback (most recent call last):  ", "> return self.chunk_parser(json.loads(str_line))  ",
			"> json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)  ",
			"> RuntimeError: Error parsing chunk: Expecting value: line 1 column 1 (char 0),  "},
			[]string{"APIConnectionError: Error parsing chunk: Expecting value: line 1 column 1 (char 0),"}, 0},
		{"a model warning's documentation offered: a confirmation", "ok", []string{"> Warning for Qwen/Qwen3-Coder: Unknown context window size and costs, using sane defaults.  ",
			"> Open documentation url for more info? (Y)es/(N)o/(D)on't ask again [Yes]: y  ", "", "#### hi  ", "", "Hi.", "", "> Tokens: 1.0k sent, 5 received.  "}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSession(t, "2026-02-28 22:05:16", tt.lines...)
			var errs []string
			for _, e := range r.Step.Errors {
				errs = append(errs, e.Code+": "+e.Message)
			}
			confirms := 0
			for _, e := range r.Events {
				if p := e.Event.Tool(); p != nil && e.Event.Type == transcript.ToolCall && p.Name == "confirm" {
					confirms++
				}
			}
			if r.Step.Status != tt.status || strings.Join(errs, "|") != strings.Join(tt.errors, "|") || confirms != tt.confirms {
				t.Errorf("status %q errors %q confirms %d; want %q %q %d", r.Step.Status, errs, confirms, tt.status, tt.errors, tt.confirms)
			}
		})
	}
}
