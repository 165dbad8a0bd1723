package cline

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// uiMessages reads a version of the UI's messages (ClineMessage[]): the
// usage and cost of each API request (say api_req_started, whose text is
// a JSON object Cline completes once the request is done), the errors
// Cline showed, and the final answer. The rest repeats the conversation
// for the screen.
func (n *normalizer) uiMessages(msgs abi.Value, out *sdk.Out) {
	hashes, todo := n.diff(msgs, n.ui, "ui_messages", false, out)
	same := len(todo) == 0 && len(hashes) == len(n.ui) // the version read before
	n.reuse(n.ui)
	n.ui = hashes
	elems := n.elems
	// The tail: the elements after the last request or answer of the
	// model. A request still running there (Cline wrote it when it
	// started and never completed it: nothing answered it) does not end
	// the tail: the task did not go on past an error before it, which
	// is still what the task ended on. A completion there is the answer
	// of the last attempt_completion call. Only the new or changed
	// elements need it: none, no tail.
	// The task's last API request still running (Cline completes its
	// api_req_started once the response is in, or says why it ended)
	// is a turn not finished: the task was read in its middle.
	// A version equal to the one read before says what it said.
	// lastReq is the index of the last API request when !same (-1
	// none), whose text was parsed for n.uiRunning: the tail's loop
	// below, which runs only then, asks the same of it.
	lastReq := -1
	if !same {
		n.uiRunning, n.uiCancelled = false, false
		n.uiRetry = ""
		if len(hashes) > 0 {
			n.uiRetry = retrying(elems[len(hashes)-1])
		}
		for i := len(hashes) - 1; i >= 0; i-- {
			if m := elems[i]; m.Get("say").Is("api_req_started") {
				lastReq = i
				if doc, ok := sdk.ParseText(m.Get("text")); ok {
					info := doc.Root()
					n.uiRunning = running(info)
					n.uiCancelled = info.Get("cancelReason").Is("user_cancelled")
				}
				break
			}
		}
	}
	tail := len(hashes)
	for i := len(hashes) - 1; i >= 0 && len(todo) > 0; i-- {
		m := elems[i]
		say := m.Get("say")
		if say.Is("api_req_started") && (i == lastReq && n.uiRunning || i != lastReq && requestRunning(m)) {
			continue
		}
		if say.Is("api_req_started") || say.Is("text") || say.Is("tool") ||
			say.Is("command") || say.Is("reasoning") || say.Is("completion_result") {
			tail = i + 1
			if say.Is("completion_result") {
				tail = i
			}
			break
		}
	}
	// An error in the tail is what the task ended on: reported after the
	// conversation (deferred), whether it is the API history's or, when
	// that is missing, the UI's own (uiConversation), so that the session
	// rule (spec §6.7) sees it after the last answer.
	first := firstRequest(msgs)
	n.uiFirst = first
	n.stashConversation(elems, todo)
	records := 0
	n.completion, n.completionTime = "", ""
	for _, i := range todo {
		m := elems[i]
		if m.Kind() != abi.KindObject {
			continue
		}
		// Each looked up once: a Get walks the message's members.
		say, ask := m.Get("say"), m.Get("ask")
		switch {
		case say.Is("api_req_started"), say.Is("api_req_finished"):
			// Older versions wrote a request's figures in a separate
			// api_req_finished after it. The model the request went to
			// (modelInfo, newer versions) is the step's, the latest
			// request's: a task folder without its conversation file
			// states it nowhere else.
			out.LatestModel(m.Get("modelInfo").Get("modelId"), &n.model)
			records += n.apiRequest(m, i, elems, i+1 >= tail, out)
		case say.Is("condense_context"):
			records += n.condenseCost(m, out)
		case say.Is("deleted_api_reqs"), say.Is("api_req_deleted"):
			prev := abi.Value{}
			if i > 0 {
				prev = elems[i-1]
			}
			records += n.deletedRequests(m, prev, say.Is("api_req_deleted"), out)
		case say.Is("subagent_usage"):
			records += n.subagentUsage(m, out)
		case say.Is("error") && i > 0 && toolMessage(uiKind(elems[i-1])):
			// The failure of the tool the message before shows (Cline's
			// and Roo Code's handleError, their tools' own checks): the
			// call's result in the conversation states it (the UI's
			// alone: uiConversation makes it the call's result), no
			// error of the provider.
			out.Ignored(sdk.S("error (the failure of the tool call before it, which its result states)"))
			records++
		case say.Is("error"), ask.Is("api_req_failed"), ask.Is("mistake_limit_reached"):
			code := strings.Clone(sdk.Name(say) + sdk.Name(ask)) // kept: not a view of the line
			msg := errorText(m.Get("text").String())
			if code == "api_req_failed" {
				var same bool
				if msg, code, same = n.failedAgain(msg, code); same {
					out.Ignored(sdk.S("api_req_failed (the request's streaming_failed, reported with it)"))
					records++
					continue
				}
			}
			if msg == "" {
				msg = code
			}
			if i >= tail {
				n.deferred = append(n.deferred, uiError{msg: msg, code: code})
			} else {
				out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S(code)})
			}
			records++
		case say.Is("error_retry"), say.Is("api_req_retry_delayed"):
			// Roo Code's api_req_retry_delayed holds the error, then
			// its countdown to the retry.
			out.Warn("the API request failed and was retried: " + clip(m.Get("text").String()))
			records++
			if msg, ok := n.retryFailure(say.Is("error_retry"), m.Get("text").String()); ok {
				code := strings.Clone(sdk.Name(say)) // kept: not a view of the line
				if i >= tail {
					n.deferred = append(n.deferred, uiError{msg: msg, code: code})
				} else {
					out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S(code)})
				}
			}
		case say.Is("api_req_retried"):
			// Cline's and Roo Code's older notice of a request retried
			// after it failed (ClineSay "api_req_retried", until Cline
			// removed it in 01617f9a05), without the error.
			out.Warn("the API request failed and was retried")
			records++
		case say.Is("condense_context_error"):
			out.Warn("Roo Code could not condense the context: " + clip(m.Get("text").String()))
			records++
		case say.Is("completion_result"):
			if t := m.Get("text"); t.Kind() == abi.KindString && !t.Is("") {
				out.Final(sdk.S(completionText(t.String())), true)
				records++
				if i >= tail {
					n.completion, n.completionTime = completionText(t.String()), msTime(m.Get("ts")).String()
				}
			}
		}
	}
	if records == 0 {
		// What changed is the screen's copy of the conversation (text,
		// reasoning, tool and command echoes, checkpoints).
		out.Ignored(sdk.S("ui_messages"))
	}
}

