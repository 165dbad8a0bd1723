package detect

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// SampleLines is how many non-blank lines Detect looks at.
const SampleLines = 50

// Result is a detection.
type Result struct {
	Provider string
	Format   string
	// Reason says what decided it, for the user.
	Reason string
}

// ErrUnknown is wrapped when nothing recognisable was found, ErrAmbiguous
// when the sample matches several providers.
var (
	ErrUnknown   = errors.New("cannot tell which provider wrote this")
	ErrAmbiguous = errors.New("ambiguous provider")
)

type vote struct {
	provider, format, reason string
}

// Detect guesses provider and format from the start of a file.
func Detect(sample []byte) (Result, error) {
	trimmed := bytes.TrimSpace(sample)
	if len(trimmed) == 0 {
		return Result{}, fmt.Errorf("%w: the input is empty", ErrUnknown)
	}
	var votes []vote
	// A whole document (pretty-printed JSON or a JSON array) first.
	if doc, ok := wholeDoc(trimmed); ok {
		if v, ok := classifyDoc(doc.Root()); ok {
			votes = append(votes, v)
		}
	} else if i := bytes.Index(trimmed, []byte("\n{")); i > 0 && !bytes.Contains(trimmed[:i], []byte("{")) {
		// A document after a banner the CLI printed first (Gemini CLI's
		// deprecation notice before its --output-format json).
		if doc, ok := wholeDoc(bytes.TrimSpace(trimmed[i:])); ok {
			if v, ok := classifyDoc(doc.Root()); ok {
				votes = append(votes, v)
			}
		}
	}
	if len(votes) == 0 {
		// A Cline task's document too long for the sample to hold whole.
		if v, ok := clinePrefix(trimmed); ok {
			votes = append(votes, v)
		}
	}
	if len(votes) == 0 {
		// A session export too long for the sample to hold whole.
		if v, ok := exportPrefix(trimmed); ok {
			votes = append(votes, v)
		}
	}
	if len(votes) == 0 {
		// An Aider chat history: markdown, not JSON.
		if v, ok := aiderHistory(sample); ok {
			votes = append(votes, v)
		}
	}
	sawJSON := false
	if len(votes) == 0 {
		n := 0
		for _, line := range bytes.Split(sample, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			if n++; n > SampleLines {
				break
			}
			if bytes.HasPrefix(line, []byte("event:")) {
				continue
			}
			toks, ok := wire.BuildTape(nil, line)
			if !ok {
				continue
			}
			sawJSON = true
			doc := &abi.Doc{Line: line, Toks: toks}
			if v, ok := classifyLine(doc.Root(), bytes.HasPrefix(line, []byte("data:"))); ok {
				votes = append(votes, v)
			}
		}
	}
	if len(votes) == 0 && !sawJSON && trimmed[0] != '{' && trimmed[0] != '[' {
		return Result{}, fmt.Errorf("%w: the input is text, no line of the first %d is JSON (its first line: %q); "+
			"a failed run of some agent CLIs writes only its error as text (kimi --print --output-format stream-json when the first model call fails), "+
			"which does not say which CLI wrote it: pass --provider", ErrUnknown, SampleLines, firstLine(trimmed))
	}
	if len(votes) == 0 {
		return Result{}, fmt.Errorf("%w: no line of the first %d looks like the output of a known agent CLI or API", ErrUnknown, SampleLines)
	}
	votes = qwenHeadless(votes)
	byProvider := map[string]vote{}
	for _, v := range votes {
		if _, seen := byProvider[v.provider]; !seen {
			byProvider[v.provider] = v
		}
	}
	if len(byProvider) > 1 {
		var parts []string
		for p, v := range byProvider {
			parts = append(parts, fmt.Sprintf("%s (%s)", p, v.reason))
		}
		sort.Strings(parts)
		return Result{}, fmt.Errorf("%w: the sample matches %s; pass --provider", ErrAmbiguous, strings.Join(parts, " and "))
	}
	v := votes[0]
	return Result{Provider: v.provider, Format: v.format, Reason: v.reason}, nil
}

// firstLine is b's first line, clipped to 120 bytes.
func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	b = bytes.TrimSpace(b)
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}

// aiderHistory recognises an Aider chat history
// (.aider.chat.history.md): a line "# aider chat started at " among the
// first SampleLines non-blank lines.
// qwenHeadlessReason is the reason of a vote for Qwen Code's headless
// output.
const qwenHeadlessReason = "qwen -p --output-format stream-json (Claude Code's record types; the init names qwen_code_version)"

// qwenHeadless drops the votes for Claude Code's stream-json when the
// sample holds Qwen Code's headless init: Qwen Code's qwen -p
// --output-format stream-json writes Claude Code's record types
// (packages/cli/src/nonInteractive), so its other records vote for
// Claude; its init alone names qwen_code_version.
func qwenHeadless(votes []vote) []vote {
	qwen := false
	for _, v := range votes {
		if v.provider == "qwen" && v.reason == qwenHeadlessReason {
			qwen = true
		}
	}
	if !qwen {
		return votes
	}
	kept := votes[:0]
	for _, v := range votes {
		if v.provider != "claude" || v.format != "stream-json" {
			kept = append(kept, v)
		}
	}
	return kept
}

func aiderHistory(sample []byte) (vote, bool) {
	n := 0
	for _, line := range bytes.Split(sample, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if n++; n > SampleLines {
			break
		}
		if bytes.HasPrefix(line, []byte("# aider chat started at ")) {
			return vote{"aider", "chat-history", "an Aider chat history (# aider chat started at ...)"}, true
		}
	}
	return vote{}, false
}

