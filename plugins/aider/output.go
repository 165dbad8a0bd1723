package aider

import (
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/wire"
)

// aider handles one of Aider's own lines ("> " stripped).
func (n *normalizer) aider(s string, out *sdk.Out) {
	n.start(out)
	// Read once: every test below that asks whether s is a question
	// and its answer takes it from c.
	c := parseConfirm(s)
	if n.traceback(s, c, out) {
		return
	}
	if n.afterError(s, c) {
		n.errLast = false
	}
	if n.failedReason(s, c, out) {
		return
	}
	if n.running != "" {
		switch {
		case hasPrefix(s, "Error running command: "):
			// run_cmd's error_print: the command could not run.
			n.settleRunning("failed", out, s)
			return
		case isInterrupt(s):
			n.settleRunning("cancelled", out, "interrupted (Ctrl-C)")
			return
		}
		if s != "" {
			n.settleRunning("", out)
		}
	}
	if !c.ok && s != "" {
		n.shellOK = n.shellOK && hasPrefix(s, "Running ")
	}
	switch {
	case hasPrefix(s, "Tokens: "):
		n.tokens(s, out)
	case isOldUsage(s):
		n.oldUsage(s, out)
	case hasPrefix(s, "Aider v"):
		n.version = strings.Clone(strings.TrimPrefix(s, "Aider ")) // kept: s is a view of the line
		out.Meta(sdk.Meta{ProviderVersion: sdk.S(n.version)})
	case hasPrefix(s, "Main model: ") || hasPrefix(s, "Model: ") || hasPrefix(s, "Models: "):
		// "Model: gpt-4" (before v0.19), "Model: gpt-4 using diff edit
		// format" (v0.19 to v0.28), "Models: gpt-4o with diff edit
		// format, weak model gpt-4o-mini" (v0.29 to v0.50), "Main model:
		// ... with ..." (v0.51 on; "Model: ..." without a weak model).
		m, format, _ := strings.Cut(s[strings.IndexByte(s, ':')+2:], " with ")
		m, _, _ = strings.Cut(m, " using ")
		m = strings.TrimSpace(m)
		n.architect = hasPrefix(format, "architect edit format")
		if m == "" || m == n.model {
			out.Ignored(sdk.S("model"))
			return
		}
		out.Meta(sdk.Meta{Model: sdk.S(m), Override: n.model != ""})
		n.model = strings.Clone(m) // kept: s is a view of the line
	case hasPrefix(s, "Editor model: "):
		// Architect mode's editor: the model of the answers to the
		// architect's plans Aider hands it.
		m, _, _ := strings.Cut(strings.TrimPrefix(s, "Editor model: "), " with ")
		n.editorModel = strings.Clone(strings.TrimSpace(m)) // kept: s is a view of the line
		out.Ignored(sdk.S("model"))
	case hasPrefix(s, "Applied edit to "):
		n.applied(strings.TrimPrefix(s, "Applied edit to "), out)
	case hasPrefix(s, "Commit ") && isSHA(s[len("Commit "):]):
		sha, msg, _ := strings.Cut(s[len("Commit "):], " ")
		id := n.call(out, "git_commit", "execute", `{"sha":`+quote(sha)+`,"message":`+quote(msg)+`}`)
		out.ToolResult(sdk.ToolResult{CallID: sdk.S(id), Name: sdk.S("git_commit"), Output: sdk.S(s), Status: sdk.S("completed")})
	case hasPrefix(s, "The LLM did not conform to the edit format") || hasPrefix(s, "Malformed response #"),
		hasPrefix(s, "Exception while updating files:"):
		// The edits failed: the answer's blocks were not applied
		// (apply_updates: a malformed answer, or an exception while
		// writing the files, its text on the next line).
		n.editFailed(s, out)
	case isMatchFailure(s):
		// The first line of Aider's reflection: the lines after it,
		// up to its last, are Aider's too (reflection).
		n.reflect = reflectIn
		out.Ignored(sdk.S("notice"))
	case hasPrefix(s, "Unable to commit: "):
		id := n.call(out, "git_commit", "execute", `{}`)
		out.ToolResult(sdk.ToolResult{CallID: sdk.S(id), Name: sdk.S("git_commit"), Error: sdk.S(s), IsError: true, Status: sdk.S("failed")})
	case n.errLast && c.ok && isURLOffer(c.q):
		// Aider's offer to open the documentation URL of the error
		// it just reported (check_and_open_urls, io.offer_url's own
		// question): the error's report, not the session going on
		// after the error.
		out.Ignored(sdk.S("error_url_offer"))
	case c.ok:
		n.confirm(c, out)
	case isProviderError(s):
		cls, msg := providerError(s)
		out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S(cls)})
		n.errLast = true
	case hasPrefix(s, "Retrying in "):
		out.Ignored(sdk.S("retry"))
	case isInterrupt(s):
		out.Ignored(sdk.S("interrupt"))
	case hasPrefix(s, "Running ") && n.shellOK:
		n.runShell(strings.TrimPrefix(s, "Running "), out)
	case hasPrefix(s, "Model ") && strings.HasSuffix(s, " has hit a token limit!"):
		// show_exhausted_error: the model's context window or output
		// limit was exhausted and the request ended (its figures and
		// advice follow, Aider's notices).
		out.Error(sdk.ProviderError{Message: sdk.S(s), Code: sdk.S("token_limit")})
		n.errLast = true
	case hasPrefix(s, "Empty response received from LLM."):
		// The model answered nothing (Aider's warning, "Check your
		// provider account?"): the request failed.
		out.Error(sdk.ProviderError{Message: sdk.S(s), Code: sdk.S("empty_response")})
		n.errLast = true
	default:
		// Aider's notices (the repository, the files added, a hint):
		// what the session did is in the prompts, answers and calls.
		out.Ignored(sdk.S("notice"))
	}
}