// apiRequest reports the figures of one API request once Cline wrote
// them (tokensIn, tokensOut, cacheWrites, cacheReads, cost: the cost
// Cline states, 0 included), and the request's failure. An element read
// again, changed or not, is counted once: the same ts (else, with none,
// the same index) is the same request.

// A request that failed while streaming (cancelReason streaming_failed)
// is then asked about (ask api_req_failed: retry?), with the same error:
// one failure. When that ask follows in the UI's messages (elems, the
// request at idx: failAsked, looked for only then), the ask reports it,
// with the request's streamingFailedMessage; else the request does, and
// the ask, should a later version bring it, is that failure again
// (failedAgain). Where the task ends on the
// request (last: nothing the model said after it), its failure is
// reported after the conversation (deferred), as an error in the tail
// is, for the session rule.
func (n *normalizer) apiRequest(m abi.Value, idx int, elems []abi.Value, last bool, out *sdk.Out) int {
	// An element is the same request while it keeps its ts (Cline
	// completes it in place); another request at the same index (the
	// UI's messages cut back by a checkpoint restore, a deleted or
	// edited message, then the task went on) is a request of its own.
	ts, byTs := m.Get("ts").Int()
	byTs = byTs && ts > 0
	if byTs && n.countedTs[ts] || !byTs && n.counted[idx] {
		return 0
	}
	doc, ok := sdk.ParseText(m.Get("text"))
	if !ok {
		return 0
	}
	info := doc.Root()
	n.streamFail = streamFail{} // a later request: an ask is about it
	if running(info) {
		return 0 // still running: its figures come with a later version
	}
	in, inOK := info.Get("tokensIn").Int()
	outT, outOK := info.Get("tokensOut").Int()
	cw, cwOK := info.Get("cacheWrites").Int()
	cr, crOK := info.Get("cacheReads").Int()
	cost := info.Get("cost")
	reason := info.Get("cancelReason")
	if byTs {
		if n.countedTs == nil {
			n.countedTs = map[int64]bool{}
		}
		n.countedTs[ts] = true
		n.summed(ts, figuresOf(info))
	} else {
		n.counted[idx] = true
	}
	records := 0
	var u sdk.Usage
	switch {
	case inOK && n.grossInput(info.Get("apiProtocol"), m.Get("modelInfo").Get("providerId"), in, cw+cr, ts, byTs):
		// tokensIn is the whole prompt, the cache included.
		u.Input = sdk.N(in)
	case inOK || cwOK || crOK:
		// Cline keeps tokensIn, cacheWrites and cacheReads disjoint
		// (its message translator subtracts the cache from the
		// provider's input), as Roo did over the Anthropic protocol:
		// every input token is their sum.
		u.Input = sdk.N(in + cw + cr)
	}
	if crOK {
		u.CacheRead = sdk.N(cr)
	}
	if cwOK {
		u.CacheWrite = sdk.N(cw)
	}
	if outOK {
		u.Output = sdk.N(outT)
	}
	if inOK || outOK || cwOK || crOK {
		out.Usage(u, sdk.ModeAdd)
		n.sawUsage = true
		records++
	}
	if cost.Kind() == abi.KindNumber {
		if f, ok := cost.Float(); ok {
			out.Cost(f, sdk.ModeAdd)
			records++
		}
	}
	switch {
	case reason.Is("streaming_failed"):
		msg := strings.Clone(errorText(info.Get("streamingFailedMessage").String()))
		asked := idx >= 0 && failAsked(elems, idx)
		n.streamFail = streamFail{set: true, msg: msg, reported: !asked}
		switch {
		case msg == "" && !asked && idx >= 0 && idx+1 < len(elems) && elems[idx+1].Get("say").Is("error_retry"):
			// Cline retrying it by itself: the error_retry after it
			// states the failure (Cline clears the request's message
			// once it did), and reports it.
			n.streamFail = streamFail{}
		case asked:
		case last:
			n.deferred = append(n.deferred, uiError{msg: orText(msg, "the API request failed while streaming"), code: "streaming_failed"})
		default:
			out.Error(sdk.ProviderError{Message: sdk.S(orText(msg, "the API request failed while streaming")), Code: sdk.S("streaming_failed")})
		}
		records++
	case reason.Is("user_cancelled"):
		out.Warn(requestName(idx) + " was cancelled by the user")
		records++
	case reason.Exists():
		out.Warn(requestName(idx) + " ended: " + clip(reason.String()))
		records++
	}
	return records
}