func wholeDoc(b []byte) (*abi.Doc, bool) {
	if b[0] != '{' && b[0] != '[' {
		return nil, false
	}
	toks, ok := wire.BuildTape(nil, b)
	if !ok {
		return nil, false
	}
	// A one-line JSONL file is also a whole document; classifyDoc only
	// claims shapes that are documents, not stream lines.
	return &abi.Doc{Line: b, Toks: toks}, true
}

func has(v abi.Value, keys ...string) bool {
	for _, k := range keys {
		if !v.Get(k).Exists() {
			return false
		}
	}
	return true
}

// classifyDoc recognises whole-document formats.
func classifyDoc(root abi.Value) (vote, bool) {
	switch root.Kind() {
	case abi.KindArray:
		first := root.Index(0)
		if first.Get("type").Is("system") && first.Get("qwen_code_version").Exists() {
			return vote{"qwen", "stream-json", "qwen -p --output-format json (a JSON array of messages whose init names qwen_code_version)"}, true
		}
		if first.Get("type").Is("system") || first.Get("type").Is("assistant") || first.Get("type").Is("result") {
			return vote{"claude", "json", "a JSON array of Claude Code stream records (--output-format json with --verbose)"}, true
		}
		if v, ok := clineDoc(root); ok {
			return v, true
		}
	case abi.KindObject:
		switch {
		case has(root, "sessionId", "messages") && (root.Get("projectHash").Exists() || root.Get("startTime").Exists()):
			return vote{"gemini", "session-file", "a Gemini CLI chat session file (sessionId, projectHash, messages)"}, true
		case root.Get("messages").Kind() == abi.KindArray && root.Get("metadata").Get("status").Kind() == abi.KindString &&
			root.Get("messages").Index(0).Get("created").Kind() == abi.KindNumber:
			return vote{"goose", "json", "goose run --output-format json (messages with their created time, metadata with the run's status)"}, true
		case root.Get("working_dir").Exists() && has(root, "id", "conversation") && (root.Get("conversation").Kind() == abi.KindArray || root.Get("conversation").Kind() == abi.KindNull):
			return vote{"goose", "export", "goose session export --format json (a session with working_dir and conversation)"}, true
		case root.Get("messages").Kind() == abi.KindArray && strings.HasPrefix(root.Get("info").Get("id").String(), "ses_"):
			return vote{"opencode", "export", "opencode export output (info of a session ses_…, messages)"}, true
		case root.Get("messages").Kind() == abi.KindArray && (strings.HasPrefix(root.Get("id").String(), "T-") || has(root, "v", "created")):
			return vote{"amp", "thread", "an Amp thread document (id T-…, messages)"}, true
		case has(root, "session_id", "response", "stats"):
			return vote{"gemini", "json", "Gemini CLI --output-format json (session_id, response, stats)"}, true
		case has(root, "session_id", "error") && root.Get("error").Get("code").Kind() == abi.KindNumber && !root.Get("type").Exists():
			return vote{"gemini", "json", "Gemini CLI --output-format json, a failed run (session_id, error.code)"}, true
		case root.Get("type").Is("result") && root.Get("events").Kind() == abi.KindArray && has(root, "success"):
			return vote{"roo", "roo-json", "Roo Code CLI --output-format json (a result holding its events)"}, true
		case root.Get("type").Is("result") && has(root, "session_id", "subtype") && !claudeResult(root):
			return vote{"droid", "json", "a Factory Droid result object (droid exec --output-format json: no API time, cost or usage, which Claude Code's states)"}, true
		case root.Get("type").Is("result") && has(root, "session_id", "subtype"):
			return vote{"claude", "json", "a Claude Code result object (--output-format json)"}, true
		case root.Get("object").Is("chat.completion"):
			return vote{"openai", "chat-completion", "an OpenAI Chat Completions response"}, true
		case root.Get("object").Is("text_completion"):
			return vote{"openai", "completion", "an OpenAI (legacy) Completions response (text_completion)"}, true
		case root.Get("object").Is("response"):
			return vote{"openai", "responses", "an OpenAI Responses API response"}, true
		case strings.HasPrefix(root.Get("object").String(), "response.") && (root.Get("output").Kind() == abi.KindArray || root.Get("usage").Kind() == abi.KindObject):
			// Another object of the Responses API (the /responses/compact
			// body, response.compaction): its output items and usage are
			// a response's.
			return vote{"openai", "responses", "an OpenAI Responses API object (" + root.Get("object").String() + ")"}, true
		case root.Get("type").Is("message") && root.Get("role").Is("assistant") && root.Get("content").Kind() == abi.KindArray:
			return vote{"anthropic", "anthropic-messages", "an Anthropic Messages API response"}, true
		}
		if v, ok := apiErrorBody(root); ok {
			return v, true
		}
	}
	return vote{}, false
}

// openAIExchange says whether v is the response of an exchange logged
// one a line: a Chat Completions or Responses object, or an OpenAI Batch
// output line's {"status_code", "body"}.
func openAIExchange(v abi.Value) bool {
	if v.Get("status_code").Exists() {
		v = v.Get("body")
	}
	return v.Get("object").Is("chat.completion") || v.Get("object").Is("response") || v.Get("error").Kind() == abi.KindObject
}

