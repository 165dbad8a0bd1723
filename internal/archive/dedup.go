package archive

import (
	"path/filepath"

	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// archived is what earlier parts of a session hold, by the provider's own
// ids. A plugin replayed up to a part boundary still holds what it had
// not closed there (a message whose next block was still to come, a call
// flushed as dangling at the end of the part), and emits it again once
// the next line arrives: the filter keeps only what is new.
type archived struct {
	calls   map[string]bool
	results map[string]bool
	blocks  map[string]int // message id -> blocks already written
}

func newArchived() *archived {
	return &archived{calls: map[string]bool{}, results: map[string]bool{}, blocks: map[string]int{}}
}

// add reads the top-level events of a run transcript (its sub-agent runs
// are separate files and are not deduplicated).
func (s *archived) add(root, runID string) error {
	f, err := recorder.OpenRead(filepath.Join(root, "transcripts", runID+".jsonl"))
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
	}
	return r.Err()
}

func (s *archived) note(ev *transcript.Event) {
	switch ev.Type {
	case transcript.ToolCall:
		if tp := ev.Tool(); tp != nil && tp.CallID != "" {
			s.calls[tp.CallID] = true
		}
	case transcript.ToolResult:
		if tp := ev.Tool(); tp != nil && tp.CallID != "" {
			s.results[tp.CallID] = true
		}
	case transcript.MessageAssistant, transcript.MessageUser:
		if m := ev.Message(); m != nil && m.ID != "" {
			s.blocks[string(ev.Type)+"\x00"+m.ID] += len(m.Blocks)
		}
	}
}

// filter drops a call or result already archived and the blocks of a
// message already archived, keeping the message's new blocks.
func (s *archived) filter(ev *transcript.Event) *transcript.Event {
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
		cp := *m
		cp.Blocks = m.Blocks[n:]
		e := *ev
		e.Payload = &cp
		return &e
	}
	return ev
}