// requestName names the request apiRequest reads at idx in its warnings:
// the UI's element idx, or (idx < 0: the CLIs' output, which numbers its
// messages from 1) an API request. Made only for a warning: most requests
// have none.
func requestName(idx int) string {
	if idx < 0 {
		return "an API request"
	}
	return "API request " + strconv.Itoa(idx) + " of ui_messages"
}

// Roo Code 3.29.5 (released 2025-11-01; RooCodeInc/Roo-Code#8954) and
// Kilo Code 4.119.0 (2025-11-12) write a request's tokensIn as
// calculateApiCostAnthropic's totalInputTokens, the input plus the cache
// written and read, where earlier versions wrote the uncached input over
// the Anthropic protocol; over the OpenAI protocol it was always the
// whole prompt.
const (
	rooGrossFrom  = 1761955200000 // 2025-11-01T00:00:00Z, epoch ms
	kiloGrossFrom = 1762905600000 // 2025-11-12T00:00:00Z
)

// grossInput says whether a request's tokensIn (in) is the whole prompt,
// its cache (cache: cacheWrites + cacheReads) included. A tokensIn below
// the cache is the uncached rest whoever wrote it (a whole prompt holds
// its cache). Only Roo Code and Kilo Code state apiProtocol. Cline's
// tokensIn is what its provider's handler yields as inputTokens: the
// uncached rest for most (its message translator's disjoint buckets),
// but the OpenAI-style prompt_tokens, the cache read included, with
// cached_tokens as the cache read, for the providers in
// clineGrossProviders (the request's modelInfo.providerId). For Roo and
// Kilo the record names no version: an Anthropic-protocol request made
// before the version that changed it was released is the uncached rest;
// any other is the whole prompt.
func (n *normalizer) grossInput(proto, provider abi.Value, in, cache, ts int64, byTs bool) bool {
	switch {
	case in < cache:
		return false
	case !proto.Exists():
		return provider.Kind() == abi.KindString && clineGrossProviders[provider.String()]
	case proto.Is("openai"):
		return true
	}
	return !byTs || ts >= n.grossFrom()
}

