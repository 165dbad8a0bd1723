// Package views turns transcripts into what a person or a script reads:
// the execution tree across linked child runs, a markdown (or plain text)
// rendering, the tool ledger, aggregate statistics and a one-line compact
// form of an event. It holds the logic of twasm's read commands so that the
// commands themselves only parse flags and print, and so that other
// commands (record --live) can reuse the same renderings.
//
// The execution tree ([BuildTree]) and the digests' tree ([DigestTree])
// follow child runs by runtree's rules, as the exporters do: a link not
// followed is named on its step (StepNode.ChildError).
//
// Everything here reads; nothing writes a transcript. Functions take their
// input as values or readers and do no global state; the only I/O is
// opening transcript files through a [Loader].
//
// # How the transcript view reads
//
// WriteView was compared side by side with claude-code-log (Claude Code
// sessions as HTML) and `llm logs` (Simon Willison's llm, markdown) on the
// same sessions; what reads better was kept:
//
//   - One unit per tool call, its result beside it, as claude-code-log
//     pairs tool_use with tool_result. The tool_use, command and
//     tool_result blocks of a message are not shown again when the call
//     is a tool.call event: `llm logs` lists "Tool calls" and "Tool
//     results" apart (its author found a call's round trip hard to follow
//     that way, simonw/llm#1080), and the old view showed a call two or
//     three times. The call's line carries the time, the name, the kind,
//     the status, the exit code, the duration and the call id. A
//     revised call or result (transcript.RevisedField: a new version of
//     an earlier one) is that call: shown once, at its latest version,
//     with its latest result (transcript.Superseded, PairEvents), and
//     counted once by the tree, the ledger and the statistics, with its
//     latest input and outcome.
//   - Inputs as what they are: a shell command as `$ command` in a sh
//     block; apply_patch patches, Edit/MultiEdit old and new strings,
//     Write/create contents and codex file_change changes as a unified
//     diff (claude-code-log shows edits as diffs; `llm logs` prints the
//     raw arguments, which is what the old view did with escaped JSON
//     strings); anything else as indented JSON.
//   - Long outputs, errors and inputs are folded (markdown <details>, a
//     summary with their size) past 12 lines or 1200 bytes, and cut to
//     --max-output bytes with a note, errors and headings included.
//   - Every message and call has its time (HH:MM:SS UTC; the header has
//     the date), as both tools show timestamps.
//   - A step ends with a footer: status, exit code, duration, the
//     provider's error, warnings, lines lost or unmapped, the command line
//     and directory, and the tail of the agent's stderr; `llm logs` ends
//     an entry with its token usage, which the header has per step. The
//     final answer of the result (Claude's --output-format json) is shown
//     when no message holds it.
//   - Terminal escape sequences (CSI, OSC, DCS, ...) are removed whole
//     from everything shown (StripEscapes), never left as "[31m".
//   - --only errors keeps failed, denied and cancelled calls (Failed) and
//     the footer of a step that is not ok.
//   - A run's header counts its own tool calls and, when it has sub-runs
//     (sub-agents), theirs apart and the two together, and the same for
//     tokens (RunNode.Usage, SubRuns, Totals). A sub-agent's run has no
//     agent step: its usage is its messages' (RunUsage), which is not in
//     the usage of the step that started it (spec §6.10); stats counts
//     it apart (Stats.SubRunUsage) and with the rest (UsageInAll), and
//     the listing line has the run's own, its sub-runs' and the two
//     together (RunSummary.Usage, SubRunUsage, UsageInAll). A run another
//     supersedes (holding its messages again: the sub-agents of an
//     interrupted archive, a sub-agent's file first linked at its
//     session's latest part and archived again at its call,
//     lifecycle.SupersedesField and SupersededByField) is left out, so
//     that every token is counted once: stats leaves out the agent
//     steps' figures of such a child run too (Stats.Usage).
//   - Money is never summed as a float: the stated costs (cost_usd) are
//     summed in micro-dollars (RunSummary.CostUSD, Stats.Cost, CostUSD
//     hold the rounded sum, for older readers), and the cost with its
//     provenance (RunSummary.Cost, Stats.Priced: prices.Cost) is set by
//     the commands from package usage, which prices the runs' ledgers.
//     A cost a provider states for a step may count its sub-agents' too
//     (StatedCostCountsSubRuns: Claude Code's); the view says so beside
//     such a step's cost when it links a child run, and package usage
//     does not price those child runs again.
//   - Tokens are shown as the providers bill them (UsageFigures): uncached
//     input, cache read, cache write, output, never an input that holds
//     the cache.
//   - A session is counted once: a run rebuilt by renormalize stands for
//     the run it was rebuilt from (Superseded; RunNode.RenormalizedFrom)
//     once it has ended (a rebuild without run.completed, a renormalize
//     killed while it wrote it, holds part of the original and stands
//     for nothing: its SupersededBy is the original, UnfinishedRebuild),
//     and a run whose end names the run that holds it again stands for
//     nothing (RunNode.SupersededBy: a sub-agent's file an older twasm
//     archived as a session of its own, now a child run of its
//     session's; an archive left interrupted), and a run whose start
//     names ended runs it holds again stands for them
//     (RunNode.SupersedesRuns: an agent's session archived from one of
//     its stores and ended before its other store's copy was archived;
//     a damaged run that had ended before sync --repair archived its
//     session again), unless its own end names a run that holds it
//     again (a repair a kill cut short before its first part: the
//     damaged run stands).
//     A run recorded from an agent's output (twasm record: claude -p,
//     codex exec --json, goose run), whose every agent step names a
//     session (provider and session id, RunNode.Sessions) that a run
//     archived from the agent's own store holds (RunNode.Archived: twasm
//     sync or import), stands for nothing: the agent wrote those turns
//     to its store too, and the archived run holds them with the rest of
//     the session. A recorded run the store does not hold, or with a step
//     naming no session, still counts.
//
// Kept from twasm's own view rather than the others: markdown that is
// safe to paste (fences longer than any backtick run in the text), the
// plain text form for terminals and pagers, sub-runs nested in place, and
// the problems section at the end.
package views

