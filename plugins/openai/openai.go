package openai

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// The formats the plugin reads, as reported in the step's metadata (the
// names internal/detect uses).
const (
	FormatChat         = "chat-completion"
	FormatChatSSE      = "chat-sse"
	FormatResponses    = "responses"
	FormatResponsesSSE = "responses-sse"
	// FormatBatch is the output file of the Batch API (/v1/batches): one
	// line per request, {id: "batch_req_...", custom_id, response:
	// {status_code, request_id, body}, error}. OpenAI bills these
	// requests at its batch rate, so the format tells the price.
	FormatBatch = "batch-output"
)

// Plugin is the OpenAI HTTP API normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "openai",
		Version:     "0.1.0",
		Providers:   []string{"openai"},
		Formats:     []string{FormatChat, FormatChatSSE, FormatResponses, FormatResponsesSSE, FormatBatch},
		Description: "OpenAI Chat Completions and Responses API: response bodies and SSE streams (and compatible servers)",
	},
	New:        func(abi.BeginOptions) sdk.Normalizer { return newNormalizer() },
	Keys:       keys,
	Reassemble: true, // a chat.completion body, pretty-printed
}

// maxNest bounds how deep request/response wrappers ({"response":
// {"body": ...}}) are unwrapped.
const maxNest = 4

// normalizer is the state of one stream. Everything kept across lines is
// a Go string, a byte slice the plugin owns, a literal sdk.Str or a
// number: spans die with their line.
type normalizer struct {
	// of are the members of a payload object dispatches on (objectKeys),
	// found in one pass over the object rather than one per Get (a chat
	// chunk has no type, error or service_tier: each Get of one walked
	// every member). object reads of before any call that may nest (a
	// wrapper's payloads); chunk, which object calls for the same
	// payload, reads it first thing.
	of [len(objectNames)]abi.Value

	format    string
	inBatch   bool // reading the response of a Batch API output line
	modelSent bool
	nkeys     int // message key counter

	chat     *chatResp // the Chat Completions response being streamed
	doneSeen bool      // data: [DONE] arrived
	terminal bool      // a terminal status was reported
	// asked: a request body came after the last terminal status (a
	// request log whose last request got no response).
	asked bool

	cur     *resp            // the Responses API response being streamed
	resps   map[string]*resp // by response id
	items   map[string]*item // by output item id
	parts   map[partKey]*slot
	calls   map[string]int // tool.calls reported per call id (see settled)
	results map[string]int // tool.results reported per call id
	search  string         // the latest tool_search call, for a server-run output naming none
	prompts sdk.HashSet    // hashes of request-side texts already reported
	said    []byte         // a role and a text, hashed into prompts
}

func newNormalizer() *normalizer {
	return &normalizer{
		resps:   map[string]*resp{},
		items:   map[string]*item{},
		parts:   map[partKey]*slot{},
		calls:   map[string]int{},
		results: map[string]int{},
	}
}

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	if !l.JSON().Exists() {
		n.text(l.Raw, out)
		return nil
	}
	n.value(l.JSON(), 0, out)
	return nil
}

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	if n.chat != nil {
		n.closeChat(n.chat, out)
	}
	// Responses cut before their terminal event: close them in the
	// order they started, so their calls are still reported.
	for n.cur != nil {
		n.closeResp(n.cur, out)
	}
	for _, r := range n.openResps() {
		n.closeResp(r, out)
	}
	if !n.terminal && n.doneSeen {
		// [DONE] is the server's own end-of-stream marker: a chat
		// stream whose chunks carried no finish_reason (some compatible
		// servers) still ended normally.
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	}
	if n.terminal && n.asked {
		// A request log that ends on a request: its response (the
		// answer to the log's last prompt or tool outputs) never came.
		// An earlier response's status is not this one's.
		n.status(sdk.StatusIncomplete, sdk.S("the log ends on a request that got no response"), out)
	}
	return nil
}

// openResps lists responses still open, oldest first.
func (n *normalizer) openResps() []*resp {
	var rs []*resp
	for _, r := range n.resps {
		if !r.closed {
			rs = append(rs, r)
		}
	}
	// Few responses per stream: insertion sort by start order.
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].seq < rs[j-1].seq; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
	return rs
}

func (n *normalizer) setFormat(f string, out *sdk.Out) {
	if n.format == FormatBatch && !n.inBatch && f != FormatBatch {
		// A response that did not come through the Batch API after
		// batch output lines: the step is not a batch job's results
		// alone, and its usage is priced at the standard rates (never
		// below what was billed).
		n.format = f
		out.Meta(sdk.Meta{Format: sdk.S(f), Override: true})
		out.Warn("Batch API output mixed with other responses: the step is not priced at the batch rate")
		return
	}
	if n.format != "" {
		return
	}
	n.format = f
	out.Meta(sdk.Meta{Format: sdk.S(f)})
}