// openAIChatRequest says whether root is a Chat Completions request
// (model, messages) in a shape only OpenAI's API takes: a message with
// tool_calls, or of role tool or developer. Anthropic's requests have
// model and messages too, with none of these.
func openAIChatRequest(root abi.Value) bool {
	msgs := root.Get("messages")
	if !root.Get("model").Exists() || msgs.Kind() != abi.KindArray {
		return false
	}
	it := msgs.Iter()
	for it.Next() {
		m := it.Value()
		if m.Get("tool_calls").Exists() || m.Get("role").Is("tool") || m.Get("role").Is("developer") {
			return true
		}
	}
	return false
}

// apiErrorBody recognises the body of a failed API request, which is all
// a saved response holds when the request failed: Anthropic's
// {"type": "error", "error": {"type", "message"}} (also an SSE stream's
// error event), and OpenAI's {"error": {"message", "type", "param",
// "code"}} with no type of its own, which OpenAI-compatible APIs
// (DeepSeek, Groq, Mistral, OpenRouter) answer too. Google's, whose error
// has a "status" and no "type", is neither's.
func apiErrorBody(root abi.Value) (vote, bool) {
	e := root.Get("error")
	if e.Kind() != abi.KindObject || e.Get("message").Kind() != abi.KindString || !e.Get("type").Exists() {
		return vote{}, false
	}
	switch {
	case root.Get("type").Is("error") && onlyMembers(root, "type", "error", "request_id"):
		// (The Responses API's stream error event has a sequence_number;
		// an agent's event stream that says type error beside its own
		// members, OpenCode's run --format json with its sessionID and
		// timestamp, is that agent's: a body holds no more.)
		return vote{"anthropic", "anthropic-messages", "an Anthropic API error body (type error, error.type " + e.Get("type").String() + ")"}, true
	case root.Len() == 1 && !e.Get("status").Exists():
		return vote{"openai", "chat-completion", "an OpenAI API error body (error.message, error.type)"}, true
	}
	return vote{}, false
}

// onlyMembers reports whether every member of the object root is one of
// keys.
func onlyMembers(root abi.Value, keys ...string) bool {
	it := root.Iter()
	for it.Next() {
		if !slices.Contains(keys, it.Key().String()) {
			return false
		}
	}
	return true
}

