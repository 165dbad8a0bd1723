package golden

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/transcript"
)

// suffix ends the name of an expectation file.
const suffix = ".golden.jsonl"

// faultSuffix ends the name of the file that allows a case's expectation
// to pin a plugin fault: <case>.fault, holding why (a case that tests how
// a fault is reported). Without it a rendering in which lines were lost to
// a plugin fault is never accepted as expected output.
const faultSuffix = ".fault"

// runID is the run id events carry in a rendering.
const runID = "golden"

// epoch is the recording time used for events without a provider
// timestamp.
var epoch = time.Unix(0, 0).UTC()

// Options configure a check. The zero Options checks, passing no provider
// name to the plugin.
type Options struct {
	// Provider is the provider name the plugin is started with (as
	// `twasm record --provider`), e.g. "claude".
	Provider string
	// Update rewrites the expectations that differ (or are missing)
	// instead of reporting them; the diff of the golden files is then
	// reviewed by hand. A rendering with a plugin fault is refused all
	// the same (errFault).
	Update bool
	// BatchLines, when above 0, sends the plugin at most that many lines
	// a call instead of full batches, as a live agent's output arrives: a
	// plugin (or the SDK under it) that keeps a value of one call into the
	// next reads another line's bytes there, and its rendering differs
	// from the expectation.
	BatchLines int
}

// Normalize runs raw through a fresh instance of p, as a capture would,
// and returns its rendering (the form of a <case>.golden.jsonl file).
// opts.Update is not used.
func Normalize(ctx context.Context, p capture.Plugin, raw []byte, opts Options) ([]byte, error) {
	inst, err := p.NewInstance(ctx)
	if err != nil {
		return nil, err
	}
	defer normalize.Close(inst)
	var c normalize.Collector
	res, err := normalize.Run(ctx, inst, bytes.NewReader(raw), &c, normalize.Options{
		Provider:   opts.Provider,
		Now:        func() time.Time { return epoch },
		BatchLines: opts.BatchLines,
	})
	if err != nil {
		return nil, err
	}
	return render(c.Items, res)
}

// render turns what a Collector received and the step result into the
// canonical form.
func render(items []normalize.Collected, res *transcript.AgentResult) ([]byte, error) {
	var out bytes.Buffer
	seq := map[string]uint64{}
	for _, it := range items {
		switch {
		case it.Event != nil:
			ev := *it.Event
			seq[it.Scope]++
			ev.Seq = seq[it.Scope]
			ev.RunID = runID
			if it.Scope != "" {
				ev.RunID = runID + ":" + it.Scope
			}
			line, err := transcript.AppendEvent(nil, &ev)
			if err != nil {
				return nil, fmt.Errorf("render event %d of scope %q: %w", ev.Seq, it.Scope, err)
			}
			out.WriteString(`{"event":`)
			out.Write(line)
			out.WriteString("}\n")
		case it.Open != nil:
			writeJSON(&out, "scope_open", map[string]string{
				"scope": it.Open.ID, "parent_tool_id": it.Open.ParentToolID, "name": it.Open.Name, "description": it.Open.Description,
			})
		case it.Close:
			writeJSON(&out, "scope_close", map[string]string{"scope": it.Scope, "status": it.CloseStatus, "error": it.CloseError})
		}
	}
	if res != nil {
		r := *res
		if len(r.Dangling) == 0 {
			r.Dangling = nil
		}
		writeJSON(&out, "result", r)
	}
	return out.Bytes(), nil
}

func writeJSON(out *bytes.Buffer, key string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only plain maps and AgentResult reach here; both always encode.
		panic(err)
	}
	out.WriteString(`{"`)
	out.WriteString(key)
	out.WriteString(`":`)
	out.Write(b)
	out.WriteString("}\n")
}

// Case is one golden case of a directory, as [Cases] lists it.
type Case struct {
	Name   string // case name (file name without extension)
	Input  string // path of the raw input
	Golden string // path of the expectation
	// Fault is the path of <case>.fault, "" when there is none.
	Fault string
}

// ErrNoCases is wrapped when a directory holds no golden case: an empty
// or mistyped directory, or the parent of the per-provider directories,
// must fail a check rather than pass it with nothing checked.
var ErrNoCases = errors.New("no golden case")

// Cases lists the cases of dir, sorted by name, as [Check] runs them. Every regular file that is
// not an expectation, a .fault file, a README or a dot file is an input.
// A directory without any case is an error wrapping ErrNoCases that names
// its subdirectories (the usual mistake is their parent). An expectation
// or a .fault file without its input is an error too: it would never be
// checked.
func Cases(dir string) ([]Case, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("golden cases: %w", err)
	}
	var cases []Case
	var subdirs []string
	extra := map[string]string{} // case name -> an expectation or .fault file
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
			if !strings.HasPrefix(name, ".") {
				subdirs = append(subdirs, name)
			}
			continue
		case strings.HasPrefix(name, ".") || strings.HasPrefix(strings.ToUpper(name), "README"):
			continue
		case strings.HasSuffix(name, suffix):
			extra[strings.TrimSuffix(name, suffix)] = name
			continue
		case strings.HasSuffix(name, faultSuffix):
			extra[strings.TrimSuffix(name, faultSuffix)] = name
			continue
		}
		base := strings.TrimSuffix(name, filepath.Ext(name))
		cases = append(cases, Case{Name: base, Input: filepath.Join(dir, name), Golden: filepath.Join(dir, base+suffix)})
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	for i := 1; i < len(cases); i++ {
		if cases[i].Name == cases[i-1].Name {
			return nil, fmt.Errorf("golden cases: two inputs named %q in %s", cases[i].Name, dir)
		}
	}
	for i := range cases {
		f := filepath.Join(dir, cases[i].Name+faultSuffix)
		if _, err := os.Stat(f); err == nil {
			cases[i].Fault = f
		}
		delete(extra, cases[i].Name)
	}
	if len(cases) == 0 {
		hint := "want <case>.<ext> inputs beside their <case>" + suffix
		if len(subdirs) > 0 {
			sort.Strings(subdirs)
			hint = "it has subdirectories (" + strings.Join(subdirs, ", ") + "): name one of them"
		}
		return nil, fmt.Errorf("%w in %s: %s", ErrNoCases, dir, hint)
	}
	if len(extra) > 0 {
		var names []string
		for _, n := range extra {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("golden cases: %s in %s: no input of that name", strings.Join(names, ", "), dir)
	}
	return cases, nil
}