// model reports the step's model the first time a line names one.
func (n *normalizer) model(v abi.Value, out *sdk.Out) {
	if n.modelSent || v.Kind() != abi.KindString || sdk.Text(v).IsEmpty() {
		return
	}
	n.modelSent = true
	out.Meta(sdk.Meta{Model: sdk.Text(v)})
}

func (n *normalizer) newKey(prefix string) sdk.Str {
	n.nkeys++
	// One allocation (the string): prefix + itoa made three.
	var buf [32]byte
	b := append(buf[:0], prefix...)
	return sdk.S(string(pad(b, int64(n.nkeys), 1)))
}

// text handles a line that is not JSON: SSE framing, the [DONE] marker,
// the first line of a pretty-printed document, or noise.
func (n *normalizer) text(raw []byte, out *sdk.Out) {
	t := sdk.TrimSpace(raw)
	switch {
	case len(t) == 0:
		return
	case sdk.HasPrefix(t, "event:") || sdk.HasPrefix(t, "id:") || sdk.HasPrefix(t, "retry:") || t[0] == ':':
		// SSE framing: the payload's own type says what it is.
		out.Ignored(sdk.S("sse_framing"))
		return
	case sdk.HasPrefix(t, "data:"):
		d := sdk.TrimSpace(t[5:])
		if len(d) == len("[DONE]") && sdk.HasPrefix(d, "[DONE]") {
			n.doneSeen = true
			out.Ignored(sdk.S("sse_done"))
			if n.chat != nil {
				n.closeChat(n.chat, out)
			}
			return
		}
		if len(d) == 0 {
			out.Ignored(sdk.S("sse_framing"))
			return
		}
	}
	out.Unmapped(sdk.S("non_json"))
}

// value handles one JSON document: an object, or an array of them (a
// saved list of chunks or events).
func (n *normalizer) value(v abi.Value, depth int, out *sdk.Out) {
	if v.Kind() == abi.KindArray {
		it := v.Iter()
		for it.Next() {
			if e := it.Value(); e.Kind() == abi.KindObject {
				n.object(e, depth, out)
			} else {
				out.Unmapped(sdk.S("non_object"))
			}
		}
		return
	}
	n.object(v, depth, out)
}

// object dispatches one payload on what it is.
func (n *normalizer) object(v abi.Value, depth int, out *sdk.Out) {
	f := &n.of
	v.Lookup(objectKeys, f[:])
	obj, typ := f[oObject], f[oType]
	switch {
	case obj.Is("chat.completion.chunk"):
		n.chunk(v, out)
	case obj.Is("chat.completion"):
		n.completion(v, out)
	case obj.Is("response"):
		n.setFormat(FormatResponses, out)
		n.responseObject(v, abi.Value{}, out)
	case typ.Kind() == abi.KindString && sdk.HasPrefix(typ.Raw(), `"response.`):
		n.setFormat(FormatResponsesSSE, out)
		n.event(v, typ, out)
	case typ.Is("error"):
		// A Responses stream error event: {type, code, message, param},
		// or {type, error: {...}}.
		n.setFormat(FormatResponsesSSE, out)
		e := v
		if f[oError].Kind() == abi.KindObject {
			e = f[oError]
		}
		n.apiError(e, out)
	case f[oError].Kind() == abi.KindObject && !f[oChoices].Exists() && !f[oOutput].Exists():
		// An HTTP error body, or data: {"error": ...} in a stream.
		n.apiError(f[oError], out)
	case f[oChoices].Kind() == abi.KindArray:
		// A compatible server that leaves out "object".
		if isChunk(v) {
			n.chunk(v, out)
		} else {
			n.completion(v, out)
		}
	case f[oOutput].Kind() == abi.KindArray && f[oStatus].Exists():
		n.setFormat(FormatResponses, out)
		n.responseObject(v, abi.Value{}, out)
	case obj.Is("response.compaction"):
		// A /responses/compact body: the conversation compacted into an
		// encrypted item (with the input items kept), and the call's
		// usage. It is returned whole when the call succeeded.
		n.setFormat(FormatResponses, out)
		n.responseObject(v, abi.Value{}, out)
	case obj.Kind() == abi.KindString && (f[oOutput].Kind() == abi.KindArray || f[oUsage].Kind() == abi.KindObject):
		// An object of the API this plugin does not know yet (a newer
		// endpoint's body): counted by its object, and what it holds
		// that the plugin knows (output items, usage) is kept, so the
		// body is never taken for another provider's (spec §6.8).
		out.Unmapped(sdk.S("object/" + sdk.TypeName(obj)))
		if v.Get("output").Kind() == abi.KindArray || sdk.HasPrefix(obj.Raw(), `"response.`) {
			n.setFormat(FormatResponses, out)
			n.responseObject(v, abi.Value{}, out)
			return
		}
		// No output: the call's usage is all it says (no message is
		// made up for it).
		u := usageOf(v.Get("usage"))
		u.Tier = sdk.TierOf(v.Get("service_tier"))
		out.Usage(u, sdk.ModeAdd)
		costOf(v.Get("usage")).report(out)
	case depth < maxNest && (f[oRequest].Kind() == abi.KindObject || f[oBody].Kind() == abi.KindObject || f[oResponse].Kind() == abi.KindObject):
		// A request/response log record or a Batch API line: the
		// request first, since it holds the results of the calls the
		// previous response made. A Batch API output line (custom_id
		// beside the response) names the step's format first, so its
		// response is priced at the batch rate.
		if depth == 0 && v.Get("custom_id").Kind() == abi.KindString && v.Get("response").Kind() == abi.KindObject {
			n.setFormat(FormatBatch, out)
			n.inBatch = true
		}
		for _, k := range [...]string{"request", "body", "response"} {
			w := v.Get(k)
			if w.Kind() == abi.KindObject {
				if k == "response" && w.Get("body").Kind() == abi.KindObject {
					w = w.Get("body")
				}
				n.value(w, depth+1, out)
			}
		}
		n.inBatch = false
	case f[oInput].Exists() && (f[oModel].Exists() || f[oInput].Kind() == abi.KindArray):
		n.responsesRequest(v, out)
	case f[oMessages].Kind() == abi.KindArray:
		n.chatRequest(v, out)
	case typ.Kind() == abi.KindString:
		out.Unmapped(sdk.S(sdk.TypeName(typ)))
	case obj.Kind() == abi.KindString:
		out.Unmapped(sdk.S("object/" + sdk.TypeName(obj)))
	default:
		out.Unmapped(sdk.S("(no type)"))
	}
}