// grossFrom is when the version of Roo Code (or Kilo Code, n.kilo) that
// writes tokensIn as the whole prompt over every protocol was released.
func (n *normalizer) grossFrom() int64 {
	if n.kilo {
		return kiloGrossFrom
	}
	return rooGrossFrom
}

// clineGrossProviders are the Cline providers whose handlers yield the
// OpenAI-style prompt_tokens, the cache included, as inputTokens beside
// the cached part as cacheReadTokens (src/core/api/providers: openai.ts
// and xai.ts read usage.prompt_tokens and
// prompt_tokens_details.cached_tokens; litellm, lmstudio, qwen, doubao,
// fireworks, hicap and zai the same, as Ullage's notes on Cline read
// them), where Cline's others (anthropic, openrouter, cline, deepseek,
// gemini, ...) subtract the cache first.
var clineGrossProviders = map[string]bool{
	"openai": true, "xai": true, "litellm": true, "lmstudio": true, "qwen": true,
	"doubao": true, "fireworks": true, "hicap": true, "zai": true,
}

// figures are the figures of a UI usage message (api_req_started,
// subagent_usage, deleted_api_reqs), as Cline's getApiMetrics sums
// them: a figure not stated is 0.
type figures struct {
	in, out, cw, cr int64
	cost            float64
}

func figuresOf(info abi.Value) figures {
	return figuresNamed(info, "tokensIn", "tokensOut", "cacheWrites", "cacheReads")
}

// figuresNamed are the figures of v whose members in, out, cw and cr
// name the tokens (cost its cost); a figure not stated is 0.
func figuresNamed(v abi.Value, in, out, cw, cr string) figures {
	var f figures
	f.in, _ = v.Get(in).Int()
	f.out, _ = v.Get(out).Int()
	f.cw, _ = v.Get(cw).Int()
	f.cr, _ = v.Get(cr).Int()
	f.cost, _ = v.Get("cost").Float()
	return f
}

// summed keeps the figures of the UI message at ts that a later
// deleted_api_reqs would sum, as twasm accounted for them.
func (n *normalizer) summed(ts int64, f figures) {
	if n.sums == nil {
		n.sums = map[int64]figures{}
	}
	n.sums[ts] = f
}

