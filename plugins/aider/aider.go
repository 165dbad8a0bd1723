package aider

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the Aider normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "aider",
		Version:     "0.1.0",
		Providers:   []string{"aider"},
		Formats:     []string{fmtHistory},
		Description: "Aider chat histories (<repo>/.aider.chat.history.md, one run per session)",
		// The facts line names the repository the history is in (ABI
		// 1.8): the run's project. Nothing in the file says it.
		SourceFacts: true,
		// Aider appends every session to .aider.chat.history.md in the
		// repository it runs in, and never deletes one (doc.go, "Store").
		Stores: []abi.Store{{
			Name: "Aider chat history", Kind: abi.StoreKindSections,
			Roots:        []abi.Root{{Projects: true}},
			Pattern:      ".aider.chat.history.md",
			SessionStart: SessionStart,
		}},
	},
	New: func(abi.BeginOptions) sdk.Normalizer { return &normalizer{kind: sdk.BlockText} },
}

// SessionStart is the prefix of the line Aider writes at the start of a
// session.
const SessionStart = "# aider chat started at "

// fmtHistory is the format name reported in OpMeta and the manifest.
const fmtHistory = "chat-history"

// normalizer is the per-stream state: only Go strings, bools and numbers
// are kept across lines.
type normalizer struct {
	started  bool
	prompted bool   // a prompt was read (text before one is not an answer)
	user     string // key of the open user message ("": none)
	asst     string // key of the open assistant message ("": none)
	blank    int    // blank lines read since the open assistant message's last text
	// slot, kind: the open assistant message's block being written
	// (text, or thinking between Aider's reasoning tags); has: it holds
	// text.
	slot    int
	kind    string
	has     bool
	msgs    int // messages opened
	calls   int // tool calls reported
	model   string
	version string
	rounded bool // a rounded figure was reported
	warned  bool // the warning saying so was given
	// costBefore is what the earlier sessions of the stream cost,
	// sessionCost what Aider said the current one cost so far.
	costBefore, sessionCost float64
	// SEARCH/REPLACE blocks of the open answer, by file, for the
	// "Applied edit to" calls that follow it.
	edits   []edit
	inBlock int    // 0 none, 1 in SEARCH, 2 in REPLACE
	file    string // the file the block being read edits
	search  strings.Builder
	replace strings.Builder
	lastTxt []byte // the last non-blank text line (a block's file name)
	// afterAider: the previous line was one of Aider's own, with no
	// blank line since (a line of it that held a line end goes on
	// without "> ").
	afterAider bool
	// costNext: the previous line was a usage report whose cost goes
	// on the next line ("Cost: ...", without "> ").
	costNext bool
	// reflect: where the line is in Aider's reflection on
	// SEARCH/REPLACE blocks that failed to match, whose lines after the
	// first have no "> " (reflectNone, reflectIn, reflectTail,
	// reflectOthers).
	reflect int
	// failed is the id of the failed edit whose result waits for
	// Aider's reason (failedMsg so far; failedURL: the help page's
	// address was read).
	failed, failedMsg string
	// shellOK: the last confirmation was Aider's "Run shell command(s)?"
	// and the user said yes; running: the id of the shell command Aider
	// reported running ("Running <command>") whose end no later line
	// showed yet; runWarned: the warning that Aider logs no command's
	// outcome was given.
	shellOK, runWarned bool
	running            string
	// architect: the session's edit format is architect (or the last
	// prompt was "/architect ..."); editorModel: the editor's model;
	// answerFirst: the first line of the text of the last answer since
	// the last prompt; editing: the answer being read is the editor's.
	architect, oneArchitect, editing bool
	editorModel, answerFirst         string
	// errLast: the last of Aider's events was a provider error (only its
	// report since: the rest of its message, its URL, a traceback).
	errLast bool
	// trace: Aider is printing a traceback (an exception
	// traceback.format_exception wrote); traceOwn: no error came before
	// it, so its exception (traceCls, traceMsg: the last "Class:
	// message" line) is the error.
	trace, traceOwn    bool
	traceCls, traceMsg string
	failedURL          bool
	lastNo             int // the number of the last line read
}

