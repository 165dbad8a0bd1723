package opencode

import (
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// v2Message handles a row of the message projection of OpenCode's v2
// runtime (table session_message: id, session_id, type, seq,
// time_created, time_updated, data; packages/core/src/session/sql.ts,
// and message.ts for data, the message without its id and type). One
// row is one message whole, rewritten in place as it grows: a row that
// comes again replaces what the message held, all of its blocks in
// their slots. An assistant message is one step of the model: its
// content (text, reasoning and tool items, in order), its finish reason,
// tokens, cost and error.
func (n *normalizer) v2Message(r abi.Value, out *sdk.Out) {
	rf := n.fRow.of(r)
	id, typ, d := rf[kID].String(), rf[kType].String(), rf[kData]
	if id == "" || d.Kind() != abi.KindObject {
		out.Unmapped(sdk.S("session_message_without_data"))
		return
	}
	switch typ {
	case "user", "synthetic", "system", "shell", "assistant":
	case "agent-switched", "model-switched":
		out.Ignored(sdk.S(typ)) // the session's settings, no turn
		return
	case "compaction":
		out.Warn("the session was compacted here: the model saw a summary of what came before")
		return
	default:
		out.Unmapped(sdk.S("session_message:" + typ))
		return
	}
	if n.copied(id, d, rf[kTimeCreated]) {
		// A fork's copy of its parent's history (projector.ts
		// projectFork copies the rows, their times as they were).
		out.Ignored(sdk.S(forkedHistory))
		return
	}
	m := n.msgs[id]
	if m == nil {
		m = &message{id: id, reported: map[string]bool{}}
		n.msgs[id] = m
		n.last = m
	}
	if n.current != nil && n.current != m {
		n.close(n.current, out)
	}
	n.current = m
	f := n.fInfo.of(d)
	m.setCreated(rf[kTimeCreated])
	m.setCreated(f[kTime].Get("created"))
	m.user = typ != "assistant"
	m.parts = m.parts[:0]
	switch typ {
	case "user":
		m.parts = append(m.parts, &part{id: "text", typ: "text", text: f[kText].String()})
		it := f[kFiles].Iter()
		for it.Next() {
			a := it.Value()
			m.parts = append(m.parts, &part{typ: "file", text: "[file " + a.Get("name").String() + " " + a.Get("mime").String() + "]"})
		}
	case "synthetic", "system":
		// Text OpenCode put before the model (a background command's
		// notice, the instructions): injected context.
		m.parts = append(m.parts, &part{typ: "text", text: f[kText].String(), synthetic: true})
	case "shell":
		// A command the user ran (its output goes to the model).
		m.parts = append(m.parts, &part{typ: "text", text: "$ " + f[kCommand].String() + "\n" + f[kOutput].String(), synthetic: true})
	case "assistant":
		n.v2Assistant(m, f, out)
	}
	out.Open(sdk.S(m.id), sdk.Message{User: m.user, ID: sdk.S(m.id), Model: sdk.Opt(m.model), Time: sdk.Opt(m.created)})
	m.open = true
	for i, q := range m.parts {
		n.block(m, i, q, out)
	}
	for _, q := range m.parts {
		n.effects(m, q, out)
	}
}

// v2Assistant reads an assistant message of the v2 runtime into m: its
// model, its content as parts, and its step's figures as a step-finish
// part. Its tokens are the v2 runtime's (session/runner
// publish-llm-event.ts): input the uncached input, output the visible
// output, reasoning apart; twasm's output is every output token.
func (n *normalizer) v2Assistant(m *message, f *fields, out *sdk.Out) {
	if id := f[kModel].Get("id"); id.Kind() == abi.KindString {
		m.model = keepString(m.model, id)
		out.LatestModel(id, &n.model)
	}
	m.finish = keepString(m.finish, f[kFinish])
	m.info = true
	if c, ok := f[kTime].Get("completed").Int(); (ok && c > 0) || m.finish != "" || f[kError].Kind() == abi.KindObject {
		m.done = true
	}
	it := f[kContent].Iter()
	for it.Next() {
		if q := n.v2Part(it.Value()); q != nil {
			m.parts = append(m.parts, q)
		}
	}
	if t := f[kTokens]; t.Kind() == abi.KindObject {
		q := &part{id: "step", typ: "step-finish", reason: m.finish, tokens: usage(n.fTokens.of(t))}
		q.tokens.Output = q.tokens.Output.Plus(q.tokens.Reasoning)
		q.cost, q.hasCost = f[kCost].Float()
		q.id = "step:" + m.id
		m.parts = append(m.parts, q)
	}
	if r := f[kRetry]; r.Kind() == abi.KindObject {
		// The v2 runtime is retrying the step's provider call
		// (session.retry.scheduled: message-updater.ts sets retry
		// {attempt, at, error} on the message and clears it when the
		// next step starts, the step fails or the execution ends): a
		// store read meanwhile says so. A warning: the step's outcome,
		// once it comes, decides.
		if key := "retry:" + r.Get("attempt").String(); !m.reported[key] {
			m.reported[key] = true
			out.Warn("OpenCode was retrying the provider call (attempt " + r.Get("attempt").String() + ") when the store was read: " + errMessage(r.Get("error")))
		}
	}
	if e := f[kError]; e.Kind() == abi.KindObject && !m.reported["message"] {
		m.reported["message"] = true
		m.errName, m.errText = errCode(e), errMessage(e)
		m.failed = true
	}
}

// v2Part is an item of a v2 assistant message's content as a part:
// text, reasoning, or a tool call with its state ({status, input,
// content, structured, error}; the item's time: created, ran,
// completed). Nil for an item of another type.
func (n *normalizer) v2Part(c abi.Value) *part {
	p := n.fPart.of(c)
	q := &part{id: p[kID].String(), typ: known(p[kType], partTypes), ignored: p[kIgnored].Truthy(), synthetic: p[kSynthetic].Truthy()}
	switch q.typ {
	case "text", "reasoning":
		q.text = p[kText].String()
	case "tool":
		st := n.fState.of(p[kState])
		// The call's id: the item's (core/src/session/message.ts), or its
		// callID where the item's id is its own (a message the v2 runtime
		// copied from an older session, session/message-backfill.ts).
		q.tool, q.callID, q.status = p[kName].String(), q.id, known(st[kStatus], statuses)
		if c := p[kCallID]; c.Kind() == abi.KindString && c.String() != "" {
			q.callID = c.String()
		}
		if in := st[kInput]; in.Kind() == abi.KindObject {
			q.input = sdk.JSON(in).Keep()
			q.command = in.Get("command").String()
		}
		var texts []string
		it := st[kContent].Iter()
		for it.Next() {
			if t := it.Value(); t.Get("type").Is("text") {
				texts = append(texts, t.Get("text").String())
			}
		}
		q.output = strings.Join(texts, "\n")
		q.errText = errMessage(st[kError])
		if st[kError].Kind() != abi.KindObject {
			q.errText = ""
		}
		q.interrupted = st[kError].Get("type").Is("aborted")
		so := st[kStructured]
		q.exit = sdk.IntOf(so.Get("exit"))
		q.signal = so.Get("signal").String()
		q.timedOut = so.Get("timeout").Truthy()
		if _, ok := q.exit.Value(); !ok && q.status == "completed" {
			q.exit = exitNotice(q)
		}
		t := p[kTime]
		q.start, q.end = millis(t.Get("ran")), millis(t.Get("completed"))
		if q.start == "" {
			q.start = millis(t.Get("created"))
		}
	default:
		return nil
	}
	return q
}

// idleOutcome is how the v2 runtime's latest execution of a session
// ended: the session row's idle_outcome (core session/projector.ts,
// projectIdle: "succeeded", "failed" or "interrupted", set with
// time_idle when the execution settles; an interruption by OpenCode's
// shutdown sets neither), and, in later builds, the failure's
// idle_error_type and idle_error_message.
type idleOutcome struct {
	outcome, errType, errText string
}

// idleOf reads the session row's idle outcome (rf its members).
func (n *normalizer) idleOf(rf *fields) {
	ms, ok := rf[kTimeIdle].Int()
	o := rf[kIdleOutcome].String()
	if !ok || ms <= 0 || o == "" {
		return
	}
	n.idleMs = ms
	n.idle = idleOutcome{outcome: o, errType: rf[kIdleErrorType].String(), errText: rf[kIdleErrorMessage].String()}
}

// idleSettles says whether the session's idle outcome is that of its
// newest message's execution: it settled at or after that message was
// created (a prompt sent after it starts an execution the outcome does
// not know yet).
func (n *normalizer) idleSettles() bool {
	if n.idle.outcome == "" {
		return false
	}
	m := n.last
	return m == nil || n.idleMs >= m.createdMs
}

// idleEnd settles the session's status at the end by its latest
// execution's outcome (idleSettles), which the messages alone may not
// tell, and reports whether it did: an execution that failed before any
// step began, or that failed or was interrupted with its newest
// assistant message left unfinished, says so only there. A failure the
// newest message states already is not listed again; one stated nowhere
// else is an error the provider reported (its message the row's
// idle_error_message, else the outcome). An interruption is a status
// incomplete below the terminal level, the turn cut. A success (or an
// outcome not known here, said in a warning) leaves the messages to say
// how the session stands, as without it.
func (n *normalizer) idleEnd(out *sdk.Out) bool {
	m := n.last
	answer := m != nil && !m.user && m.info
	switch n.idle.outcome {
	case "failed":
		if answer && m.errText != "" && !aborted(m.errName) {
			return true // the message's error, reported when it closed
		}
		msg := n.idle.errText
		if msg == "" {
			msg = "the session's last execution failed (OpenCode: idle_outcome failed)"
		}
		out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S(n.idle.errType)})
		return true
	case "interrupted":
		why := "the user interrupted the session's last execution (OpenCode: idle_outcome interrupted)"
		if answer && aborted(m.errName) {
			why = "the response was aborted: " + m.errText
		}
		out.Status(sdk.StatusIncomplete, sdk.S(why), sdk.LevelError)
		return true
	case "succeeded":
	default:
		out.Warn("the session's last execution ended with an outcome not known here: " + sdk.Clip(n.idle.outcome, 64))
	}
	return false
}
