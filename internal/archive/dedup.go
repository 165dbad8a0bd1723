package archive

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/transcript"
)

// archived is what earlier parts of a session hold, by the provider's own
// ids. A plugin replayed up to a part boundary still holds what it had
// not closed there (a message whose next block was still to come, a call
// flushed as dangling at the end of the part), and emits it again once
// the next line arrives: the filter keeps only what is new.
//
// For a document the agent rewrote in place (a Gemini CLI chat), the
// whole new version is fed and the filter compares instead of counting
// (rewrite): what an earlier part holds unchanged is dropped, a message
// that gained blocks keeps only the new ones, and a message, call or
// result whose content differs from what is archived is kept whole, in
// its new version, and counted as changed.
type archived struct {
	calls   map[string]bool
	results map[string]bool
	blocks  map[string]int // message id -> blocks already written

	rewrite bool
	// sums are the content hashes of what is archived: of each call and
	// result by call id, of each block of a message by message key.
	callSum, resultSum map[string]string
	blockSums          map[string][]string
	cursor             map[string]int // message key -> blocks of it seen in this part
	changed            []string       // what a rewrite changed, in order

	// skip are the messages without an id that the steps after the last
	// completed part hold (steps of a part that a killed sync or import
	// left open, closed as cancelled), in order, by messageSum: the part
	// that archives the same bytes again starts with them and leaves
	// them out, as the ids do for everything else. pending collects them
	// while the run is read. mask masks a message as the run's were
	// (--redact) before it is compared.
	skip, pending []string
	mask          func(*transcript.Event)
	// subs are the sub-runs of those steps by name (the last segment of
	// their path) and id: the part that archives the same bytes again
	// makes each sub-agent's run again, whole, and its new sub-run
	// supersedes the old one (capture.Options.Supersede). pendingSubs
	// collects them while the run is read.
	subs, pendingSubs map[string]string
}

// messageSum is the content of a message without an id: its type, role
// and blocks.
func messageSum(ev *transcript.Event, m *transcript.MessagePayload) string {
	j, _ := json.Marshal(m.Blocks)
	return sum([]byte(string(ev.Type) + "\x00" + m.Role + "\x00" + string(j)))
}

// skipped reports whether ev, a message without an id, is the next one
// an interrupted step holds; the first that is not ends the skipping.
func (s *archived) skipped(ev *transcript.Event, m *transcript.MessagePayload) bool {
	if len(s.skip) == 0 {
		return false
	}
	cmp := m
	if s.mask != nil {
		var cp transcript.MessagePayload
		if b, err := json.Marshal(m); err == nil && json.Unmarshal(b, &cp) == nil {
			e := *ev
			e.Payload = &cp
			s.mask(&e)
			cmp = &cp
		}
	}
	if messageSum(ev, cmp) == s.skip[0] {
		s.skip = s.skip[1:]
		return true
	}
	s.skip = nil
	return false
}

func newArchived() *archived {
	return &archived{calls: map[string]bool{}, results: map[string]bool{}, blocks: map[string]int{},
		callSum: map[string]string{}, resultSum: map[string]string{}, blockSums: map[string][]string{}, cursor: map[string]int{}}
}

func callSum(tp *transcript.ToolPayload) string {
	return sum([]byte(tp.Name + "\x00" + string(tp.Input) + "\x00" + tp.Command))
}

func resultSum(tp *transcript.ToolPayload) string {
	code := ""
	if tp.ExitCode != nil {
		code = strconv.Itoa(*tp.ExitCode)
	}
	return sum([]byte(tp.Output + "\x00" + tp.Error + "\x00" + tp.Status + "\x00" + code))
}

func blockSum(b transcript.Block) string {
	j, _ := json.Marshal(b)
	return sum(j)
}

// add reads the top-level events of a run transcript (its sub-agent runs
// are separate files and are not deduplicated).
func (s *archived) add(root, runID string) error {
	f, err := regfile.Open(filepath.Join(root, "transcripts", runID+".jsonl"))
	if err != nil {
		return err
	}
	defer f.Close()
	r := transcript.NewReader(f)
	for r.Next() {
		ev := r.Event()
		if ev == nil {
			continue
		}
		s.note(ev)
		switch ev.Type {
		case transcript.StepCompleted:
			if p := ev.Step(); p != nil && p.Status != transcript.StatusCancelled {
				s.pending = s.pending[:0] // a completed part holds them
				clear(s.pendingSubs)
			}
		case transcript.StepCallWorkflowStarted:
			if runid.Valid(ev.ChildRunID) == nil {
				if s.pendingSubs == nil {
					s.pendingSubs = map[string]string{}
				}
				s.pendingSubs[ev.Path[strings.LastIndexByte(ev.Path, '.')+1:]] = ev.ChildRunID
			}
		case transcript.MessageUser, transcript.MessageAssistant:
			if m := ev.Message(); m != nil && m.ID == "" {
				s.pending = append(s.pending, messageSum(ev, m))
			}
		}
	}
	s.skip = slices.Clone(s.pending)
	if len(s.pendingSubs) > 0 {
		s.subs = maps.Clone(s.pendingSubs)
	}
	return r.Err()
}