// edit is one SEARCH/REPLACE block of an answer.
type edit struct{ file, search, replace string }

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	// A view of the line, not a copy (TinyGo allocates every copy, and
	// most lines are only looked at): valid during this call, like
	// l.Raw; what is kept of it is copied where it is kept.
	raw := l.Raw
	if len(raw) > 0 && raw[len(raw)-1] == '\r' {
		raw = raw[:len(raw)-1]
	}
	line := unsafe.String(unsafe.SliceData(raw), len(raw))
	if gap := l.No - n.lastNo - 1; gap > 0 {
		// Blank lines the host did not hand over.
		n.blanks(gap, out)
	}
	n.lastNo = l.No
	if v := l.JSON(); v.Kind() == abi.KindObject && v.Get("$twasm").Is(abi.SourceFactsType) {
		// The host's facts line, before a session's bytes or before
		// what a session appended since (it may fall inside an answer:
		// the state around it is left as it was).
		if p := sdk.FactsProject(v); p.IsSet() {
			out.Meta(sdk.Meta{Project: p})
		}
		out.Ignored(sdk.S("twasm_source"))
		return nil
	}
	after, costNext := n.afterAider, n.costNext
	n.afterAider, n.costNext = false, false
	// Each asked once (TinyGo calls out of line for every compare).
	blank, aiders := strings.TrimSpace(line) == "", hasPrefix(line, ">")
	if n.reflect == reflectTail && !blank && !hasPrefix(line, reflectOther) {
		// The reflection ended with its rule: this line is the
		// model's reply or Aider's next.
		n.reflect = reflectNone
	}
	if !aiders && !blank {
		// A prompt, an answer or a session start: a traceback before
		// it is over, and so is an error's report.
		n.endTrace(out)
		n.errLast = false
	}
	if !aiders {
		n.settleFailed(out)
		if !blank {
			// A prompt, an answer or a session after a command
			// Aider ran: it ended, how the history does not say.
			n.settleRunning("", out)
		}
	}
	switch {
	case hasPrefix(line, SessionStart):
		n.reflect = reflectNone
		n.closeAll(out)
		n.session(line, out)
	case hasPrefix(line, "#### ") && confirmEcho(line):
		// A confirmation answered from the user's earlier choice, or a
		// word the user typed as the answer ("all", "skip"), echoed as
		// a prompt: Aider's line after it is the call.
		out.Ignored(sdk.S("confirm_echo"))
	case hasPrefix(line, "#### ") || line == "####":
		n.reflect = reflectNone
		n.closeAsst(out)
		n.prompt(strings.TrimPrefix(strings.TrimPrefix(hardBreak(line), "####"), " "), out)
	case n.reflect != reflectNone && !hasPrefix(line, "> "):
		// Aider's reflection on blocks that failed to match (its
		// first line was one of Aider's): its SEARCH/REPLACE blocks
		// quote the answer and are no edits.
		n.reflect = reflectNext(n.reflect, line)
		out.Ignored(sdk.S("notice"))
	case aiders && n.inBlock == 0:
		n.reflect = reflectNone
		n.closeAll(out)
		n.afterAider = true
		n.aider(strings.TrimPrefix(strings.TrimPrefix(hardBreak(line), ">"), " "), out)
	case blank:
		n.blanks(1, out)
		out.Ignored(sdk.S("blank"))
	case after && costNext && hasPrefix(line, "Cost: "):
		// The cost of the usage report on the line before.
		n.afterAider = true
		if !n.cost(strings.TrimPrefix(hardBreak(line), "Cost: "), out) {
			out.Unmapped(sdk.S("cost"))
		}
	case after:
		// The rest of a line of Aider's that held a line end (a
		// command line with a multi-line --message).
		n.afterAider = true
		out.Ignored(sdk.S("notice"))
	default:
		n.closeUser(out)
		n.text(line, out)
	}
	return nil
}

// blanks handles k blank lines: they end a prompt and Aider's line, and
// are kept in an answer once text follows them.
func (n *normalizer) blanks(k int, out *sdk.Out) {
	n.closeUser(out)
	n.afterAider = false
	if n.asst == "" {
		return
	}
	n.blank += k
	for i := 0; i < k && n.inBlock != 0; i++ {
		n.block("")
	}
}

// hardBreak drops the two spaces Aider ends its own lines with (a
// markdown line break).
func hardBreak(s string) string { return strings.TrimSuffix(s, "  ") }

// start reports the format once: a chat history has no terminal record,
// the host settles the status by the session rule of spec §6.7.
func (n *normalizer) start(out *sdk.Out) {
	if n.started {
		return
	}
	n.started = true
	out.Meta(sdk.Meta{Format: sdk.S(fmtHistory), NoTerminal: true})
}