// isChunk tells a chunk from a completion when "object" is missing.
func isChunk(v abi.Value) bool {
	it := v.Get("choices").Iter()
	for it.Next() {
		c := it.Value()
		if c.Get("delta").Exists() {
			return true
		}
		if c.Get("message").Exists() {
			return false
		}
	}
	// No choices: the usage chunk of a stream.
	return true
}

// apiError reports an API error object {message, type, code}: the call
// failed, which is the end of the step.
func (n *normalizer) apiError(e abi.Value, out *sdk.Out) {
	msg := sdk.Text(e.Get("message"))
	if msg.IsEmpty() {
		msg = sdk.Text(e.Get("code"))
	}
	if msg.IsEmpty() {
		msg = sdk.Text(e.Get("type"))
	}
	if msg.IsEmpty() {
		msg = sdk.S("error")
	}
	n.status(sdk.StatusError, msg, out)
}

// status reports a terminal status.
func (n *normalizer) status(st string, err sdk.Str, out *sdk.Out) {
	n.terminal, n.asked = true, false
	out.Status(st, err, sdk.LevelTerminal)
}

// refusalError is the step's error for a response whose answer is a
// refusal: the model's words, clipped.
func refusalError(text string) string {
	return "refusal: the model declined to answer: " + text
}

// toolKind maps a tool name to the transcript's tool kind where the name
// makes it obvious; function names are the caller's own, so anything
// else is "other".
func toolKind(name string) string {
	switch lower(name) {
	case "shell", "bash", "exec", "exec_command", "run_command", "run_shell_command", "execute_command",
		"shell_command", "terminal", "local_shell", "container.exec", "run_terminal_cmd":
		return "execute"
	case "read", "read_file", "readfile", "view", "view_file", "open_file", "cat", "view_image":
		return "read"
	case "write", "write_file", "edit", "edit_file", "multiedit", "apply_patch", "create_file", "replace",
		"str_replace_editor", "str_replace_based_edit_tool":
		return "edit"
	case "grep", "glob", "search", "file_search", "search_files", "find_files", "list_dir", "list_directory",
		"ls", "codebase_search", "grep_search":
		return "search"
	case "web_search", "web_fetch", "fetch", "fetch_url", "browse", "http_request":
		return "fetch"
	case "think", "update_plan", "todo_write", "todowrite", "plan":
		return "think"
	}
	return "other"
}

// commandOf returns the command line of an execute call's input:
// "command" or "cmd", a string or an argv array.
func commandOf(input abi.Value) sdk.Str {
	c := input.Get("command")
	if !c.Exists() {
		c = input.Get("cmd")
	}
	switch c.Kind() {
	case abi.KindString:
		return sdk.Text(c)
	case abi.KindArray:
		return shellJoin(c)
	}
	return sdk.Str{}
}