// isSHA reports whether s starts with a short commit hash and a space.
func isSHA(s string) bool {
	sha, _, ok := strings.Cut(s, " ")
	if !ok || len(sha) < 7 || len(sha) > 40 {
		return false
	}
	for i := 0; i < len(sha); i++ {
		if c := sha[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// call reports a tool call of Aider's own and returns its id.
func (n *normalizer) call(out *sdk.Out, name, kind, input string) string {
	n.calls++
	id := "aider-" + strconv.Itoa(n.calls)
	out.ToolCall(sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S(name), Kind: kind, Input: sdk.RawJSON(input)})
	return id
}

// applied reports an edit Aider applied to file, with the SEARCH/REPLACE
// blocks of the answer that edit it.
func (n *normalizer) applied(file string, out *sdk.Out) {
	var b strings.Builder
	b.WriteString(`{"path":` + quote(file) + `,"edits":[`)
	k := 0
	rest := n.edits[:0]
	for _, e := range n.edits {
		if !sameFile(e.file, file) {
			rest = append(rest, e)
			continue
		}
		if k > 0 {
			b.WriteByte(',')
		}
		k++
		b.WriteString(`{"search":` + quote(e.search) + `,"replace":` + quote(e.replace) + `}`)
	}
	n.edits = rest
	b.WriteString("]}")
	id := n.call(out, "edit", "edit", b.String())
	out.ToolResult(sdk.ToolResult{CallID: sdk.S(id), Name: sdk.S("edit"), Output: sdk.S("Applied edit to " + file), Status: sdk.S("completed")})
}

// editFailed reports the edits Aider could not apply ("The LLM did not
// conform to the edit format."): a call "edit" whose input is the
// answer's SEARCH/REPLACE blocks no "Applied edit to" line took. Its
// result, an error, waits for the reason Aider prints next
// (failedReason).
func (n *normalizer) editFailed(s string, out *sdk.Out) {
	n.settleFailed(out)
	var b strings.Builder
	b.WriteString(`{"edits":[`)
	for i, e := range n.edits {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"path":` + quote(strings.Trim(strings.TrimSpace(e.file), "`*:")) + `,"search":` + quote(e.search) + `,"replace":` + quote(e.replace) + `}`)
	}
	b.WriteString("]}")
	n.edits = n.edits[:0]
	n.failed = n.call(out, "edit", "edit", b.String())
	n.failedMsg = strings.Clone(s) // kept: s is a view of the line
}

// failedReason reads the Aider line after "The LLM did not conform to
// the edit format.": the help page's address is passed over, the next
// line is the reason, added to the failed edit's error. It reports
// whether s was taken.
func (n *normalizer) failedReason(s string, c confirmation, out *sdk.Out) bool {
	if n.failed == "" {
		return false
	}
	if hasPrefix(s, "Tokens: ") || hasPrefix(s, "Applied edit to ") || isProviderError(s) || c.ok {
		// No reason was printed: this line is read as itself.
		n.settleFailed(out)
		return false
	}
	if hasPrefix(s, "https://aider.chat/") && !n.failedURL {
		n.failedURL = true
		out.Ignored(sdk.S("notice"))
		return true
	}
	n.failedMsg += " " + s
	n.settleFailed(out)
	if isMatchFailure(s) {
		// The first line of Aider's reflection: the lines after
		// it, up to its last, are Aider's too (reflection).
		n.reflect = reflectIn
	}
	return true
}

// settleFailed reports the result of the failed edit waiting for its
// reason, if one waits.
func (n *normalizer) settleFailed(out *sdk.Out) {
	if n.failed == "" {
		return
	}
	out.ToolResult(sdk.ToolResult{CallID: sdk.S(n.failed), Name: sdk.S("edit"), Error: sdk.S(n.failedMsg), IsError: true, Status: sdk.S("failed")})
	n.failed, n.failedMsg, n.failedURL = "", "", false
}

// isMatchFailure reports whether s is the first line of Aider's
// reflection on blocks that failed: "# 1 SEARCH/REPLACE block failed to
// match!", "# 2 SEARCH/REPLACE blocks failed to match!".
func isMatchFailure(s string) bool {
	return hasPrefix(s, "# ") && strings.Contains(s, " SEARCH/REPLACE block") && strings.HasSuffix(strings.TrimSpace(s), "failed to match!")
}

// Where a line is in Aider's reflection on SEARCH/REPLACE blocks that
// failed to match ("# 1 SEARCH/REPLACE block failed to match!", then
// for each block its "## SearchReplaceNoExactMatch: ..." line, the block
// quoted and hints, blank lines among them; then the rule "The SEARCH
// section must exactly match ...", and when other blocks of the answer
// were applied, after a blank line, "# The other N SEARCH/REPLACE
// block(s) were applied successfully.", "Don't re-send them." and "Just
// reply with fixed versions of the block(s) above that failed to
// match.").
const (
	reflectNone   = iota // not in a reflection
	reflectIn            // before its rule
	reflectTail          // after the rule: "# The other ..." may follow
	reflectOthers        // in "# The other ...", up to "Just reply ..."
)

// reflectOther starts the part of a reflection that names the blocks
// that were applied.
const reflectOther = "# The other "

// reflectNext is where the line after line is in a reflection, line
// being at r.
func reflectNext(r int, line string) int {
	t := strings.TrimSpace(line)
	switch {
	case hasPrefix(t, reflectOther):
		return reflectOthers
	case r == reflectIn && hasPrefix(t, "The SEARCH section must exactly match"):
		return reflectTail
	case r == reflectOthers && hasPrefix(t, "Just reply with fixed versions of the"):
		return reflectNone
	}
	return r
}

// sameFile reports whether a block's file line names file (Aider may
// write it with the fence's language, backquotes or another separator).
func sameFile(blockFile, file string) bool {
	f := strings.Trim(strings.TrimSpace(blockFile), "`*:")
	norm := func(s string) string { return strings.ReplaceAll(s, "\\", "/") }
	return norm(f) == norm(file) || strings.HasSuffix(norm(f), "/"+norm(file)) || strings.HasSuffix(norm(file), "/"+norm(f))
}

// parseConfirm splits a line of Aider's confirm_ask (aider/io.py) into
// its question and the answer, in each shape Aider wrote it:
//
//   - v0.53 on: "... (Y)es/(N)o[/(A)ll/(S)kip all][/(D)on't ask again]
//     [Yes]: y", the answer the first letter of the choice;
//   - v0.52: "... [Y/n] y" (also "[y/N]", "[y/n]"), the answer y or n;
//   - v0.5 to v0.51: "...? y", the question and what the user typed
//     (y, n, yes, no; "yes" or "no" for --yes).
func parseConfirm(s string) confirmation {
	// Each shape is looked for only in a line holding its first byte
	// ("(", "[", "?"): most lines hold none, and each search for a
	// string costs a pass over the line (strings.LastIndex hashes every
	// byte). The bytes are sought eight at a time in the wasm build
	// (wire.IndexByte): TinyGo's strings.IndexByte, a byte a step, made
	// this function a fifth of the plugin's time in wasm.
	if wire.IndexByte(s, '(') >= 0 {
		if i := strings.Index(s, "(Y)es/(N)o"); i >= 0 {
			if j := strings.LastIndex(s, "]:"); j > i {
				return confirmation{strings.TrimSpace(s[:j+1]), strings.TrimSpace(s[j+2:]), true}
			}
			return confirmation{}
		}
	}
	if wire.IndexByte(s, '[') >= 0 {
		for _, tag := range []string{"[Y/n]", "[y/N]", "[y/n]"} {
			if j := strings.LastIndex(s, tag); j > 0 {
				if a := strings.TrimSpace(s[j+len(tag):]); isYesNo(a) {
					return confirmation{strings.TrimSpace(s[:j+len(tag)]), a, true}
				}
			}
		}
	}
	if wire.IndexByte(s, '?') < 0 {
		return confirmation{}
	}
	if j := strings.LastIndex(s, "? "); j > 0 {
		if a := strings.TrimSpace(s[j+2:]); isYesNo(a) {
			return confirmation{s[:j+1], a, true}
		}
	}
	return confirmation{}
}

// confirmation is a line of Aider's confirm_ask read by parseConfirm:
// the question and the answer (views of the line), ok when the line is
// one.
type confirmation struct {
	q, ans string
	ok     bool
}

// isYesNo reports whether a is an answer Aider's older confirmations
// wrote after the question: y, n, yes or no, in any case.
func isYesNo(a string) bool {
	switch strings.ToLower(a) {
	case "y", "n", "yes", "no":
		return true
	}
	return false
}

// confirm reports a question Aider asked and the user's answer as a
// call and its result: declined unless the answer is yes or all. Aider
// (every version) takes an answer for yes when it starts with "y", or
// with "a" for "(A)ll" (v0.53 on); no, "(S)kip all" and "(D)on't ask
// again" are each a no.
func (n *normalizer) confirm(c confirmation, out *sdk.Out) {
	q, ans := c.q, c.ans
	id := n.call(out, "confirm", "other", `{"question":`+quote(q)+`}`)
	r := sdk.ToolResult{CallID: sdk.S(id), Name: sdk.S("confirm"), Output: sdk.S(ans), Status: sdk.S("completed")}
	if declined(ans) {
		r.Status = sdk.S("declined")
	}
	out.ToolResult(r)
	n.shellOK = hasPrefix(q, "Run shell command") && !declined(ans)
}

// isInterrupt reports whether s is Aider's notice of a Ctrl-C.
func isInterrupt(s string) bool {
	// Sought only in a line holding a '^' (eight bytes a step: see
	// parseConfirm): most lines hold none.
	return wire.IndexByte(s, '^') >= 0 && (strings.Contains(s, "^C KeyboardInterrupt") || strings.Contains(s, "^C again to exit"))
}

// runShell reports a shell command Aider ran after the user allowed it
// ("Run shell command? ... y", then "Running <command>" for each of the
// answer's commands): a call "shell" (kind execute); the line after it
// may state its outcome (settleRunning).
func (n *normalizer) runShell(command string, out *sdk.Out) {
	n.calls++
	id := "aider-" + strconv.Itoa(n.calls)
	out.ToolCall(sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S("shell"), Kind: "execute", Command: sdk.S(command), Input: sdk.RawJSON(`{"command":` + quote(command) + `}`)})
	n.running = id
	if !n.runWarned {
		n.runWarned = true
		out.Warn("Aider does not log a shell command's exit status or output: a command it ran has no result (dangling) unless it could not run or was interrupted")
	}
}

// settleRunning reports the outcome of the shell command Aider ran, if
// one waits and the line after it states one: status "failed" with the
// error Aider printed, "cancelled" when the user interrupted it. Any
// other line leaves the call without a result (dangling): Aider went
// on, but the history states neither the command's exit status nor its
// output, and a result without a status would read as ok.
func (n *normalizer) settleRunning(status string, out *sdk.Out, msg ...string) {
	if n.running == "" {
		return
	}
	if status != "" {
		r := sdk.ToolResult{CallID: sdk.S(n.running), Name: sdk.S("shell"), Status: sdk.S(status), IsError: status == "failed"}
		if len(msg) > 0 {
			r.Error = sdk.S(msg[0])
		}
		out.ToolResult(r)
	}
	n.running = ""
}

// declined reports whether ans, the answer to a confirmation, refused
// it: Aider takes an answer for yes when it starts with "y", or with "a"
// for "(A)ll"; no, "(S)kip all" and "(D)on't ask again" are each a no.
func declined(ans string) bool {
	a := strings.ToLower(strings.TrimSpace(ans))
	return !hasPrefix(a, "y") && !hasPrefix(a, "a")
}

// confirmEcho reports whether a prompt line is the echo of a
// confirmation Aider answered from the user's earlier "(A)ll" or "(S)kip
// all" (io.py's confirm_ask logs it through user_input, "####"): the
// line of Aider's own that follows it says the same, and is the call.
func confirmEcho(text string) bool {
	i := strings.Index(text, "(Y)es/(N)o")
	return i >= 0 && strings.Contains(text[i:], "/(S)kip all") && strings.Contains(text[i:], "]: ")
}

// tokens reads "Tokens: 3.2k sent, 1.1k cache write, 2.0k cache hit, 222
// received. Cost: $0.01 message, $0.05 session." Aider prints tokens
// rounded (3.2k) and money to two or more places: the usage and the cost
// are as printed, which a warning says once.
func (n *normalizer) tokens(s string, out *sdk.Out) {
	toks, cost, _ := strings.Cut(strings.TrimPrefix(s, "Tokens: "), "Cost:")
	var u sdk.Usage
	any := false
	for _, part := range strings.Split(strings.TrimSuffix(strings.TrimSpace(toks), "."), ", ") {
		num, what, _ := strings.Cut(strings.TrimSpace(part), " ")
		v, exact, ok := figure(num)
		if !ok {
			continue
		}
		any = true
		if !exact {
			n.rounded = true
		}
		switch strings.TrimSuffix(strings.TrimSpace(what), ".") {
		case "sent":
			u.Input = sdk.N(v)
		case "received":
			u.Output = sdk.N(v)
		case "cache hit":
			u.CacheRead = sdk.N(v)
		case "cache write":
			u.CacheWrite = sdk.N(v)
		}
	}
	if !any {
		out.Unmapped(sdk.S("tokens"))
		return
	}
	out.Usage(u, sdk.ModeAdd)
	if strings.TrimSpace(cost) == "" {
		// v0.80 on, a reply that both read and wrote the cache has its
		// cost on the next line, without "> " (base_coder.py's
		// calculate_and_show_tokens_and_cost, sep "\n").
		n.costNext = true
	} else {
		n.cost(cost, out)
	}
	n.warnRounded(out)
}

// cost reads the cost part of a usage report, "$0.01 message, $0.05
// session." ("request" for "message" before v0.51): the session's cost
// is what Aider says the session cost so far. It reports whether s held
// it.
func (n *normalizer) cost(s string, out *sdk.Out) bool {
	found := false
	for _, part := range strings.Split(s, ", ") {
		num, what, _ := strings.Cut(strings.TrimSpace(part), " ")
		if !hasPrefix(strings.TrimSpace(what), "session") || !hasPrefix(num, "$") {
			continue
		}
		if usd, err := strconv.ParseFloat(strings.ReplaceAll(num[1:], ",", ""), 64); err == nil && usd >= 0 {
			// Aider's session figure holds the session so far; the
			// sessions before it in the same stream (a whole history
			// file imported as one run) are added.
			n.sessionCost = usd
			out.Cost(n.costBefore+usd, sdk.ModeSet)
			n.rounded = true // dollars to two or a few places
			found = true
		}
	}
	n.warnRounded(out)
	return found
}

// warnRounded says once that the usage and cost are as Aider printed
// them.
func (n *normalizer) warnRounded(out *sdk.Out) {
	if n.rounded && !n.warned {
		n.warned = true
		out.Warn("Aider prints token counts rounded (3.2k) and costs to a few places: this usage and cost are as Aider printed them, not exact")
	}
}

// isOldUsage reports whether s is the usage line of Aider v0.11 to
// v0.45 (base_coder.py, --no-stream only): "1234 prompt tokens, 56
// completion tokens, $0.001234 cost".
func isOldUsage(s string) bool {
	num, rest, ok := strings.Cut(s, " ")
	if !ok || !hasPrefix(rest, "prompt tokens, ") || !strings.Contains(rest, " completion tokens") {
		return false
	}
	_, _, ok = figure(num)
	return ok
}

// oldUsage reads the usage line of Aider v0.11 to v0.45: the reply's
// prompt and completion tokens, exact, and its cost (not the
// session's), to six places.
func (n *normalizer) oldUsage(s string, out *sdk.Out) {
	var u sdk.Usage
	cost, hasCost := 0.0, false
	for _, part := range strings.Split(s, ", ") {
		num, what, _ := strings.Cut(strings.TrimSpace(part), " ")
		switch what = strings.TrimSpace(what); {
		case what == "prompt tokens":
			if v, _, ok := figure(num); ok {
				u.Input = sdk.N(v)
			}
		case what == "completion tokens":
			if v, _, ok := figure(num); ok {
				u.Output = sdk.N(v)
			}
		case what == "cost" && hasPrefix(num, "$"):
			if usd, err := strconv.ParseFloat(num[1:], 64); err == nil && usd >= 0 {
				cost, hasCost = usd, true
			}
		}
	}
	out.Usage(u, sdk.ModeAdd)
	if hasCost {
		n.sessionCost += cost
		out.Cost(n.costBefore+n.sessionCost, sdk.ModeSet)
		n.rounded = true
	}
	n.warnRounded(out)
}

// isProviderError reports whether s is an error of the model's API as
// Aider logged it (providerError).
func isProviderError(s string) bool {
	prefix, rest := cutErrorPrefix(s)
	return hasPrefix(rest, "litellm.") && strings.Contains(rest, "Error") || prefix != ""
}

// cutErrorPrefix cuts the words Aider v0.3x to v0.5x put before an
// exception it could not retry: "BadRequestError: " and "Unexpected
// error: " (base_coder.py's send_message).
func cutErrorPrefix(s string) (prefix, rest string) {
	for _, p := range []string{"BadRequestError: ", "Unexpected error: "} {
		if r, ok := strings.CutPrefix(s, p); ok {
			return strings.TrimSuffix(p, ": "), r
		}
	}
	return "", s
}

// providerError reads a provider error line: "litellm.RateLimitError:
// message" (its code the class), and the older "BadRequestError:
// litellm.BadRequestError: message" and "Unexpected error:
// litellm.APIConnectionError: message".
func providerError(s string) (cls, msg string) {
	prefix, rest := cutErrorPrefix(s)
	if c, m, ok := strings.Cut(strings.TrimPrefix(rest, "litellm."), ":"); ok && hasPrefix(rest, "litellm.") {
		return c, strings.TrimSpace(m)
	}
	return prefix, strings.TrimSpace(rest)
}

// figure reads a token count as Aider prints it: "222", "1,234", "3.2k",
// "12k", "1.1M". exact is false when it was rounded.
func figure(s string) (v int64, exact, ok bool) {
	mul := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		mul, s = 1e3, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mul, s = 1e6, s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil || f < 0 || f > 1e15 {
		return 0, false, false
	}
	return int64(f*mul + 0.5), mul == 1, true
}

// quote is s as a JSON string.
func quote(s string) string {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			// Not ASCII: ToValidUTF8 decodes it rune by rune, which
			// an ASCII line (most) does not need.
			s = strings.ToValidUTF8(s, "\uFFFD")
			break
		}
	}
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	b = append(b, '"')
	// b is never written again: the string may share it (one
	// allocation, not two).
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// offerURL is the question of io.offer_url when its caller names none:
// Aider's offer to open an error's documentation URL.
const offerURL = "Open URL for more info?"