// session handles a session's start line.
func (n *normalizer) session(line string, out *sdk.Out) {
	n.costBefore += n.sessionCost
	n.sessionCost = 0
	n.architect, n.oneArchitect, n.editing, n.editorModel, n.answerFirst = false, false, false, "", ""
	if n.started {
		// Another session in the same stream (a whole history file
		// imported as one run): its header says so, nothing more.
		out.Ignored(sdk.S("session_start"))
		return
	}
	n.start(out)
}

// prompt handles a "#### " line: the user's prompt, one line of it.
func (n *normalizer) prompt(text string, out *sdk.Out) {
	n.start(out)
	n.prompted = true
	n.shellOK = false
	if n.user != "" {
		out.Append(sdk.S(n.user), 0, sdk.BlockText, sdk.S("\n"+text))
		return
	}
	n.msgs++
	n.user = "m" + strconv.Itoa(n.msgs)
	out.Open(sdk.S(n.user), sdk.Message{User: true})
	origin := sdk.OriginPrompt
	relay := (n.architect || n.oneArchitect) && n.answerFirst != "" && strings.TrimSpace(text) == n.answerFirst
	switch {
	case relay:
		// Architect mode: Aider hands the architect's answer to the
		// editor model as its request and writes it as the user's
		// input (the editor coder's run with_message): the architect's
		// words again, not the user's; the answer after it is the
		// editor's.
		origin = sdk.OriginInjected
		n.editing = true
	case localCommand(text):
		origin = sdk.OriginInjected
		n.editing = false
	default:
		n.editing = false
		n.oneArchitect = hasPrefix(strings.TrimSpace(text), "/architect ")
	}
	n.answerFirst = ""
	out.Block(sdk.S(n.user), 0, sdk.Block{Type: sdk.BlockText, Text: sdk.S(text), Origin: origin})
}

// modelCommands are Aider's in-chat commands that send the model a
// request (/ask, /code, /architect, /context and /help with a question;
// /test and /lint when they fail and Aider asks for a fix).
var modelCommands = []string{"ask", "code", "architect", "context", "help", "test", "lint", "ok"}

// localCommand reports whether a prompt's first line is one of Aider's
// in-chat commands that Aider carries out itself, with no request to the
// model ("/add", "/drop", "/run" and its alias "!", "/copy-context",
// "/exit", an unknown one such as "/bye", which Aider refuses; a path
// such as "/tmp/app.log" is taken for the user's words): the
// user's word to Aider, written as injected context, so a session that
// ends on one does not end on a prompt waiting for an answer (as Claude
// Code's local slash commands).
func localCommand(text string) bool {
	t := strings.TrimSpace(text)
	if hasPrefix(t, "!") {
		return true
	}
	name, ok := strings.CutPrefix(t, "/")
	if !ok || name == "" {
		return false
	}
	if i := strings.IndexAny(name, " \t"); i >= 0 {
		name = name[:i]
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			// A path ("/tmp/app.log"), not a command's name: read as
			// the user's words.
			return false
		}
	}
	for _, c := range modelCommands {
		if name == c {
			return false
		}
	}
	return true
}

// reasoningTag is the tag Aider wraps a model's reasoning in when it
// writes the answer to the history (aider/reasoning_tags.py
// format_reasoning_content: the opening tag, a blank line, the
// reasoning, a blank line, the closing tag, then the answer).
const reasoningTag = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"

// text handles a line of the assistant's markdown answer: the answer's
// text, or its reasoning between Aider's reasoning tags (a thinking
// block, whose SEARCH/REPLACE blocks are drafts, no edits).
func (n *normalizer) text(line string, out *sdk.Out) {
	if !n.prompted {
		// Text before any prompt (a note a person put at the top of
		// the file) is no answer.
		out.Ignored(sdk.S("text_before_prompt"))
		return
	}
	t := strings.TrimSpace(line)
	if rest, ok := strings.CutPrefix(t, "<"+reasoningTag+">"); ok {
		n.nextBlock(sdk.BlockThinking)
		n.tagLine(rest, out)
		return
	}
	if rest, ok := strings.CutPrefix(t, "</"+reasoningTag+">"); ok && n.kind == sdk.BlockThinking {
		n.nextBlock(sdk.BlockText)
		n.tagLine(rest, out)
		return
	}
	n.block(line)
	n.put(line, out)
}

// nextBlock makes the answer's next text a block of type kind, after
// the block being written if it holds text.
func (n *normalizer) nextBlock(kind string) {
	if n.has {
		n.slot++
	}
	n.kind, n.has, n.blank, n.inBlock = kind, false, 0, 0
}