import (
	"fmt"
	"io"
	"strings"
)

// docWriter is the small set of constructs the transcript view needs,
// written either as GitHub-flavoured markdown or as plain text, so that the
// two formats share one walk of the transcript.
type docWriter interface {
	heading(level int, s string)
	para(s string)
	kv(pairs [][2]string)
	fold(summary, body string, code bool)
	// foldCode is a folded code block in language lang.
	foldCode(summary, lang, body string)
	code(lang, body string)
	item(s string)
	// inline quotes a short literal (a name, a command) for the format.
	inline(s string) string
	strong(s string) string
	err() error
}

type baseWriter struct {
	w io.Writer
	e error
}

func (b *baseWriter) printf(format string, args ...any) {
	if b.e == nil {
		_, b.e = fmt.Fprintf(b.w, format, args...)
	}
}

func (b *baseWriter) err() error { return b.e }

// mdWriter writes markdown. Untrusted text goes in fences or inline code
// spans sized to outlast any backtick run inside, so transcript content
// cannot break out of them; plain paragraphs (assistant text, the prompt)
// are markdown already and are kept as written.
type mdWriter struct{ baseWriter }

func (m *mdWriter) heading(level int, s string) {
	m.printf("%s %s\n\n", strings.Repeat("#", min(max(level, 1), 6)), oneLine(s))
}

func (m *mdWriter) para(s string) {
	if s == "" {
		m.printf("\n")
		return
	}
	m.printf("%s\n\n", strings.TrimRight(sanitize(s), "\n"))
}

func (m *mdWriter) strong(s string) string { return "**" + s + "**" }

func (m *mdWriter) kv(pairs [][2]string) {
	m.printf("| | |\n|---|---|\n")
	for _, p := range pairs {
		m.printf("| %s | %s |\n", p[0], strings.ReplaceAll(oneLine(p[1]), "|", `\|`))
	}
	m.printf("\n")
}

func (m *mdWriter) fold(summary, body string, code bool) {
	m.printf("<details><summary>%s</summary>\n\n", htmlEscape(oneLine(summary)))
	if code {
		m.code("text", body)
	} else {
		m.para(body)
	}
	m.printf("</details>\n\n")
}

func (m *mdWriter) foldCode(summary, lang, body string) {
	m.printf("<details><summary>%s</summary>\n\n", htmlEscape(oneLine(summary)))
	m.code(lang, body)
	m.printf("</details>\n\n")
}

func (m *mdWriter) code(lang, body string) {
	f := fence(body)
	m.printf("%s%s\n%s\n%s\n\n", f, lang, strings.TrimRight(sanitize(body), "\n"), f)
}

func (m *mdWriter) item(s string) { m.printf("- %s\n", s) }

func (m *mdWriter) inline(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	n := longestRun(s, '`') + 1
	tick := strings.Repeat("`", n)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return tick + " " + s + " " + tick
	}
	return tick + s + tick
}

// fence returns a code fence longer than any backtick run in body.
func fence(body string) string { return strings.Repeat("`", max(3, longestRun(body, '`')+1)) }

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// textWriter writes plain text for a terminal or a pager: underlined
// headings, indented blocks, no markup.
type textWriter struct{ baseWriter }

func (t *textWriter) heading(level int, s string) {
	s = oneLine(s)
	ch := "-"
	if level <= 1 {
		ch = "="
	}
	t.printf("%s\n%s\n\n", s, strings.Repeat(ch, min(len([]rune(s)), 100)))
}

func (t *textWriter) para(s string) {
	if s == "" {
		t.printf("\n")
		return
	}
	t.printf("%s\n\n", strings.TrimRight(sanitize(s), "\n"))
}

func (t *textWriter) strong(s string) string { return s }

func (t *textWriter) kv(pairs [][2]string) {
	w := 0
	for _, p := range pairs {
		w = max(w, len(p[0]))
	}
	for _, p := range pairs {
		t.printf("%-*s  %s\n", w+1, p[0]+":", oneLine(p[1]))
	}
	t.printf("\n")
}

func (t *textWriter) fold(summary, body string, _ bool) {
	t.printf("[%s]\n", oneLine(summary))
	t.code("", body)
}

func (t *textWriter) foldCode(summary, _, body string) {
	t.printf("[%s]\n", oneLine(summary))
	t.code("", body)
}

func (t *textWriter) code(_ string, body string) {
	for _, l := range strings.Split(strings.TrimRight(sanitize(body), "\n"), "\n") {
		t.printf("    %s\n", l)
	}
	t.printf("\n")
}

func (t *textWriter) item(s string) { t.printf("  * %s\n", s) }

func (t *textWriter) inline(s string) string { return oneLine(s) }
