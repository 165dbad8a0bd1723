package cmdutil

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/twasm/twasm/internal/detect"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/transcript"
)

// ErrNotUnderstood is wrapped by the error ReportStep returns when the
// plugin understood no line of the input: the run is written and the raw
// capture kept, but the transcript holds nothing of the agent's output,
// which almost always means the wrong provider or a file that is not an
// agent's output. It also wraps ErrSilent: the reason is already on
// stderr, and twasm exits 1.
var ErrNotUnderstood = errors.New("the plugin understood no line of the input")

// detectSample is how much of the raw capture detection reads.
const detectSample = 256 << 10

// Outcome is what a user must know about a recorded agent step, beyond
// the transcript's path.
type Outcome struct {
	// Problems are the clauses of the stderr line, most important first;
	// none when the step is ok and every line was understood.
	Problems []string
	// Understood is false when the plugin mapped no line: every non-blank
	// line was unmapped or lost to a fault, or the input was empty.
	Understood bool
}

// StepOutcome reads a step's result and, only when the result shows
// nothing the plugin recorded (no session, model, usage, answer or
// dangling call), its raw capture under the storage root (to count
// non-blank lines, and to run detection when nothing was understood) and
// the transcript file that holds the step (to count the events the
// plugin produced in it). A result with content is understood whatever
// the counts: reading the capture back, which decompresses and scans it
// whole, would change nothing said.
//
// The plugin understood nothing when the step holds nothing from it (no
// assistant message, tool event or sub-agent, no session, model, usage or
// final answer) and either no terminal status or every non-blank line
// counted unmapped or lost to a fault. The content decides before the
// counts: unmapped counts native types, several of which one line may
// hold (a body of the provider's API with an item type the plugin does
// not know is understood by what it recorded, spec §6.8). An empty
// step catches lines a plugin skipped without counting them.
func StepOutcome(storage, transcriptPath string, res *transcript.AgentResult) Outcome {
	var o Outcome
	unmapped := 0
	for _, n := range res.Unmapped {
		unmapped += n
	}
	// Unmapped counts native types, not lines: one line may count
	// several (a response with two unknown items), so lines minus
	// unmapped undercounts what was mapped. What the plugin recorded
	// from the step decides, then: content (a session, model, usage,
	// answer, call or event) shows a line was understood whatever was
	// counted beside it; a status alone only when some line was not
	// counted unmapped.
	content := res.SessionID != "" || res.Model != "" || res.Usage != nil || res.FinalText != "" || len(res.Dangling) > 0
	if content {
		// Understood whatever the counts say: the raw capture is not
		// read back (decompressed and scanned whole) to count lines
		// nothing below would use.
		o.Understood = true
		return o.problems(res, unmapped)
	}
	raw := rawLines(storage, res)
	lines := raw.nonBlank
	if !raw.ok {
		// No raw capture to count from: every counted line is taken as
		// non-blank, which can only make the plugin look less lost.
		lines = res.Lines
	}
	mapped := lines-unmapped-res.FailedLines > 0
	if res.Raw != nil && lines > 0 {
		// An unreadable transcript (-1) tells nothing: the counts decide.
		ev := stepEvents(transcriptPath, res.Raw.Path)
		content = ev > 0 || ev < 0 && mapped
	}
	o.Understood = content || mapped && res.Status != transcript.StatusIncomplete

	if !o.Understood {
		what := fmt.Sprintf("the %s plugin understood none of the %d line(s)", res.Provider, lines)
		switch {
		case lines == 0:
			what = "the input was empty"
		case mapped:
			what = fmt.Sprintf("the %s plugin recorded nothing from the %d line(s)", res.Provider, lines)
		}
		hint := "the provider looks wrong"
		if raw.ok {
			if d, err := detect.Detect(rawSample(storage, res)); err == nil {
				if d.Provider == res.Provider {
					hint = fmt.Sprintf("it looks like %s (%s), a format this plugin may not know yet", d.Provider, d.Reason)
				} else {
					hint = fmt.Sprintf("the provider looks wrong: detection says %s (%s)", d.Provider, d.Reason)
				}
			} else if lines > 0 {
				hint = fmt.Sprintf("the provider looks wrong (detection: %v)", err)
			} else {
				hint = ""
			}
		}
		o.Problems = append(o.Problems, strings.TrimSuffix(what+": "+hint, ": "))
	}
	return o.problems(res, unmapped)
}