// tagLine handles the rest of a line that held a reasoning tag: text
// after the tag starts the block, a bare tag is declared ignored.
func (n *normalizer) tagLine(rest string, out *sdk.Out) {
	if strings.TrimSpace(rest) != "" {
		n.put(rest, out)
		return
	}
	out.Ignored(sdk.S("reasoning_tag"))
}

// put writes a line of the answer to its current block (blank lines read
// since its last line kept), opening the answer and the block first.
func (n *normalizer) put(line string, out *sdk.Out) {
	if n.asst == "" {
		n.msgs++
		n.asst = "m" + strconv.Itoa(n.msgs)
		m := sdk.Message{}
		switch {
		case n.editing && n.editorModel != "":
			m.Model = sdk.S(n.editorModel)
		case n.model != "":
			m.Model = sdk.S(n.model)
		}
		out.Open(sdk.S(n.asst), m)
		n.answerFirst = ""
	}
	if n.kind == sdk.BlockText && n.answerFirst == "" && strings.TrimSpace(line) != "" {
		n.answerFirst = strings.Clone(strings.TrimSpace(line)) // kept: line is a view
	}
	if !n.has {
		n.has, n.blank = true, 0
		b := sdk.Block{Type: n.kind, Text: sdk.S(line)}
		if n.kind == sdk.BlockThinking {
			b = sdk.Block{Type: n.kind, Thinking: sdk.S(line)}
		}
		out.Block(sdk.S(n.asst), n.slot, b)
		return
	}
	out.Append(sdk.S(n.asst), n.slot, n.kind, sdk.S(newlines(n.blank+1)+line))
	n.blank = 0
}

// someNewlines is where newlines takes the common short runs from.
const someNewlines = "\n\n\n\n\n\n\n\n"

// newlines is k line ends: a slice of a constant for a few (no
// allocation: each line of an answer is written after one), else
// strings.Repeat.
func newlines(k int) string {
	if k <= len(someNewlines) {
		return someNewlines[:k]
	}
	return strings.Repeat("\n", k)
}

// block follows the SEARCH/REPLACE blocks of an answer: the file a block
// edits is the last text line before its fence.
func (n *normalizer) block(line string) {
	t := strings.TrimSpace(line)
	switch {
	case hasPrefix(t, "<<<<<<< SEARCH"):
		n.inBlock, n.file = 1, string(n.lastTxt)
		n.search.Reset()
		n.replace.Reset()
	case n.inBlock == 1 && hasPrefix(t, "=======") && len(strings.Trim(t, "=")) == 0:
		n.inBlock = 2
	case n.inBlock != 0 && hasPrefix(t, ">>>>>>> REPLACE"):
		if n.kind != sdk.BlockThinking {
			// A block drafted in the reasoning is no edit.
			n.edits = append(n.edits, edit{file: n.file, search: n.search.String(), replace: n.replace.String()})
		}
		n.inBlock = 0
	case n.inBlock == 1:
		n.search.WriteString(line + "\n")
	case n.inBlock == 2:
		n.replace.WriteString(line + "\n")
	case t != "" && !hasPrefix(t, "```"):
		n.lastTxt = append(n.lastTxt[:0], t...) // kept: line is a view
	}
}

// closeUser closes the open prompt.
func (n *normalizer) closeUser(out *sdk.Out) {
	if n.user != "" {
		out.Close(sdk.S(n.user), sdk.MessageEnd{})
		n.user = ""
	}
}

// closeAsst closes the open answer.
func (n *normalizer) closeAsst(out *sdk.Out) {
	if n.asst != "" {
		out.Close(sdk.S(n.asst), sdk.MessageEnd{})
		n.asst = ""
	}
	n.inBlock = 0
	n.slot, n.kind, n.has = 0, sdk.BlockText, false
}

func (n *normalizer) closeAll(out *sdk.Out) {
	n.closeUser(out)
	n.closeAsst(out)
}

// End implements sdk.Normalizer: what is open is closed.
func (n *normalizer) End(out *sdk.Out) error {
	n.settleFailed(out)
	n.closeAll(out)
	n.endTrace(out)
	return nil
}

// hasPrefix is strings.HasPrefix with the first bytes compared inline: a
// line is tried against many prefixes, most of which differ from it in
// the first byte, and TinyGo compares two strings with a call
// (runtime.stringBytesEqual), which made a call of every test in the
// wasm build.
func hasPrefix(s, p string) bool {
	return len(s) >= len(p) && (p == "" || s[0] == p[0]) && s[:len(p)] == p
}