// subagentUsage counts, once, the figures of a say subagent_usage: the
// usage and cost of the sub-agents a use_subagents call ran ({source:
// "subagents", tokensIn, tokensOut, cacheWrites, cacheReads, cost}, the
// sum over the call's sub-agents, said when the last of them ended).
// Cline makes no API request message for a sub-agent's requests (its
// SubagentRunner says nothing to the task; the SDK's translator drops a
// sub-agent's events) and keeps no conversation or task of theirs, so
// these are the only figures of those requests, and the task's run the
// only run that holds them: they are the step's, as Cline's task total
// (getApiMetrics) counts them. tokensIn, cacheWrites and cacheReads are
// disjoint as in a request's figures (the SDK's, which states the whole
// prompt as tokensIn, writes the cache parts as 0). The figures are kept
// (n.sums) so that a later deleted_api_reqs, which sums them again, does
// not count them twice. It reports the number of records written.
func (n *normalizer) subagentUsage(m abi.Value, out *sdk.Out) int {
	ts, ok := m.Get("ts").Int()
	if !ok || ts <= 0 {
		return 0
	}
	info, ok := n.uncounted(m, ts)
	if !ok {
		return 0
	}
	f := figuresOf(info)
	n.summed(ts, f)
	return n.addFigures(f, out)
}

// condenseCost counts, once, the cost of the request a Roo Code (or Kilo
// Code) context condensing made: say condense_context, its
// contextCondense {cost, prevContextTokens, newContextTokens, summary,
// condenseId} (Task.condenseContext and attemptApiRequest, summarizing
// the conversation with the task's model; RooCodeInc/Roo-Code cb83656).
// No api_req_started states that request, and Roo's task total
// (consolidateTokenUsage) adds the cost; its tokens are stated nowhere
// (the two context sizes are no usage). The cost is kept (n.sums) so
// that a later api_req_deleted, which sums it again, does not count it
// twice. It reports the number of records written.
func (n *normalizer) condenseCost(m abi.Value, out *sdk.Out) int {
	ts, ok := m.Get("ts").Int()
	if !ok || ts <= 0 || n.countedTs[ts] {
		return 0
	}
	cc := m.Get("contextCondense")
	if cc.Kind() != abi.KindObject {
		return 0
	}
	if n.countedTs == nil {
		n.countedTs = map[int64]bool{}
	}
	n.countedTs[ts] = true
	cost, _ := cc.Get("cost").Float()
	n.summed(ts, figures{cost: cost})
	out.Warn("the context was condensed here: the model saw a summary of what came before (the summary request's cost is counted; its tokens are not stated)")
	if cost != 0 {
		out.Cost(cost, sdk.ModeAdd)
	}
	return 1
}

// uncounted is the text of the UI usage message m at ts (a JSON object of
// figures), which it marks counted, when it was not counted before and
// parses.
func (n *normalizer) uncounted(m abi.Value, ts int64) (abi.Value, bool) {
	if n.countedTs[ts] {
		return abi.Value{}, false
	}
	doc, ok := sdk.ParseText(m.Get("text"))
	if !ok {
		return abi.Value{}, false
	}
	if n.countedTs == nil {
		n.countedTs = map[int64]bool{}
	}
	n.countedTs[ts] = true
	return doc.Root(), true
}

// addFigures adds the figures of a UI usage message to the step's usage
// and cost (a figure of 0 adds nothing); it reports the number of
// records written.
func (n *normalizer) addFigures(f figures, out *sdk.Out) int {
	records := 0
	if f.in != 0 || f.out != 0 || f.cw != 0 || f.cr != 0 {
		out.Usage(sdk.Usage{Input: sdk.N(f.in + f.cw + f.cr), CacheRead: sdk.N(f.cr), CacheWrite: sdk.N(f.cw), Output: sdk.N(f.out)}, sdk.ModeAdd)
		n.sawUsage = true
		records++
	}
	if f.cost != 0 {
		out.Cost(f.cost, sdk.ModeAdd)
		records++
	}
	return records
}