// problems adds to o the clauses that follow whether the plugin
// understood the input: the status, unmapped lines, dangling calls and
// lines lost to a fault.
func (o Outcome) problems(res *transcript.AgentResult, unmapped int) Outcome {
	// An output with nothing understood is incomplete by definition:
	// the status is news only when the provider said why.
	if res.Status != transcript.StatusOK && res.Status != "" && (o.Understood || res.Error != "") {
		s := "status " + res.Status
		switch {
		case res.Error != "":
			s += ": " + oneLine(res.Error, 200)
		case res.Status == transcript.StatusIncomplete:
			s += ": the output ended without the provider's final event"
		}
		if res.ExitCode != nil && *res.ExitCode != 0 {
			s += fmt.Sprintf(" (exit code %d)", *res.ExitCode)
		}
		o.Problems = append(o.Problems, s)
	}
	if unmapped > 0 && o.Understood {
		o.Problems = append(o.Problems, fmt.Sprintf("%d unmapped line(s) (%s)", unmapped, countList(res.Unmapped)))
	}
	if n := len(res.Dangling); n > 0 {
		o.Problems = append(o.Problems, fmt.Sprintf("%d tool call(s) without a result", n))
	}
	if res.FailedLines > 0 {
		o.Problems = append(o.Problems, fmt.Sprintf("%d line(s) lost to a plugin fault", res.FailedLines))
	}
	return o
}

// ReportStep writes the Outcome of a recorded step to w as one line,
// "twasm: <prefix>: <problem>; <problem>...", or nothing when there is
// nothing to say. It returns an error wrapping ErrNotUnderstood and
// ErrSilent when the plugin understood no line, nil otherwise. record and
// import call it once per step, after the transcript's path.
func ReportStep(w io.Writer, prefix, storage, transcriptPath string, res *transcript.AgentResult) error {
	if res == nil {
		return nil
	}
	o := StepOutcome(storage, transcriptPath, res)
	if len(o.Problems) > 0 {
		lead := "twasm: "
		if prefix != "" {
			lead += prefix + ": "
		}
		fmt.Fprintln(w, lead+strings.Join(o.Problems, "; "))
	}
	if !o.Understood {
		return fmt.Errorf("%w (%w)", ErrNotUnderstood, ErrSilent)
	}
	return nil
}

// stepEvents counts the events a plugin produced in the step whose
// result points at rawPath: assistant messages, tool calls and results,
// sub-agents. It returns -1 when the file or the step cannot be read, so
// that a caller never mistakes a read failure for an empty step.
func stepEvents(transcriptPath, rawPath string) int {
	f, err := regfile.Open(transcriptPath)
	if err != nil {
		return -1
	}
	defer f.Close()
	type key struct {
		path string
		iter int
	}
	counts := map[key]int{}
	r := transcript.NewReader(f)
	for r.Next() {
		ev := r.Event()
		if ev == nil {
			continue
		}
		k := key{ev.Path, ev.Iteration}
		switch ev.Type {
		case transcript.StepStarted:
			counts[k] = 0
		case transcript.MessageAssistant, transcript.ToolCall, transcript.ToolResult, transcript.StepCallWorkflowStarted:
			counts[k]++
		case transcript.StepCompleted:
			var res struct {
				Raw *struct {
					Path string `json:"path"`
				} `json:"raw"`
			}
			if sp := ev.Step(); sp != nil && json.Unmarshal(sp.Result, &res) == nil && res.Raw != nil && res.Raw.Path == rawPath {
				return counts[k]
			}
		}
	}
	return -1
}

type rawCount struct {
	ok       bool
	nonBlank int
}

// rawPath is the raw capture's file, or "" when the step has none.
func rawPath(storage string, res *transcript.AgentResult) string {
	if res.Raw == nil || res.Raw.Path == "" {
		return ""
	}
	if filepath.IsAbs(res.Raw.Path) {
		return res.Raw.Path
	}
	return filepath.Join(storage, res.Raw.Path)
}

// rawSample is the start of the raw capture, for detection: read only
// when the plugin understood nothing (every recording used to copy it).
func rawSample(storage string, res *transcript.AgentResult) []byte {
	f, err := rawfile.OpenAll(rawPath(storage, res))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, detectSample))
	return b
}

// rawLines counts the raw capture's non-blank lines, as the normalizer
// splits them.
func rawLines(storage string, res *transcript.AgentResult) rawCount {
	p := rawPath(storage, res)
	if p == "" {
		return rawCount{}
	}
	f, err := rawfile.OpenAll(p)
	if err != nil {
		return rawCount{}
	}
	defer f.Close()
	c := rawCount{ok: true}
	r := bufio.NewReaderSize(f, 64<<10)
	blank := true
	for {
		chunk, err := r.ReadSlice('\n')
		if blank && len(bytes.TrimSpace(chunk)) > 0 {
			blank = false
		}
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' || err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if !blank {
				c.nonBlank++
			}
			blank = true
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if !errors.Is(err, io.EOF) {
				return rawCount{}
			}
			return c
		}
	}
}

// countList is "a 2, b 1": the counts, largest first.
func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(m[b]-m[a], strings.Compare(a, b)) })
	parts := make([]string, 0, min(len(keys), 4))
	for i, k := range keys {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("%d more type(s)", len(keys)-4))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// oneLine makes s a single line of at most n runes, control bytes as
// spaces.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}