// classifyLine recognises one line of a line-oriented format.
func classifyLine(root abi.Value, sse bool) (vote, bool) {
	if root.Kind() != abi.KindObject {
		return vote{}, false
	}
	typ := root.Get("type").String()
	switch {
	case root.Get("object").Is("chat.completion.chunk"):
		return vote{"openai", "chat-sse", "OpenAI chat.completion.chunk events"}, true
	case root.Get("object").Is("text_completion"):
		return vote{"openai", "completion-sse", "OpenAI (legacy) Completions stream chunks (text_completion)"}, true
	case root.Get("messages").Kind() == abi.KindArray && strings.HasPrefix(root.Get("id").String(), "T-"):
		return vote{"amp", "thread", "Amp thread documents, one version a line (id T-…, messages)"}, true
	case root.Get("object").Is("chat.completion") || root.Get("object").Is("response"):
		// Responses kept one a line, each after its request or not.
		return vote{"openai", "log", "OpenAI API responses, one a line (" + root.Get("object").String() + ")"}, true
	case openAIExchange(root.Get("response")) && (root.Get("request").Kind() == abi.KindObject || root.Get("custom_id").Exists()):
		return vote{"openai", "log", "OpenAI API requests and responses, one exchange a line (request, response)"}, true
	case openAIChatRequest(root):
		return vote{"openai", "log", "OpenAI Chat Completions requests, one a line (messages with tool_calls or a tool or developer role)"}, true
	case root.Get("custom_id").Exists() && root.Get("result").Get("type").Kind() == abi.KindString && root.Get("result").Get("message").Get("type").Is("message"):
		return vote{"anthropic", "anthropic-messages", "Anthropic Message Batches results (custom_id, result.message)"}, true
	case strings.HasPrefix(typ, "response.") && (root.Get("sequence_number").Exists() || sse):
		return vote{"openai", "responses-sse", "OpenAI Responses API stream events (" + typ + ")"}, true
	case gooseStreamEvent(root, typ):
		return vote{"goose", "stream-json", "goose run --output-format stream-json events (a message with its created time)"}, true
	case droidEntry(root, typ):
		return vote{"droid", "session", "a Factory Droid session record (" + typ + ")"}, true
	case droidExecEvent(root, typ):
		return vote{"droid", "stream-json", "droid exec --output-format stream-json or debug events (" + typ + ")"}, true
	case typ == "system" && droidExecInit(root), typ == "result" && root.Get("session_id").Exists() && !claudeResult(root):
		// droid exec's init and result share Claude Code's type names
		// but not its fields: they vote for neither (droid exec's
		// other events decide).
		return vote{}, false
	case cursorLine(root, typ):
		return vote{"cursor", "agent-transcript", "a Cursor agent transcript line ({role, message}, no type, id or time)"}, true
	case piEvent(root, typ):
		return vote{"pi", "json", "Pi coding agent --mode json events (" + typ + ")"}, true
	case piEntry(root, typ):
		return vote{"pi", "session", "a Pi coding agent session file (" + typ + ")"}, true
	case crushRow(root):
		return vote{"crush", "rows", "Crush crush.db rows as twasm reads them (" + root.Get("table").String() + ")"}, true
	case root.Get("$twasm").Is("row") && (root.Get("table").Is("messages") || root.Get("table").Is("sessions")):
		return vote{"goose", "rows", "Goose sessions.db rows as twasm reads them (" + root.Get("table").String() + ")"}, true
	case gooseLine(root, typ):
		return vote{"goose", "session", "a Goose session file (before sessions.db)"}, true
	case root.Get("$twasm").Is("row") && (root.Get("table").Is("composer") || root.Get("table").Is("bubble") || root.Get("table").Is("chattab")):
		return vote{"cursor", "ide-rows", "Cursor IDE state.vscdb rows as twasm reads them (" + root.Get("table").String() + ")"}, true
	case root.Get("$twasm").Is("row") && (root.Get("table").Is("part") || root.Get("table").Is("session")):
		return vote{"opencode", "rows", "OpenCode database rows as twasm reads them (" + root.Get("table").String() + ")"}, true
	case root.Get("$twasm").Is("file") && openCodeTreePath(root.Get("path").String()):
		return vote{"opencode", "tree", "OpenCode's older file tree as twasm reads it (" + root.Get("path").String() + ")"}, true
	case root.Get("part").Kind() == abi.KindObject && root.Get("sessionID").Exists() && (typ == "step_start" || typ == "step_finish" || typ == "text" || typ == "tool_use" || typ == "reasoning"):
		return vote{"opencode", "json", "opencode run --format json events (" + typ + ")"}, true
	case clineAgentLine(root, typ):
		return vote{"cline", "agent-events", "Cline CLI --json output, the SDK's agent events (" + typ + ")"}, true
	case typ == "system" && root.Get("subtype").Is("init") && root.Get("protocol").Is("roo-cli-stream"):
		return vote{"roo", "roo-stream-json", "Roo Code CLI --output-format stream-json (system init, protocol roo-cli-stream)"}, true
	case clineStreamLine(root, typ):
		return vote{"cline", "json", "Cline CLI --json output (" + typ + root.Get("event").String() + ")"}, true
	case typ == "message_start" || typ == "content_block_delta" || typ == "content_block_start":
		return vote{"anthropic", "anthropic-sse", "Anthropic Messages API stream events (" + typ + ")"}, true
	case kimiRecord(root, typ):
		return vote{"kimi", "wire", "a Kimi Code wire.jsonl record (" + typ + ")"}, true
	case typ == "" && (root.Get("role").Is("_checkpoint") && has(root, "id") || root.Get("role").Is("_usage") && has(root, "token_count")):
		// Its markers among the model's messages: the first line of every
		// file is {"role": "_checkpoint", "id": 0}.
		return vote{"kimi", "context", "a Kimi CLI context file before 0.59 (" + root.Get("role").String() + " marker)"}, true
	case typ == "" && root.Get("role").Is("assistant") && kimiThinkPart(root.Get("content")):
		// kosong's Message, as kimi --print --output-format stream-json
		// writes one a line (and the context file holds): a think part.
		return vote{"kimi", "context", "Kimi CLI messages (kimi --print --output-format stream-json, or a context file): an assistant message with a think part"}, true
	case typ == "" && root.Get("role").Is("tool") && root.Get("tool_call_id").Exists() && kimiSystemPart(root.Get("content")):
		// kosong's tool message as kimi --print writes it: Kimi CLI
		// states a tool's outcome in a text part wrapped in <system>
		// (soul/message.py's system()), which an assistant message
		// without a think part does not show.
		return vote{"kimi", "context", "Kimi CLI messages (kimi --print --output-format stream-json, or a context file): a tool message stating its outcome in <system>"}, true
	case root.Get("message").Get("type").Kind() == abi.KindString && has(root, "timestamp") && root.Get("message").Get("payload").Exists():
		return vote{"kimi", "legacy-wire", "a Kimi CLI wire.jsonl record (" + root.Get("message").Get("type").String() + ")"}, true
	case strings.HasPrefix(typ, "thread.") || strings.HasPrefix(typ, "turn.") || strings.HasPrefix(typ, "item."):
		return vote{"codex", "exec-json", "codex exec --json events (" + typ + ")"}, true
	case has(root, "id", "msg") && root.Get("msg").Get("type").Exists():
		return vote{"codex", "legacy-json", "the legacy codex {\"id\",\"msg\"} stream"}, true
	case root.Get("method").Is("codex/event") && root.Get("params").Get("msg").Get("type").Exists():
		return vote{"codex", "legacy-json", "the legacy codex stream as the app server's JSON-RPC notifications (codex/event)"}, true
	case typ == "" && has(root, "id", "timestamp", "instructions") || root.Get("record_type").Is("state"):
		// The earliest rollouts: a header {id, timestamp, instructions,
		// git} and {"record_type": "state"} markers between bare items.
		return vote{"codex", "rollout", "an early Codex rollout session file (id, timestamp, instructions; record_type state)"}, true
	case has(root, "timestamp", "type", "payload") && (typ == "session_meta" || typ == "response_item" || typ == "event_msg" || typ == "turn_context"):
		return vote{"codex", "rollout", "a Codex rollout session file (" + typ + ")"}, true
	case root.Get("data").Kind() == abi.KindObject && strings.Contains(typ, ".") && root.Get("id").Exists():
		return vote{"copilot", "events-jsonl", "GitHub Copilot CLI events (" + typ + ")"}, true
	case typ == "result" && root.Get("exitCode").Exists() && root.Get("sessionId").Exists():
		return vote{"copilot", "json", "a GitHub Copilot CLI result line"}, true
	case geminiSessionRecord(root, typ):
		return vote{"gemini", "session-file", "a Gemini CLI chat session file, one record a line (" + geminiRecordName(typ) + ")"}, true
	case qwenRecord(root, typ):
		return vote{"qwen", "session", "a Qwen Code chat record (" + typ + ")"}, true
	case has(root, "parentUuid", "sessionId") || root.Get("isSidechain").Exists():
		return vote{"claude", "session-log", "a Claude Code session log (parentUuid, sessionId)"}, true
	case typ == "system" && root.Get("session_id").Exists() && root.Get("qwen_code_version").Exists():
		return vote{"qwen", "stream-json", qwenHeadlessReason}, true
	case cursorStreamLine(root, typ):
		return vote{"cursor", "stream-json", "cursor-agent --output-format stream-json records (" + typ + ")"}, true
	case (typ == "user" || typ == "assistant") && root.Get("session_id").Exists() && !root.Get("parent_tool_use_id").Exists() && !root.Get("uuid").Exists() &&
		root.Get("message").Kind() == abi.KindObject && !root.Get("message").Get("id").Exists() && root.Get("message").Get("role").Exists():
		// A message line of cursor-agent's stream (no parent_tool_use_id,
		// uuid or message id, which Claude Code's have): no vote, the
		// stream's other lines decide.
		return vote{}, false
	case (typ == "system" || typ == "assistant" || typ == "user" || typ == "result") && strings.HasPrefix(root.Get("session_id").String(), "T-"):
		// amp --execute --stream-json writes Claude Code's shapes; its
		// session is its thread, T-<uuid>.
		return vote{"amp", "stream-json", "amp --stream-json records (" + typ + ", session T-…)"}, true
	case (typ == "system" || typ == "assistant" || typ == "user" || typ == "result" || typ == "stream_event") && root.Get("session_id").Exists():
		return vote{"claude", "stream-json", "Claude Code stream-json records (" + typ + ")"}, true
	case geminiStreamEvent(root, typ):
		return vote{"gemini", "stream-json", "Gemini CLI stream-json events (" + typ + ")"}, true
	case sse && root.Get("choices").Exists():
		return vote{"openai", "chat-sse", "an OpenAI-compatible SSE stream"}, true
	}
	return apiErrorBody(root)
}

