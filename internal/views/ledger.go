package views

import (
	"cmp"
	"slices"

	"github.com/twasm/twasm/transcript"
)

// ToolRow is one line of the tool ledger: a tool.call and its tool.result.
type ToolRow struct {
	RunID string `json:"run_id"`
	// Path is the step's full path from the root run.
	Path      string `json:"path"`
	Iteration int    `json:"iteration"`
	Seq       uint64 `json:"seq"`
	Name      string `json:"name"`
	Kind      string `json:"kind,omitempty"`
	Command   string `json:"command,omitempty"`
	// Files are the files the call writes (ToolFiles).
	Files      []FileChange `json:"files,omitempty"`
	Status     string       `json:"status"`
	ExitCode   *int         `json:"exit_code,omitempty"`
	DurationMS *int64       `json:"duration_ms,omitempty"`
	Fidelity   string       `json:"fidelity,omitempty"`
	CallID     string       `json:"call_id"`
	Error      string       `json:"error,omitempty"`
	// Dangling marks a call that never got a result; Orphan a result
	// whose call is not in the transcript.
	Dangling bool `json:"dangling,omitempty"`
	Orphan   bool `json:"orphan,omitempty"`
}

// StatusDangling is the ledger status of a call without a result.
const StatusDangling = "dangling"

// Ledger lists every tool call of the tree's runs, the root's first, each
// run's calls in file order. The spec counts tools by tool.call, so a row
// is a call; a result without a call gets its own row marked Orphan so that
// nothing recorded is hidden.
func Ledger(root *RunNode) []ToolRow {
	var rows []ToolRow
	for _, n := range root.Runs() {
		rows = append(rows, runLedger(n)...)
	}
	return rows
}

func runLedger(n *RunNode) []ToolRow {
	var rows []ToolRow
	// Results pair with calls by transcript.Pairer's rule (a call id may
	// be reused), as the validator pairs them; a revised call or result
	// updates its call's row. row holds each call's row, by its number.
	var pairs transcript.Pairer
	var row []int
	var start []*transcript.Event
	for _, ev := range n.run.Events {
		p := ev.Tool()
		if p == nil {
			continue
		}
		k, again, paired := pairs.Feed(ev)
		switch ev.Type {
		case transcript.ToolCall:
			if again {
				// A new version of call k (revised): its row, with
				// what the call states now.
				r := &rows[row[k]]
				r.Name, r.Kind, r.Command, r.Fidelity, r.Files = p.Name, string(p.Kind), p.Command, string(p.Fidelity), ToolFiles(p)
				if p.ExitCode != nil {
					r.ExitCode = p.ExitCode
				}
				continue
			}
			row = append(row, len(rows))
			start = append(start, ev)
			rows = append(rows, ToolRow{RunID: n.RunID, Path: n.FullPath(ev.Path), Iteration: ev.Iteration,
				Seq: ev.Seq, Name: p.Name, Kind: string(p.Kind), Command: p.Command, Status: StatusDangling,
				Fidelity: string(p.Fidelity), CallID: p.CallID, Dangling: true, ExitCode: p.ExitCode, Files: ToolFiles(p)})
		case transcript.ToolResult:
			if !paired {
				start = append(start, ev)
				rows = append(rows, ToolRow{RunID: n.RunID, Path: n.FullPath(ev.Path), Iteration: ev.Iteration,
					Seq: ev.Seq, Name: p.Name, Kind: string(p.Kind), Command: p.Command, Status: ToolStatus(p),
					ExitCode: p.ExitCode, Fidelity: string(p.Fidelity), CallID: p.CallID, Error: p.Error, Orphan: true})
				continue
			}
			i := row[k]
			r := &rows[i]
			r.Dangling, r.Status, r.Error = false, ToolStatus(p), p.Error
			r.Name = cmp.Or(r.Name, p.Name)
			r.Kind = cmp.Or(r.Kind, string(p.Kind))
			r.Command = cmp.Or(r.Command, p.Command)
			if p.ExitCode != nil {
				r.ExitCode = p.ExitCode
			}
			if c := start[i]; !c.Timestamp.IsZero() && !ev.Timestamp.IsZero() {
				d := ev.Timestamp.Sub(c.Timestamp).Milliseconds()
				r.DurationMS = &d
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b ToolRow) int { return cmp.Compare(a.Seq, b.Seq) })
	return rows
}