// deletedRequests counts, once, what Cline's say deleted_api_reqs states
// that twasm never counted. Older Cline writes it after a checkpoint
// restore of the task (TaskCheckpointManager.handleSuccessfulRestore):
// the UI's messages are cut back to the one restored to (prev, the
// element before it), and its text sums with getApiMetrics the usage
// messages cut away (api_req_started, subagent_usage, an earlier
// deleted_api_reqs), all dated between prev and it. Those twasm read
// before the restore are in n.sums (a request's figures, an earlier
// deleted_api_reqs' remainder, a subagent_usage's, each as counted):
// what is left are the requests twasm never saw, counted here as one
// request's usage.
//
// Roo Code (and Kilo Code) say api_req_deleted (roo) after a checkpoint
// restore (checkpointRestore, src/core/checkpoints/index.ts at
// RooCodeInc/Roo-Code cb83656): the same sum, getApiMetrics of the
// messages after the one restored to, which adds the condense_context
// costs too (n.sums holds those as counted). Its tokensIn sums the
// requests' own, the whole prompt from Roo Code 3.29.5 (grossInput):
// a sum dated after that release whose tokensIn holds its cache has the
// cache taken out of it before it counts, as a request's is.
func (n *normalizer) deletedRequests(m, prev abi.Value, roo bool, out *sdk.Out) int {
	ts, ok := m.Get("ts").Int()
	if !ok || ts <= 0 {
		out.Warn("a deleted_api_reqs without ts: the requests a checkpoint restore cut away are not counted")
		return 1
	}
	info, ok := n.uncounted(m, ts)
	if !ok {
		return 0
	}
	from, _ := prev.Get("ts").Int() // 0: everything before it
	f := figuresOf(info)
	seen := 0
	for t, s := range n.sums {
		if t > from && t < ts {
			f.in, f.out, f.cw, f.cr, f.cost = f.in-s.in, f.out-s.out, f.cw-s.cw, f.cr-s.cr, f.cost-s.cost
			seen++
		}
	}
	f.in, f.out, f.cw, f.cr = max(f.in, 0), max(f.out, 0), max(f.cw, 0), max(f.cr, 0)
	if f.cost < 1e-12 {
		f.cost = 0
	}
	n.summed(ts, f)
	what := "deleted_api_reqs"
	if roo {
		what = "api_req_deleted"
	}
	if f == (figures{}) {
		out.Ignored(sdk.S(what + " (counted)"))
		return 1
	}
	if roo && f.in >= f.cw+f.cr && ts >= n.grossFrom() {
		f.in -= f.cw + f.cr
	}
	n.addFigures(f, out)
	out.Warn(what + ": a checkpoint restore cut away API requests not read before; what its sum states for them is counted, as one request's (" +
		strconv.Itoa(seen) + " usage message(s) it sums were read before)")
	return 1
}

// failAsked says whether the UI's request at idx is followed, before the
// next request, by an ask api_req_failed: Cline asking to retry it.
func failAsked(elems []abi.Value, idx int) bool {
	for i := idx + 1; i < len(elems); i++ {
		m := elems[i]
		if m.Get("say").Is("api_req_started") {
			return false
		}
		if m.Get("ask").Is("api_req_failed") {
			return true
		}
	}
	return false
}

// failedAgain is what an ask api_req_failed (msg, code) reports: when
// it follows a request that failed while streaming, that failure (the
// request's message, code streaming_failed), or nothing when the
// request reported it already (same).
func (n *normalizer) failedAgain(msg, code string) (string, string, bool) {
	f := n.streamFail
	if !f.set {
		return msg, code, false
	}
	n.streamFail = streamFail{}
	if f.reported {
		return msg, code, true
	}
	return orText(f.msg, msg), "streaming_failed", false
}

// requestRunning says whether API request m (say api_req_started) is
// still running: Cline has not completed it with its figures or the
// reason it ended.
func requestRunning(m abi.Value) bool {
	doc, ok := sdk.ParseText(m.Get("text"))
	return ok && running(doc.Root())
}