// kimiThinkPart reports whether a message's content holds a kosong
// think part {"type": "think", "think": ...}.
func kimiThinkPart(c abi.Value) bool {
	for it := c.Iter(); it.Next(); {
		if p := it.Value(); p.Get("type").Is("think") && p.Get("think").Exists() {
			return true
		}
	}
	return false
}

// kimiSystemPart reports whether a message's content holds a text part
// that starts with Kimi CLI's <system> tag (not <system-reminder>).
func kimiSystemPart(c abi.Value) bool {
	it := c.Iter()
	for it.Next() {
		if p := it.Value(); p.Get("type").Is("text") && strings.HasPrefix(p.Get("text").String(), "<system>") {
			return true
		}
	}
	return false
}

// cursorStreamLine recognises a line of cursor-agent --print
// --output-format stream-json that Claude Code's stream has no line like:
// a tool_call or thinking event, an init naming the API key's source
// without a tool list, a message line with Cursor's model_call_id or
// timestamp_ms, a result with its request_id and no num_turns.
func cursorStreamLine(root abi.Value, typ string) bool {
	switch typ {
	case "tool_call":
		return root.Get("call_id").Exists() && root.Get("tool_call").Exists()
	case "thinking":
		return root.Get("subtype").Is("delta") || root.Get("subtype").Is("completed")
	case "system":
		return root.Get("subtype").Is("init") && root.Get("apiKeySource").Exists() && !root.Get("tools").Exists()
	case "user", "assistant":
		return root.Get("session_id").Exists() && (root.Get("model_call_id").Exists() || root.Get("timestamp_ms").Exists())
	case "result":
		return root.Get("request_id").Exists() && !root.Get("num_turns").Exists()
	}
	return false
}

// geminiStreamEvent recognises a line of Gemini CLI's stream-json
// output by its type and the fields of that type (init names the
// session or model, a message has content, tool_use and tool_result the
// tool's id), so that another CLI's events of the same type names
// (Factory Droid's stream-json message {role, text}, tool_result
// {toolCallId}) are not taken for Gemini's.
func geminiStreamEvent(root abi.Value, typ string) bool {
	if !root.Get("timestamp").Exists() || root.Get("message").Kind() == abi.KindObject {
		return false
	}
	switch typ {
	case "init":
		return root.Get("session_id").Exists() || root.Get("model").Exists()
	case "message":
		return root.Get("content").Exists() && root.Get("role").Kind() == abi.KindString
	case "tool_use", "tool_result":
		return root.Get("tool_id").Exists()
	}
	return false
}

// geminiSessionRecord recognises a line of Gemini CLI's JSONL chat
// session file (~/.gemini/tmp/<hash>/chats/session-*.jsonl, the store's
// format since 0.4x): its header {sessionId, projectHash, startTime,
// ...}, which has no messages (a whole session document is
// classifyDoc's), or a message record {id, timestamp, type, content} of
// type user, gemini, info, error or warning, with no message object and
// no uuid or sessionId (Qwen Code's and Claude Code's records have them).
// Its {"$set": ...} and {"$rewindTo": ...} lines say nothing alone.
func geminiSessionRecord(root abi.Value, typ string) bool {
	switch typ {
	case "":
		return has(root, "sessionId", "projectHash") && !root.Get("messages").Exists()
	case "gemini", "user", "info", "error", "warning":
		return has(root, "id", "timestamp", "content") && !root.Get("message").Exists() &&
			!root.Get("uuid").Exists() && !root.Get("sessionId").Exists()
	}
	return false
}

// geminiRecordName names a Gemini session line for a detection reason.
func geminiRecordName(typ string) string {
	if typ == "" {
		return "the header: sessionId, projectHash"
	}
	return typ
}