// shellJoin joins an argv array into one command line, quoting words
// that the shell would split.
func shellJoin(argv abi.Value) sdk.Str {
	var b []byte
	it := argv.Iter()
	for it.Next() {
		w := it.Value().String()
		if len(b) > 0 {
			b = append(b, ' ')
		}
		if w != "" && !needsQuote(w) {
			b = append(b, w...)
			continue
		}
		b = append(b, '\'')
		for i := 0; i < len(w); i++ {
			if w[i] == '\'' {
				b = append(b, `'\''`...)
			} else {
				b = append(b, w[i])
			}
		}
		b = append(b, '\'')
	}
	return sdk.S(string(b))
}

func needsQuote(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/' || c == '=' || c == ':' || c == ',' || c == '+' || c == '@') {
			return true
		}
	}
	return false
}

// jsonInput parses text the plugin assembled (joined argument
// fragments) as a tool input: "" is {}, text that is not JSON stays a
// string rather than being lost. root is the parsed value, if any.
func jsonInput(b []byte) (in sdk.Str, root abi.Value) {
	t := sdk.TrimSpace(b)
	if len(t) == 0 {
		t = []byte("{}")
	}
	if doc, ok := sdk.Parse(t); ok {
		return sdk.JSON(doc.Root()), doc.Root()
	}
	return sdk.S(string(b)), abi.Value{}
}

// argsRoot returns the parsed value of a JSON-string argument (the
// Responses and Chat APIs send arguments as a string).
func argsRoot(v abi.Value) abi.Value {
	switch v.Kind() {
	case abi.KindObject:
		return v
	case abi.KindString:
		raw := v.Raw()
		if len(raw) < 4 {
			return abi.Value{}
		}
		b := raw[1 : len(raw)-1]
		if v.Escaped() {
			b = sdk.AppendText(nil, v)
		}
		if doc, ok := sdk.Parse(b); ok {
			return doc.Root()
		}
	}
	return abi.Value{}
}

// usageOf reads a usage object of either API. input_tokens and
// prompt_tokens are already totals (cached included).
func usageOf(u abi.Value) sdk.Usage {
	if u.Kind() != abi.KindObject {
		return sdk.Usage{}
	}
	var s sdk.Usage
	if v := u.Get("input_tokens"); v.Exists() {
		s.Input = sdk.IntOf(v)
		s.CacheRead = sdk.IntOf(u.Path("input_tokens_details", "cached_tokens"))
		s.CacheWrite = sdk.IntOf(u.Path("input_tokens_details", "cache_write_tokens"))
		s.Output = sdk.IntOf(u.Get("output_tokens"))
		s.Reasoning = sdk.IntOf(u.Path("output_tokens_details", "reasoning_tokens"))
		s.Total = sdk.IntOf(u.Get("total_tokens"))
		return s
	}
	s.Input = sdk.IntOf(u.Get("prompt_tokens"))
	s.CacheRead = sdk.IntOf(u.Path("prompt_tokens_details", "cached_tokens"))
	if _, ok := s.CacheRead.Value(); !ok {
		// DeepSeek's compatible API names the cache hit separately.
		s.CacheRead = sdk.IntOf(u.Get("prompt_cache_hit_tokens"))
	}
	s.Output = sdk.IntOf(u.Get("completion_tokens"))
	s.Reasoning = sdk.IntOf(u.Path("completion_tokens_details", "reasoning_tokens"))
	s.Total = sdk.IntOf(u.Get("total_tokens"))
	return s
}

// statedCost is the cost in USD a usage object states.
type statedCost struct {
	usd float64
	set bool
}

// costOf reads the cost a usage object states: OpenRouter's usage.cost
// (Chat and Responses, streamed or not), in USD, a stated 0 included.
func costOf(u abi.Value) statedCost {
	c, ok := u.Get("cost").Float()
	return statedCost{usd: c, set: ok}
}

// report adds a stated cost to the step's: each response's cost is its
// own, so they add up (spec §6.6: a figure the provider states, 0
// included, is kept).
func (c statedCost) report(out *sdk.Out) {
	if c.set {
		out.Cost(c.usd, sdk.ModeAdd)
	}
}

// unixTime renders seconds since the epoch as RFC 3339 (UTC), without
// the time package's formatting machinery (sdk.RFC3339Seconds).
func unixTime(v abi.Value) sdk.Str {
	sec, ok := v.Int()
	if !ok || sec <= 0 || sec > 253402300799 { // up to 9999-12-31
		return sdk.Str{}
	}
	return sdk.S(sdk.RFC3339Seconds(sec))
}

func pad(b []byte, v int64, width int) []byte {
	var d [20]byte
	i := len(d)
	for v > 0 || i == len(d) {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
	}
	for k := len(d) - i; k < width; k++ {
		b = append(b, '0')
	}
	return append(b, d[i:]...)
}

func itoa(v int64) string {
	if v < 0 {
		return "-" + string(pad(nil, -v, 1))
	}
	return string(pad(nil, v, 1))
}

func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