// retryFailure is the failure a say error_retry reports (text its JSON
// {attempt, maxAttempts, delaySeconds, errorMessage, failed}): Cline
// says it before each automatic retry of a request that failed
// (attemptApiRequest), so a failure the task recovered from is listed
// too (spec 6.7: an error, then a later answer, is ok, the error
// recorded). Not when it states no errorMessage (older versions), nor
// when its retries are spent (failed: the ask api_req_failed after it
// reports it), nor when the failed request reported the same text (its
// streamingFailedMessage). Roo Code's api_req_retry_delayed (errorRetry
// false: Task.backoffAndAnnounce, RooCodeInc/Roo-Code src/core/task/Task.ts)
// is its failure too: its text is the error ("<status>\n<message>\n",
// older versions "<status> <message>\n\nRetry attempt N\n..."), with
// the countdown (<retry_timer>N</retry_timer>) while it runs.
func (n *normalizer) retryFailure(errorRetry bool, text string) (string, bool) {
	if !errorRetry {
		head, _, _ := strings.Cut(text, "<retry_timer>")
		head, _, _ = strings.Cut(head, "\n\n")
		msg := strings.Join(strings.Fields(head), " ")
		return msg, msg != ""
	}
	doc, ok := sdk.Parse([]byte(text))
	if !ok || doc.Root().Get("failed").Truthy() {
		return "", false
	}
	// One that states no error (older versions) is a retry, not a
	// failure's text: its warning says it, as api_req_retried's does.
	msg := errorText(strings.Clone(doc.Root().Get("errorMessage").String()))
	if strings.TrimSpace(msg) == "" {
		return "", false
	}
	if f := n.streamFail; f.set && f.reported && f.msg == msg {
		return "", false
	}
	return msg, true
}

// retrying says why the UI's last message m is a failed request's retry
// going on, "" when it is not one. Cline (cline/cline
// src/core/task/index.ts, attemptApiRequest) retries a request that
// failed in the same api_req_started: a say error_retry {attempt,
// maxAttempts, delaySeconds} before each of its automatic retries (with
// failed: true once they are spent, before the ask api_req_failed), and
// a say api_req_retried once the user chose to retry that ask; the
// retry's outcome completes the api_req_started, or fails again. Roo
// Code says api_req_retry_delayed before each automatic retry (it
// retries until the user stops it) and api_req_retried as Cline does.
func retrying(m abi.Value) string {
	switch say := m.Get("say"); {
	case say.Is("api_req_retried"):
		return "the task's last API request failed and the user retried it; the retry is still running (say api_req_retried)"
	case say.Is("api_req_retry_delayed"):
		return "the task's last API request failed and Roo Code is retrying it (api_req_retry_delayed)"
	case say.Is("error_retry"):
		doc, ok := sdk.ParseText(m.Get("text"))
		if !ok || doc.Root().Get("failed").Truthy() {
			return ""
		}
		r := doc.Root()
		attempt, max := r.Get("attempt"), r.Get("maxAttempts")
		if attempt.Kind() == abi.KindNumber && max.Kind() == abi.KindNumber {
			return "the task's last API request failed and Cline is retrying it (error_retry, attempt " + sdk.View(attempt) + " of " + sdk.View(max) + ")"
		}
		return "the task's last API request failed and Cline is retrying it (error_retry)"
	}
	return ""
}

// running says whether a request's info (api_req_started's text) is
// as Cline writes it when the request starts: no figures, no reason it
// ended.
func running(info abi.Value) bool {
	_, inOK := info.Get("tokensIn").Int()
	_, outOK := info.Get("tokensOut").Int()
	return !inOK && !outOK && info.Get("cost").Kind() != abi.KindNumber && !info.Get("cancelReason").Exists()
}

// firstRequest is the index of the UI's first API request (say
// api_req_started), msgs.Len() when there is none.
func firstRequest(msgs abi.Value) int {
	it := msgs.Iter()
	for i := 0; it.Next(); i++ {
		if it.Value().Get("say").Is("api_req_started") {
			return i
		}
	}
	return msgs.Len()
}