// droidExecEvent recognises an event of droid exec's stream-json (or
// debug) output by its type and the flat fields of that type: a message
// {role, text} (no message object or content, which other CLIs' messages
// have), a tool_call {toolName, parameters}, a tool_result {isError or
// value, no tool_id (Gemini's)}, a completion {finalText}.
func droidExecEvent(root abi.Value, typ string) bool {
	switch typ {
	case "message":
		return root.Get("role").Kind() == abi.KindString && root.Get("text").Kind() == abi.KindString &&
			!root.Get("message").Exists() && !root.Get("content").Exists() && !root.Get("parts").Exists()
	case "tool_call":
		return root.Get("toolName").Kind() == abi.KindString && root.Get("parameters").Exists()
	case "tool_result":
		return (root.Get("isError").Exists() || root.Get("value").Exists()) && !root.Get("tool_id").Exists() &&
			!root.Get("tool_use_id").Exists()
	case "completion":
		return root.Get("finalText").Exists()
	}
	return false
}

// droidExecInit recognises droid exec's init event {type: system,
// subtype: init, cwd, session_id, tools, model}: Claude Code's names its
// MCP servers, permission mode, API key source or version besides.
func droidExecInit(root abi.Value) bool {
	if !root.Get("subtype").Is("init") || !root.Get("session_id").Exists() {
		return false
	}
	for _, k := range []string{"mcp_servers", "permissionMode", "apiKeySource", "uuid", "claude_code_version", "slash_commands"} {
		if root.Get(k).Exists() {
			return false
		}
	}
	return true
}

// claudeResult says whether a result object has what Claude Code's
// states and droid exec's --output-format json does not: the API time
// (duration_api_ms, in every Claude Code result since the first builds),
// the cost under its first name (cost_usd), the per-model usage
// (modelUsage), a uuid, or a usage of the Messages API's own shape
// (service_tier, server_tool_use, the cache_creation breakdown). A cost
// (total_cost_usd) or a usage of Anthropic's token names alone decides
// nothing: droid exec's result states them too (Factory's droid-action
// reads total_cost_usd from it; its completion event's usage uses
// Anthropic's names, with thinking_tokens).
func claudeResult(root abi.Value) bool {
	for _, k := range []string{"duration_api_ms", "cost_usd", "modelUsage", "uuid"} {
		if root.Get(k).Exists() {
			return true
		}
	}
	u := root.Get("usage")
	return u.Get("service_tier").Exists() || u.Get("server_tool_use").Exists() || u.Get("cache_creation").Kind() == abi.KindObject
}

// droidEntry recognises a line of a Factory Droid session: its
// session_start, or a message whose content holds Anthropic's tool_use,
// tool_result or thinking blocks and which has no timestamp of its own
// (a Pi session's messages, which share the envelope, carry one, and
// name their blocks toolCall and toolResult).
func droidEntry(root abi.Value, typ string) bool {
	switch typ {
	case "session_start":
		return root.Get("id").Exists()
	case "message":
		m := root.Get("message")
		if !m.Get("role").Is("user") && !m.Get("role").Is("assistant") || m.Get("timestamp").Exists() {
			return false
		}
		it := m.Get("content").Iter()
		for it.Next() {
			if t := it.Value().Get("type"); t.Is("tool_use") || t.Is("tool_result") || t.Is("thinking") {
				return true
			}
		}
	}
	return false
}

// cursorLine recognises a line of Cursor's agent transcripts: a message
// ({role, message: {content}} and nothing else: no type, id, time or
// session) or the record that ends a turn ({type: turn_ended, status}).
func cursorLine(root abi.Value, typ string) bool {
	if typ == "turn_ended" {
		return root.Get("status").Kind() == abi.KindString && !root.Get("timestamp").Exists()
	}
	if typ != "" || root.Get("role").Kind() != abi.KindString || root.Get("message").Kind() != abi.KindObject {
		return false
	}
	c := root.Get("message").Get("content")
	return (c.Kind() == abi.KindArray || c.Kind() == abi.KindString) && !root.Get("timestamp").Exists() &&
		!root.Get("sessionId").Exists() && !root.Get("uuid").Exists() && !root.Get("id").Exists()
}

// kimiRecord recognises a record of Kimi Code's wire.jsonl: its
// metadata line, or a record of the types that carry a conversation
// (turn.prompt and turn.ended are not Codex's turn.* events, which are
// started, completed and failed).
func kimiRecord(root abi.Value, typ string) bool {
	switch typ {
	case "metadata":
		return root.Get("protocol_version").Exists()
	case "turn.prompt", "turn.steer", "turn.ended", "turn.cancel", "context.append_loop_event", "context.append_message", "usage.record":
		return true
	}
	return false
}

// qwenRecord recognises a record of a Qwen Code chat: Claude Code's
// session-log envelope (uuid, parentUuid, sessionId), which it shares,
// around Gemini's content: a message of parts, a tool_result record,
// or a system record. A system record is Qwen's when it has a
// systemPayload or a message of parts (a notification, a cron prompt, a
// background task's completion: Claude Code's system records have
// neither), or, with neither (the payload is optional on several
// subtypes), when its subtype is one only Qwen Code writes and it lacks
// the userType every Claude Code record carries.
func qwenRecord(root abi.Value, typ string) bool {
	if !root.Get("sessionId").Exists() || !root.Get("uuid").Exists() {
		return false
	}
	switch typ {
	case "user", "assistant":
		return root.Get("message").Get("parts").Kind() == abi.KindArray
	case "tool_result":
		return root.Get("message").Get("parts").Kind() == abi.KindArray || root.Get("toolCallResult").Exists()
	case "system":
		return root.Get("systemPayload").Exists() || root.Get("message").Get("parts").Kind() == abi.KindArray ||
			!root.Get("userType").Exists() && qwenSystemSubtype(root.Get("subtype").String())
	}
	return false
}