// Outcome is the result of checking one case.
type Outcome struct {
	// Name is the case's name: its input's file name without extension.
	Name string
	// Input and Golden are the paths of its raw input and of its
	// expectation (<case>.golden.jsonl).
	Input, Golden string
	// Diff is empty when the rendering matches.
	Diff string
	// Updated is set when the expectation was (re)written.
	Updated bool
	// Err is set when the case could not be run.
	Err error
}

// errFault is wrapped when a rendering holds a plugin fault (lines lost)
// and the case has no .fault file allowing it, or has one and no fault.
var errFault = errors.New("plugin fault")

// faultOf returns what a rendering says about plugin faults: the lines
// lost and the fault warnings of its result line; "" when there were none.
func faultOf(rendering []byte) string {
	lines := bytes.Split(bytes.TrimSpace(rendering), []byte("\n"))
	var last struct {
		Result *transcript.AgentResult `json:"result"`
	}
	if len(lines) == 0 || json.Unmarshal(lines[len(lines)-1], &last) != nil || last.Result == nil {
		return ""
	}
	var faults []string
	for _, w := range last.Result.Warnings {
		if strings.Contains(w, "line(s) lost") || strings.Contains(w, "plugin fault") {
			faults = append(faults, w)
		}
	}
	if last.Result.FailedLines == 0 && len(faults) == 0 {
		return ""
	}
	return fmt.Sprintf("%d line(s) lost to a plugin fault: %s", last.Result.FailedLines, strings.Join(faults, "; "))
}

// checkFault refuses a rendering with a plugin fault unless the case
// allows one, and a .fault file on a case without a fault.
func checkFault(c Case, rendering []byte) error {
	fault := faultOf(rendering)
	switch {
	case fault != "" && c.Fault == "":
		return fmt.Errorf("%w: %s; a golden may not pin a fault as expected output unless %s says why", errFault, fault, filepath.Base(c.Name+faultSuffix))
	case fault == "" && c.Fault != "":
		return fmt.Errorf("%w: %s allows a fault but the case has none: remove it", errFault, c.Fault)
	case c.Fault != "":
		why, err := os.ReadFile(c.Fault)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(why)) == 0 {
			return fmt.Errorf("%w: %s is empty: say why the case expects a fault", errFault, c.Fault)
		}
	}
	return nil
}

// OK reports whether the case passed.
func (o Outcome) OK() bool { return o.Err == nil && (o.Diff == "" || o.Updated) }

// errMissing is wrapped when a case has no expectation file.
var errMissing = errors.New("no golden file (run with update to create it)")

// Check runs every case of dir through a fresh instance of p (a
// *host.Plugin, or capture.NativePlugin of a plugin compiled in) and
// compares its rendering with the case's expectation; with opts.Update it
// rewrites the expectations that differ instead. The error is for dir
// (no case: ErrNoCases); each case's own failure is in its Outcome.
func Check(ctx context.Context, dir string, p capture.Plugin, opts Options) ([]Outcome, error) {
	cases, err := Cases(dir)
	if err != nil {
		return nil, err
	}
	var outs []Outcome
	for _, c := range cases {
		o := Outcome{Name: c.Name, Input: c.Input, Golden: c.Golden}
		o.Diff, o.Updated, o.Err = checkCase(ctx, c, p, opts)
		outs = append(outs, o)
	}
	return outs, nil
}

func checkCase(ctx context.Context, c Case, p capture.Plugin, opts Options) (string, bool, error) {
	raw, err := os.ReadFile(c.Input)
	if err != nil {
		return "", false, err
	}
	got, err := Normalize(ctx, p, raw, opts)
	if err != nil {
		return "", false, err
	}
	if err := checkFault(c, got); err != nil {
		return "", false, err
	}
	want, err := os.ReadFile(c.Golden)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", false, err
	}
	if err == nil && bytes.Equal(want, got) {
		return "", false, nil
	}
	if err == nil {
		// An expectation pinning a fault the plugin no longer has is
		// still a wrong golden: say so beside the diff.
		if ferr := checkFault(c, want); ferr != nil && !opts.Update {
			return showDiff(want, got), false, ferr
		}
	}
	if opts.Update {
		return "", true, os.WriteFile(c.Golden, got, 0o644)
	}
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", c.Golden, errMissing)
	}
	return showDiff(want, got), false, nil
}
