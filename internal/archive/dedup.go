package archive

import (
	"encoding/json"
	"errors"
	"io/fs"
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
//
// A provider may reuse a call id for a new call (ids unique per response,
// not per session), which the plugin's stream makes a call of its own:
// calls and results are counted by id, here and in the stream (the
// replay included, Replayed), and the n-th call of an id is archived when
// the earlier parts hold n calls of it (the n-th result likewise). The
// versions of a call or result the plugin's stream marks revised itself
// (ABI 1.13: a Cline or Roo Code task's conversation element changed in
// place) are counted apart (countKey): one more version is archived, as
// the stream made it, and a replay counts it as one the parts hold.
type archived struct {
	// callN and resultN count the calls and results of each call id the
	// earlier parts hold; callSeen and resultSeen those the plugin's
	// stream for this part emitted so far, the replay included.
	callN, resultN, callSeen, resultSeen map[string]int
	blocks                               map[string]int // message id -> blocks already written
	// usage is, by message key, the usage the archived versions of a
	// message state together: a message that comes again with more
	// blocks keeps only what its figures add (a sub-agent's run counts
	// its messages' usage).
	usage map[string]*transcript.Usage

	rewrite bool
	// sums are the content hashes of what is archived: of the calls and
	// results of each call id, of each block of a message by message key.
	callSums, resultSums map[string][]string
	blockSums            map[string][]string
	cursor               map[string]int // message key -> blocks of it seen in this part
	changed              []string       // what a rewrite changed, in order

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
	return &archived{callN: map[string]int{}, resultN: map[string]int{}, callSeen: map[string]int{}, resultSeen: map[string]int{},
		blocks: map[string]int{}, usage: map[string]*transcript.Usage{},
		callSums: map[string][]string{}, resultSums: map[string][]string{}, blockSums: map[string][]string{}, cursor: map[string]int{}}
}

// count notes a call or result the plugin's stream emitted and returns
// its tool payload with archived: whether the earlier parts hold it (it
// is the n-th of its call id, and they hold n). Any other event gives
// nil.
func (s *archived) count(ev *transcript.Event) (tp *transcript.ToolPayload, archived bool) {
	if ev.Type != transcript.ToolCall && ev.Type != transcript.ToolResult {
		return nil, false
	}
	if tp = ev.Tool(); tp == nil || tp.CallID == "" {
		return nil, false
	}
	k := countKey(tp)
	if ev.Type == transcript.ToolCall {
		s.callSeen[k]++
		return tp, s.callSeen[k] <= s.callN[k]
	}
	s.resultSeen[k]++
	return tp, s.resultSeen[k] <= s.resultN[k]
}

// countKey is what count and note count a call or result under: its
// call id, and a key of its own for the versions marked revised (a
// plugin's stream marks them itself, ABI 1.13: a task folder's
// conversation element changed in place), which are not one more call
// or result of the id but are archived as often as the stream made
// them.
func countKey(tp *transcript.ToolPayload) string {
	if tp.Revised() {
		return tp.CallID + "\x00" + RevisedField
	}
	return tp.CallID
}

// replayed counts an event the replay of the earlier parts made
// (capture.Options.Replayed).
func (s *archived) replayed(ev *transcript.Event) { s.count(ev) }

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

// add reads the events of a run transcript, and of the sub-agents' runs
// its completed parts made: a sub-agent still running at a part's end
// comes again in the next part, whose filter then keeps only what is new
// of it. The runs of a cancelled part are not read (the part that
// archives its bytes again makes them again, whole, superseding them),
// nor a child run that is a session of its own (a sub-agent's file,
// linked after the part that made it).
func (s *archived) add(root, runID string) error {
	var subs []string // the child runs of the step being read
	err := s.read(root, runID, func(ev *transcript.Event) error {
		switch ev.Type {
		case transcript.StepCompleted:
			if p := ev.Step(); p != nil && p.Status != transcript.StatusCancelled {
				s.pending = s.pending[:0] // a completed part holds them
				clear(s.pendingSubs)
				for _, id := range subs {
					if err := s.addSubRun(root, id, 0); err != nil {
						return err
					}
				}
			}
			subs = subs[:0]
		case transcript.StepCallWorkflowStarted:
			if runid.Valid(ev.ChildRunID) == nil {
				subs = append(subs, ev.ChildRunID)
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
		return nil
	})
	if err != nil {
		return err
	}
	s.skip = slices.Clone(s.pending)
	if len(s.pendingSubs) > 0 {
		s.subs = maps.Clone(s.pendingSubs)
	}
	return nil
}

// maxSubRunDepth bounds how deep add follows sub-agents' runs.
const maxSubRunDepth = 8

// addSubRun notes what a sub-agent's run (and its own) holds, unless it
// is a session of its own.
func (s *archived) addSubRun(root, runID string, depth int) error {
	if depth >= maxSubRunDepth {
		return nil
	}
	first := true
	var subs []string
	err := s.read(root, runID, func(ev *transcript.Event) error {
		if first {
			first = false
			if p := ev.Step(); ev.Type == transcript.RunStarted && p != nil && p.Extra[SourceField] != nil {
				return errSessionRun
			}
		}
		if ev.Type == transcript.StepCallWorkflowStarted && runid.Valid(ev.ChildRunID) == nil {
			subs = append(subs, ev.ChildRunID)
		}
		return nil
	})
	switch {
	case errors.Is(err, errSessionRun):
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return nil // a link whose run was never written: nothing to leave out
	case err != nil:
		return err
	}
	for _, id := range subs {
		if err := s.addSubRun(root, id, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// errSessionRun stops reading a child run that is a session of its own.
var errSessionRun = errors.New("a session's run")

// read notes every event of a run's transcript, calling each with it.
func (s *archived) read(root, runID string, each func(*transcript.Event) error) error {
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
		if err := each(ev); err != nil {
			return err
		}
		s.note(ev)
	}
	return r.Err()
}

func (s *archived) note(ev *transcript.Event) {
	switch ev.Type {
	case transcript.ToolCall:
		// A revised call is a new version of one counted already.
		if tp := ev.Tool(); tp != nil && tp.CallID != "" {
			s.callN[countKey(tp)]++
			s.callSums[tp.CallID] = append(s.callSums[tp.CallID], callSum(tp))
		}
	case transcript.ToolResult:
		if tp := ev.Tool(); tp != nil && tp.CallID != "" {
			s.resultN[countKey(tp)]++
			s.resultSums[tp.CallID] = append(s.resultSums[tp.CallID], resultSum(tp))
		}
	case transcript.MessageAssistant, transcript.MessageUser:
		if m := ev.Message(); m != nil && m.ID != "" {
			key := string(ev.Type) + "\x00" + m.ID
			if m.Extra[RevisedField] != nil {
				// A new version of the message: it replaces the earlier.
				s.blocks[key], s.blockSums[key] = 0, nil
				delete(s.usage, key)
			}
			if !m.Usage.IsZero() {
				if s.usage[key] == nil {
					s.usage[key] = &transcript.Usage{}
				}
				s.usage[key].Add(m.Usage)
			}
			s.blocks[key] += len(m.Blocks)
			for _, b := range m.Blocks {
				s.blockSums[key] = append(s.blockSums[key], blockSum(b))
			}
		}
	}
}

// RevisedField marks a message, call or result of a rewritten
// document's or database's part (true) that replaces the one with the
// same id (message id, call id) an earlier part holds: the agent changed
// it in place. Both versions stay in the transcript; readers pair and
// count a revised call or result as the earlier one
// (transcript.Pairer).
const RevisedField = transcript.RevisedField

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
// A call or result is compared with those of its call id the earlier
// parts hold (any of them: one a call id reused names too, or an earlier
// version of it), unless it is one more than they hold.
func (s *archived) filterRewrite(ev *transcript.Event) *transcript.Event {
	switch ev.Type {
	case transcript.ToolCall:
		if tp, old := s.count(ev); old {
			if slices.Contains(s.callSums[tp.CallID], callSum(tp)) {
				return nil
			}
			s.changed = append(s.changed, "call "+tp.CallID)
			return revisedTool(ev, tp)
		}
	case transcript.ToolResult:
		if tp, old := s.count(ev); old {
			if slices.Contains(s.resultSums[tp.CallID], resultSum(tp)) {
				return nil
			}
			s.changed = append(s.changed, "result of "+tp.CallID)
			return revisedTool(ev, tp)
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
				cp.Extra = withRevised(m.Extra)
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

// withRevised is a copy of extra with the revised mark.
func withRevised(extra map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(extra)+1)
	maps.Copy(out, extra)
	out[RevisedField] = json.RawMessage("true")
	return out
}

// revisedTool is ev, a call or result whose content differs from the
// archived one of its call id, marked revised: a reader takes it for a
// new version of that one (transcript.Pairer), not one more.
func revisedTool(ev *transcript.Event, tp *transcript.ToolPayload) *transcript.Event {
	cp := *tp
	cp.Extra = withRevised(tp.Extra)
	e := *ev
	e.Payload = &cp
	return &e
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
	case transcript.ToolCall, transcript.ToolResult:
		if _, old := s.count(ev); old {
			return nil
		}
	case transcript.MessageAssistant, transcript.MessageUser:
		return s.filterMessage(ev)
	}
	return ev
}

// filterMessage drops a message whose blocks are archived, or keeps its
// new blocks (by the provider's message id).
func (s *archived) filterMessage(ev *transcript.Event) *transcript.Event {
	m := ev.Message()
	if m == nil || m.ID == "" {
		return ev
	}
	n := s.blocks[string(ev.Type)+"\x00"+m.ID]
	switch {
	case n == 0:
		return ev
	case n >= len(m.Blocks):
		return nil
	}
	return s.tail(ev, m, n)
}

// tail is ev with its message's blocks from n on, the earlier ones being
// archived, and only what its usage adds to the archived versions'.
func (s *archived) tail(ev *transcript.Event, m *transcript.MessagePayload, n int) *transcript.Event {
	e := tail(ev, m, n)
	if had := s.usage[string(ev.Type)+"\x00"+m.ID]; had != nil && m.Usage != nil {
		u := *m.Usage
		if len(u.Sub(had)) == 0 {
			e.Message().Usage = &u
		}
	}
	return e
}

// filterSubAgent is filter for the events of a sub-agent's run. A
// sub-agent still running at an earlier part's end comes again in this
// part, in a child run of its own: what the earlier part's run holds is
// left out, the blocks and the usage of its messages and its calls
// answered there; a call left without its result there is written
// again, with its result (a run's results follow its calls).
func (s *archived) filterSubAgent(ev *transcript.Event) *transcript.Event {
	tp, old := s.count(ev)
	if s.rewrite {
		return ev
	}
	switch ev.Type {
	case transcript.ToolCall:
		// Its result is archived too: results pair with calls in order.
		if old && s.callSeen[tp.CallID] <= s.resultN[tp.CallID] {
			return nil
		}
	case transcript.ToolResult:
		if old {
			return nil
		}
	case transcript.MessageAssistant, transcript.MessageUser:
		return s.filterMessage(ev)
	}
	return ev
}