// qwenSystemSubtype reports whether s is a subtype of Qwen Code's system
// records (ChatRecord.subtype in its chatRecordingService) that Claude
// Code's session logs do not use.
func qwenSystemSubtype(s string) bool {
	switch s {
	case "session_notes", "chat_compression", "slash_command", "ui_telemetry", "at_command", "attribution_snapshot",
		"notification", "background_task_completed", "cron", "mid_turn_user_message", "custom_title", "parent_session",
		"session_source", "session_execution_engine", "omni_recall", "session_model", "session_approval_mode", "rewind",
		"agent_bootstrap", "agent_launch_prompt", "agent_retry", "agent_session_ready", "file_history_snapshot",
		"user_text_elements", "session_artifact_event", "session_artifact_snapshot", "session_sources_snapshot",
		"branch_checkpoint", "goal_state", "goal_runtime", "goal_turn_end", "realtime_message", "turn_result",
		"managed_session_header_v1", "managed_session_event_v1", "managed_session_commit_v1":
		return true
	}
	return false
}

// gooseStreamEvent recognises a message event of goose run
// --output-format stream-json: {"type": "message", "message": {id, role,
// created, content, metadata}}, the message a Goose session stores, its
// created time in seconds; the event itself has no id or time (a Factory
// Droid session record has both, and its message no created time).
func gooseStreamEvent(root abi.Value, typ string) bool {
	if typ != "message" || root.Get("id").Exists() || root.Get("timestamp").Exists() {
		return false
	}
	m := root.Get("message")
	return m.Get("role").Kind() == abi.KindString && m.Get("created").Kind() == abi.KindNumber && m.Get("content").Kind() == abi.KindArray
}

// gooseLine recognises a line of a Goose session file from before
// sessions.db: the metadata line (working_dir with the session's
// counters), or a message ({role, created, content}, no type, its
// content a list of typed items, or, in the first Goose CLI's files of
// November 2024, of untagged ones: {text}, {tool_name, arguments},
// {id, tool_result}, {mime_type}).
func gooseLine(root abi.Value, typ string) bool {
	if typ != "" {
		return false
	}
	if root.Get("working_dir").Exists() && (root.Get("message_count").Exists() || root.Get("description").Exists()) {
		return true
	}
	if root.Get("role").Kind() != abi.KindString || root.Get("created").Kind() != abi.KindNumber || root.Get("content").Kind() != abi.KindArray {
		return false
	}
	first := root.Get("content").Index(0)
	if first.Get("type").Kind() == abi.KindString {
		return true
	}
	return !first.Get("type").Exists() && (first.Get("text").Kind() == abi.KindString || first.Get("tool_name").Kind() == abi.KindString ||
		first.Get("tool_result").Kind() == abi.KindString || first.Get("mime_type").Kind() == abi.KindString)
}

// piEntry recognises a line of a Pi session file (pi-mono, OMP, OpenClaw):
// the header (type session with a cwd), a message entry (its message has
// a role: a Gemini CLI stream-json message has the role at the top), or
// an entry of the tree (id and parentId).
func piEntry(root abi.Value, typ string) bool {
	switch {
	case typ == "session":
		return root.Get("cwd").Exists() || root.Get("version").Exists()
	case typ == "message":
		// Pi's messages carry their own timestamp (or a role of Pi's
		// own); a user's or assistant's message without one is Factory
		// Droid's shape as much as Pi's, and votes for neither.
		m := root.Get("message")
		return m.Get("role").Exists() && (m.Get("timestamp").Exists() || !m.Get("role").Is("user") && !m.Get("role").Is("assistant"))
	}
	return has(root, "id", "parentId", "timestamp") && !root.Get("data").Exists() &&
		(typ == "model_change" || typ == "thinking_level_change" || typ == "compaction" || typ == "branch_summary" ||
			typ == "custom" || typ == "custom_message" || typ == "label" || typ == "session_info")
}

// piEvent recognises an event of Pi's --mode json: its lifecycle events,
// and message events whose message has a role and none of the type or id
// an Anthropic message_start carries.
func piEvent(root abi.Value, typ string) bool {
	switch typ {
	case "agent_start", "agent_end", "turn_start", "tool_execution_start", "tool_execution_update", "tool_execution_end":
		return true
	case "message_start", "message_update", "message_end", "turn_end":
		m := root.Get("message")
		return m.Get("role").Exists() && !m.Get("type").Exists() && !m.Get("id").Exists()
	}
	return false
}

// clineStreamLine recognises a line of the Cline CLI's --json output: the
// structured envelope (schemaVersion, event), the earlier task_started
// line, or a ClineMessage on a line of its own (ts, type say or ask, and
// the say or ask subtype).
func clineStreamLine(root abi.Value, typ string) bool {
	switch {
	case root.Get("schemaVersion").Exists() && root.Get("event").Kind() == abi.KindString && (root.Get("taskId").Exists() || root.Get("messageType").Exists()):
		return true
	case typ == "task_started" && root.Get("taskId").Exists() && !root.Get("payload").Exists():
		return true
	}
	return (typ == "say" || typ == "ask") && root.Get("ts").Exists() && (root.Get(typ).Kind() == abi.KindString)
}

