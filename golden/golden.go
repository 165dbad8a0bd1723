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

	"github.com/twasm/twasm/normalize"
	"github.com/twasm/twasm/transcript"
)

// Suffix ends the name of an expectation file.
const Suffix = ".golden.jsonl"

// RunID is the run id events carry in a rendering.
const RunID = "golden"

// Epoch is the recording time used for events without a provider
// timestamp.
var Epoch = time.Unix(0, 0).UTC()

// Normalize runs inst over raw and renders the result.
func Normalize(ctx context.Context, inst normalize.Instance, provider string, raw []byte) ([]byte, error) {
	var c normalize.Collector
	res, err := normalize.Run(ctx, inst, bytes.NewReader(raw), &c, normalize.Options{
		Provider: provider,
		Now:      func() time.Time { return Epoch },
	})
	if err != nil {
		return nil, err
	}
	return Render(c.Items, res)
}

// Render turns what a Collector received and the step result into the
// canonical form.
func Render(items []normalize.Collected, res *transcript.AgentResult) ([]byte, error) {
	var out bytes.Buffer
	seq := map[string]uint64{}
	for _, it := range items {
		switch {
		case it.Event != nil:
			ev := *it.Event
			seq[it.Scope]++
			ev.Seq = seq[it.Scope]
			ev.RunID = RunID
			if it.Scope != "" {
				ev.RunID = RunID + ":" + it.Scope
			}
			line, err := transcript.MarshalEvent(&ev)
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

// Case is one golden case.
type Case struct {
	Name   string // case name (file name without extension)
	Input  string // path of the raw input
	Golden string // path of the expectation
}

// Cases lists the cases of dir, sorted by name. Every regular file that is
// not an expectation, a README or a dot file is an input.
func Cases(dir string) ([]Case, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("golden cases: %w", err)
	}
	var cases []Case
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || strings.HasSuffix(name, Suffix) ||
			strings.HasPrefix(strings.ToUpper(name), "README") {
			continue
		}
		base := strings.TrimSuffix(name, filepath.Ext(name))
		cases = append(cases, Case{Name: base, Input: filepath.Join(dir, name), Golden: filepath.Join(dir, base+Suffix)})
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	for i := 1; i < len(cases); i++ {
		if cases[i].Name == cases[i-1].Name {
			return nil, fmt.Errorf("golden cases: two inputs named %q in %s", cases[i].Name, dir)
		}
	}
	return cases, nil
}

// Outcome is the result of checking one case.
type Outcome struct {
	Case
	// Diff is empty when the rendering matches.
	Diff string
	// Updated is set when the expectation was (re)written.
	Updated bool
	// Err is set when the case could not be run.
	Err error
}

// OK reports whether the case passed.
func (o Outcome) OK() bool { return o.Err == nil && (o.Diff == "" || o.Updated) }

// ErrMissing is wrapped when a case has no expectation file.
var ErrMissing = errors.New("no golden file (run with update to create it)")

// Check runs every case of dir through a fresh instance from newInstance
// and compares it with its expectation; with update it rewrites the
// expectations that differ instead.
func Check(ctx context.Context, dir, provider string, newInstance func() (normalize.Instance, error), update bool) ([]Outcome, error) {
	cases, err := Cases(dir)
	if err != nil {
		return nil, err
	}
	var outs []Outcome
	for _, c := range cases {
		o := Outcome{Case: c}
		o.Diff, o.Updated, o.Err = checkCase(ctx, c, provider, newInstance, update)
		outs = append(outs, o)
	}
	return outs, nil
}

func checkCase(ctx context.Context, c Case, provider string, newInstance func() (normalize.Instance, error), update bool) (string, bool, error) {
	raw, err := os.ReadFile(c.Input)
	if err != nil {
		return "", false, err
	}
	inst, err := newInstance()
	if err != nil {
		return "", false, err
	}
	if closer, ok := inst.(interface{ Close() error }); ok {
		defer closer.Close()
	}
	got, err := Normalize(ctx, inst, provider, raw)
	if err != nil {
		return "", false, err
	}
	want, err := os.ReadFile(c.Golden)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", false, err
	}
	if err == nil && bytes.Equal(want, got) {
		return "", false, nil
	}
	if update {
		return "", true, os.WriteFile(c.Golden, got, 0o644)
	}
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", c.Golden, ErrMissing)
	}
	return Diff(want, got), false, nil
}