// isURLOffer reports whether question q of a confirmation line is
// io.offer_url's question of its own (its choices follow it).
func isURLOffer(q string) bool {
	return hasPrefix(q, offerURL)
}

// afterError reports whether Aider's line s is an event of the session
// (a usage report, an edit, a commit, a question other than an error's
// offer of its URL, a shell command, an edit-format failure): one that
// comes after an error, not in its report.
func (n *normalizer) afterError(s string, c confirmation) bool {
	if c.ok {
		return !isURLOffer(c.q)
	}
	switch {
	case hasPrefix(s, "Tokens: "), isOldUsage(s), hasPrefix(s, "Applied edit to "),
		hasPrefix(s, "Commit ") && isSHA(s[len("Commit "):]), hasPrefix(s, "Unable to commit: "),
		hasPrefix(s, "Running ") && n.shellOK, isMatchFailure(s),
		hasPrefix(s, "The LLM did not conform to the edit format"), hasPrefix(s, "Malformed response #"):
		return true
	}
	return false
}

// traceback handles Aider's line s while or when it prints a traceback,
// and reports whether it took the line. base_coder.py's send_message
// prints traceback.format_exception of an exception it caught, then
// str(err), and gives the message up: a traceback with no error before
// it is the error, its exception (the last "Class: message" line) a
// provider error, code the class, reported at the str(err) line that
// follows it (Aider's error line), else when the traceback ends. One
// after an error (litellm's errors carry the traceback of their cause)
// is that error's report. Any of Aider's events ends it (afterError, a
// provider error, "Retrying in ...", a question), and so does a line not
// of Aider's (Line) and the end of the input.
func (n *normalizer) traceback(s string, c confirmation, out *sdk.Out) bool {
	if s == "Traceback (most recent call last):" {
		if !n.trace {
			n.trace, n.traceOwn, n.traceCls, n.traceMsg = true, !n.errLast, "", ""
		}
		out.Ignored(sdk.S("traceback"))
		return true
	}
	if !n.trace {
		return false
	}
	if n.afterError(s, c) || isProviderError(s) || c.ok || hasPrefix(s, "Retrying in ") {
		n.endTrace(out)
		return false
	}
	if cls, msg, ok := exceptionLine(s); ok {
		n.traceCls, n.traceMsg = strings.Clone(cls), strings.Clone(msg) // kept: s is a view of the line
	} else if n.traceMsg != "" && s == n.traceMsg && n.traceOwn {
		// str(err): Aider's error line, the exception's message.
		n.trace = false
		out.Error(sdk.ProviderError{Message: sdk.S(n.traceMsg), Code: sdk.S(n.traceCls)})
		n.errLast = true
		return true
	}
	out.Ignored(sdk.S("traceback"))
	return true
}

// endTrace ends a traceback being read: its exception, when no error
// came before it, is the error.
func (n *normalizer) endTrace(out *sdk.Out) {
	if !n.trace {
		return
	}
	n.trace = false
	if n.traceOwn && n.traceMsg != "" {
		out.Error(sdk.ProviderError{Message: sdk.S(n.traceMsg), Code: sdk.S(n.traceCls)})
		n.errLast = true
	}
}

// exceptionLine reads the last line of a Python traceback, "Class:
// message" (the class maybe dotted: "json.decoder.JSONDecodeError"),
// whose class names an error or an exception; cls is the class's own
// name.
func exceptionLine(s string) (cls, msg string, ok bool) {
	c, m, found := strings.Cut(s, ": ")
	if !found || c == "" {
		return "", "", false
	}
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '.') {
			return "", "", false
		}
	}
	last := c[strings.LastIndexByte(c, '.')+1:]
	if !strings.HasSuffix(last, "Error") && !strings.HasSuffix(last, "Exception") {
		return "", "", false
	}
	return last, strings.TrimSpace(m), true
}