// clineAgentLine recognises a line of the Cline CLI's --json output
// since it runs on the Cline SDK: an ISO "ts" and the CLI's agent_event
// envelope ({"type":"agent_event","event":{...}}) or one of its run lines.
func clineAgentLine(root abi.Value, typ string) bool {
	if root.Get("ts").Kind() != abi.KindString {
		return false
	}
	switch typ {
	case "agent_event":
		return root.Get("event").Get("type").Kind() == abi.KindString
	case "run_start", "run_result", "run_aborted", "run_abort_requested":
		return true
	}
	return false
}

// clineDoc recognises a Cline (or Roo Code) task's documents: the
// conversation (api_conversation_history.json: Anthropic messages with
// Cline's ts or modelInfo, or the task in <task> tags) and the UI's
// messages (ui_messages.json: {ts, type: say|ask, say|ask}).
func clineDoc(root abi.Value) (vote, bool) {
	first := root.Index(0)
	if first.Get("ts").Exists() && (first.Get("type").Is("say") && first.Get("say").Exists() || first.Get("type").Is("ask") && first.Get("ask").Exists()) {
		return vote{"cline", "task", "a Cline task's UI messages (ui_messages.json: ts, type say/ask)"}, true
	}
	if !first.Get("role").Is("user") || !first.Get("content").Exists() {
		return vote{}, false
	}
	for i := 0; i < root.Len() && i < 4; i++ {
		m := root.Index(i)
		if m.Get("modelInfo").Exists() || m.Get("ts").Kind() == abi.KindNumber {
			return vote{"cline", "task", "a Cline task's conversation (api_conversation_history.json: messages with ts or modelInfo)"}, true
		}
	}
	if t := first.Get("content").Index(0).Get("text"); t.Kind() == abi.KindString && strings.HasPrefix(t.String(), "<task>") {
		return vote{"cline", "task", "a Cline task's conversation (api_conversation_history.json: the task in <task> tags)"}, true
	}
	return vote{}, false
}

// clinePrefix recognises the start of a Cline task's document that the
// sample cuts: Cline writes both arrays compact, the conversation
// starting with the task, the UI's messages with a ts and a say or ask;
// a copy a person re-indented (as users commit them) is read without the
// whitespace between its tokens.
func clinePrefix(b []byte) (vote, bool) {
	b = compactJSONPrefix(b[:min(len(b), 4096)])
	switch {
	case bytes.HasPrefix(b, []byte(`[{"role":"user","content":[{"type":"text","text":"<task>`)):
		return vote{"cline", "task", "the start of a Cline task's conversation (api_conversation_history.json, the task in <task> tags)"}, true
	case bytes.HasPrefix(b, []byte(`[{"ts":`)) && bytes.Contains(b[:min(len(b), 200)], []byte(`,"type":"say","say":"`)):
		return vote{"cline", "task", "the start of a Cline task's UI messages (ui_messages.json)"}, true
	}
	return vote{}, false
}

// exportPrefix recognises the start of a session export longer than
// the sample: opencode export's {"info": {"id": "ses_…", and goose session
// export --format json's {"id": …, "working_dir": …, with its counters,
// conversation or user_set_name, which come before or after a large
// extension_data (both pretty-printed: read compacted).
func exportPrefix(b []byte) (vote, bool) {
	b = compactJSONPrefix(b[:min(len(b), 4096)])
	switch {
	case bytes.HasPrefix(b, []byte(`{"info":{"id":"ses_`)):
		return vote{"opencode", "export", "the start of opencode export output (info of a session ses_…)"}, true
	case bytes.HasPrefix(b, []byte(`{"id":"`)) && bytes.Contains(b[:min(len(b), 400)], []byte(`","working_dir":"`)) &&
		(bytes.Contains(b, []byte(`"conversation":[`)) || bytes.Contains(b, []byte(`"accumulated_total_tokens":`)) || bytes.Contains(b, []byte(`"user_set_name":`))):
		return vote{"goose", "export", "the start of goose session export --format json (a session with working_dir)"}, true
	}
	return vote{}, false
}

// compactJSONPrefix is the start of a JSON document without the
// whitespace between its tokens (a string's kept as it is), so that a
// pretty-printed document's start reads as the compact one's.
func compactJSONPrefix(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		out = append(out, c)
	}
	return out
}

// openCodeTreePath reports whether a file line's store-relative path is
// one of OpenCode's older file tree: session/<project>/ses_*.json,
// message/ses_*/msg_*.json or part/msg_*/prt_*.json.
func openCodeTreePath(p string) bool {
	parts := strings.Split(p, "/")
	if len(parts) != 3 || !strings.HasSuffix(parts[2], ".json") {
		return false
	}
	switch parts[0] {
	case "session":
		return strings.HasPrefix(parts[2], "ses_")
	case "message":
		return strings.HasPrefix(parts[1], "ses_") && strings.HasPrefix(parts[2], "msg_")
	case "part":
		return strings.HasPrefix(parts[1], "msg_") && strings.HasPrefix(parts[2], "prt_")
	}
	return false
}

// crushRow is a row of Crush's crush.db as the host hands it: a message
// with its parts (Goose's have content_json), or a session with Crush's
// prompt_tokens and completion_tokens (Goose's have accumulated_*).
func crushRow(root abi.Value) bool {
	if !root.Get("$twasm").Is("row") {
		return false
	}
	r := root.Get("row")
	switch {
	case root.Get("table").Is("messages"):
		return r.Get("parts").Exists() && !r.Get("content_json").Exists()
	case root.Get("table").Is("sessions"):
		return r.Get("prompt_tokens").Exists() && r.Get("completion_tokens").Exists() && !r.Get("accumulated_total_tokens").Exists()
	}
	return false
}