func (s *archived) note(ev *transcript.Event) {
	switch ev.Type {
	case transcript.ToolCall:
		if tp := ev.Tool(); tp != nil && tp.CallID != "" {
			s.calls[tp.CallID] = true
			s.callSum[tp.CallID] = callSum(tp)
		}
	case transcript.ToolResult:
		if tp := ev.Tool(); tp != nil && tp.CallID != "" {
			s.results[tp.CallID] = true
			s.resultSum[tp.CallID] = resultSum(tp)
		}
	case transcript.MessageAssistant, transcript.MessageUser:
		if m := ev.Message(); m != nil && m.ID != "" {
			key := string(ev.Type) + "\x00" + m.ID
			if m.Extra[RevisedField] != nil {
				// A new version of the message: it replaces the earlier.
				s.blocks[key], s.blockSums[key] = 0, nil
			}
			s.blocks[key] += len(m.Blocks)
			for _, b := range m.Blocks {
				s.blockSums[key] = append(s.blockSums[key], blockSum(b))
			}
		}
	}
}

// RevisedField marks a message of a rewritten document's part (true)
// that replaces the message with the same id an earlier part holds: the
// agent changed it in place. Both versions stay in the transcript.
const RevisedField = "revised"

// removed names the archived messages a rewritten version no longer
// holds (their earlier parts keep them), once the version was fed.
func (s *archived) removed() []string {
	var out []string
	for key := range s.blockSums {
		if _, ok := s.cursor[key]; !ok {
			_, id, _ := strings.Cut(key, "\x00")
			out = append(out, "message "+id+" removed")
		}
	}
	slices.Sort(out)
	return out
}

// filterRewrite is filter for a rewritten document: it compares content.
func (s *archived) filterRewrite(ev *transcript.Event) *transcript.Event {
	switch ev.Type {
	case transcript.ToolCall:
		if tp := ev.Tool(); tp != nil && s.calls[tp.CallID] {
			if s.callSum[tp.CallID] == callSum(tp) {
				return nil
			}
			s.changed = append(s.changed, "call "+tp.CallID)
		}
	case transcript.ToolResult:
		if tp := ev.Tool(); tp != nil && s.results[tp.CallID] {
			if s.resultSum[tp.CallID] == resultSum(tp) {
				return nil
			}
			s.changed = append(s.changed, "result of "+tp.CallID)
		}
	case transcript.MessageAssistant, transcript.MessageUser:
		m := ev.Message()
		if m == nil || m.ID == "" {
			break
		}
		key := string(ev.Type) + "\x00" + m.ID
		sums := s.blockSums[key]
		cur := s.cursor[key]
		s.cursor[key] = cur + len(m.Blocks)
		if len(sums) == 0 {
			break
		}
		same := 0
		for i, b := range m.Blocks {
			if cur+i >= len(sums) {
				break
			}
			if blockSum(b) != sums[cur+i] {
				// Changed: kept whole, in its new version, marked so
				// that it replaces the earlier one for the next part.
				s.changed = append(s.changed, "message "+m.ID)
				cp := *m
				cp.Extra = make(map[string]json.RawMessage, len(m.Extra)+1)
				for k, v := range m.Extra {
					cp.Extra[k] = v
				}
				cp.Extra[RevisedField] = json.RawMessage("true")
				e := *ev
				e.Payload = &cp
				return &e
			}
			same++
		}
		if same == len(m.Blocks) {
			return nil
		}
		return tail(ev, m, same)
	}
	return ev
}

// tail is ev with its message's blocks from n on (the earlier ones are
// archived).
func tail(ev *transcript.Event, m *transcript.MessagePayload, n int) *transcript.Event {
	cp := *m
	cp.Blocks = m.Blocks[n:]
	e := *ev
	e.Payload = &cp
	return &e
}

// filter drops a call or result already archived and the blocks of a
// message already archived, keeping the message's new blocks.
func (s *archived) filter(ev *transcript.Event) *transcript.Event {
	if ev.Type == transcript.MessageUser || ev.Type == transcript.MessageAssistant {
		if m := ev.Message(); m != nil && m.ID == "" && s.skipped(ev, m) {
			return nil
		}
	}
	if s.rewrite {
		return s.filterRewrite(ev)
	}
	switch ev.Type {
	case transcript.ToolCall:
		if tp := ev.Tool(); tp != nil && s.calls[tp.CallID] {
			return nil
		}
	case transcript.ToolResult:
		if tp := ev.Tool(); tp != nil && s.results[tp.CallID] {
			return nil
		}
	case transcript.MessageAssistant, transcript.MessageUser:
		m := ev.Message()
		if m == nil || m.ID == "" {
			break
		}
		n := s.blocks[string(ev.Type)+"\x00"+m.ID]
		if n == 0 {
			break
		}
		if n >= len(m.Blocks) {
			return nil
		}
		return tail(ev, m, n)
	}
	return ev
}
