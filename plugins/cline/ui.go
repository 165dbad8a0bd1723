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
	hashes, todo := diff(msgs, n.ui, "ui_messages", false, out)
	n.ui = hashes
	// The tail: the elements after the last request or answer of the
	// model. A request still running there (Cline wrote it when it
	// started and never completed it: nothing answered it) does not end
	// the tail: the task did not go on past an error before it, which
	// is still what the task ended on. A completion there is the answer
	// of the last attempt_completion call.
	tail := len(hashes)
	for i := len(hashes) - 1; i >= 0; i-- {
		m := msgs.Index(i)
		if m.Get("say").Is("api_req_started") && requestRunning(m) {
			continue
		}
		if m.Get("say").Is("api_req_started") || m.Get("say").Is("text") || m.Get("say").Is("tool") ||
			m.Get("say").Is("command") || m.Get("say").Is("reasoning") || m.Get("say").Is("completion_result") {
			tail = i + 1
			if m.Get("say").Is("completion_result") {
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
	n.stashConversation(msgs, todo)
	records := 0
	n.completion, n.completionTime = "", ""
	for _, i := range todo {
		m := msgs.Index(i)
		if m.Kind() != abi.KindObject {
			continue
		}
		switch {
		case m.Get("say").Is("api_req_started"), m.Get("say").Is("api_req_finished"):
			// Older versions wrote a request's figures in a separate
			// api_req_finished after it.
			records += n.apiRequest(m, i, "API request "+strconv.Itoa(i)+" of ui_messages", out)
		case m.Get("say").Is("error"), m.Get("ask").Is("api_req_failed"), m.Get("ask").Is("mistake_limit_reached"):
			code := strings.Clone(sdk.Name(m.Get("say")) + sdk.Name(m.Get("ask"))) // kept: not a view of the line
			msg := m.Get("text").String()
			if msg == "" {
				msg = code
			}
			if i >= tail {
				n.deferred = append(n.deferred, uiError{msg: msg, code: code})
			} else {
				out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S(code)})
			}
			records++
		case m.Get("say").Is("error_retry"), m.Get("say").Is("api_req_retry_delayed"):
			// Roo Code's api_req_retry_delayed holds the error, then
			// its countdown to the retry.
			out.Warn("the API request failed and was retried: " + clip(m.Get("text").String()))
			records++
		case m.Get("say").Is("api_req_retried"):
			// Cline's and Roo Code's older notice of a request retried
			// after it failed (ClineSay "api_req_retried", until Cline
			// removed it in 01617f9a05), without the error.
			out.Warn("the API request failed and was retried")
			records++
		case m.Get("say").Is("condense_context_error"):
			out.Warn("Roo Code could not condense the context: " + clip(m.Get("text").String()))
			records++
		case m.Get("say").Is("completion_result"):
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

func (n *normalizer) apiRequest(m abi.Value, idx int, what string, out *sdk.Out) int {
	// An element is the same request while it keeps its ts (Cline
	// completes it in place); another request at the same index (the
	// UI's messages cut back by a checkpoint restore, a deleted or
	// edited message, then the task went on) is a request of its own.
	ts, byTs := m.Get("ts").Int()
	byTs = byTs && ts > 0
	if byTs && n.countedTs[ts] || !byTs && n.counted[idx] {
		return 0
	}
	doc, ok := sdk.Parse([]byte(m.Get("text").String()))
	if !ok {
		return 0
	}
	info := doc.Root()
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
	} else {
		n.counted[idx] = true
	}
	records := 0
	var u sdk.Usage
	switch {
	case info.Get("apiProtocol").Is("openai") && inOK:
		// Roo Code (and its forks) state apiProtocol: over the OpenAI
		// protocol tokensIn is the whole prompt, the cache included.
		u.Input = sdk.N(in)
	case inOK || cwOK || crOK:
		// Cline keeps tokensIn, cacheWrites and cacheReads disjoint
		// (its message translator subtracts the cache from the
		// provider's input), as Roo does over the Anthropic protocol:
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
		msg := info.Get("streamingFailedMessage").String()
		if msg == "" {
			msg = "the API request failed while streaming"
		}
		out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S("streaming_failed")})
		records++
	case reason.Is("user_cancelled"):
		out.Warn(what + " was cancelled by the user")
		records++
	case reason.Exists():
		out.Warn(what + " ended: " + clip(reason.String()))
		records++
	}
	return records
}

// requestRunning says whether API request m (say api_req_started) is
// still running: Cline has not completed it with its figures or the
// reason it ended.
func requestRunning(m abi.Value) bool {
	doc, ok := sdk.Parse([]byte(m.Get("text").String()))
	return ok && running(doc.Root())
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
	for i, it := 0, msgs.Iter(); it.Next(); i++ {
		if it.Value().Get("say").Is("api_req_started") {
			return i
		}
	}
	return msgs.Len()
}
