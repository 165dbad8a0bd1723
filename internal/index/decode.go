package index

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/twasm/twasm/transcript"
)

// line is what the index reads of a transcript line: the envelope and
// the payload fields that become documents or run figures, decoded in
// one json.Unmarshal (which validates the whole line). Reading the full
// transcript.Event (transcript.DecodeEvent) decodes the line in several
// passes and keeps every field: it was most of the indexing time.
// TestSearchAgreesWithScan checks that both readings give the same
// documents. They differ only on lines twasm does not write: keys are
// matched case-insensitively here (encoding/json), and a field the index
// does not read is not type-checked.
type line struct {
	Seq         uint64      `json:"seq"`
	ParentRunID string      `json:"parent_run_id"`
	ChildRunID  string      `json:"child_run_id"`
	Type        string      `json:"type"`
	Path        string      `json:"path"`
	Iteration   int         `json:"iteration"`
	Timestamp   string      `json:"timestamp"`
	Payload     linePayload `json:"payload"`
}

// linePayload holds the fields of the three payload kinds the index
// reads; a field name two kinds share has the same type in both.
type linePayload struct {
	Name    string          `json:"name"`
	Status  string          `json:"status"`
	Error   string          `json:"error"`
	Result  json.RawMessage `json:"result"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Blocks  []lineBlock     `json:"blocks"`
	Input   json.RawMessage `json:"input"`
	Output  string          `json:"output"`
	Command string          `json:"command"`
	Kind    string          `json:"kind"`
	CallID  string          `json:"call_id"`
	// Source is run.started's "source": the run archives an agent
	// session (package archive).
	Source json.RawMessage `json:"source"`
	// Supersedes (a step.call_workflow.started's) and SupersededBy (a
	// run.completed's) name a run superseded by another
	// (lifecycle.SupersedesField, lifecycle.SupersededByField).
	Supersedes   string `json:"supersedes"`
	SupersededBy string `json:"superseded_by"`
}

type lineBlock struct {
	Type     transcript.BlockType `json:"type"`
	Text     string               `json:"text"`
	Thinking string               `json:"thinking"`
	Command  string               `json:"command"`
	Chunk    string               `json:"chunk"`
	Origin   string               `json:"origin"`
}

// lineResult is what the index reads of an agent step's result.
type lineResult struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Error    string `json:"error"`
	Status   string `json:"status"`
	Project  string `json:"project"`
	Cwd      string `json:"cwd"`
}

var errNoType = errors.New("missing type")

// decodeLine reads one transcript line into l (reset first) and its
// time (zero when absent). A line that is not a JSON object, has no
// type, a field of the wrong type or a timestamp that is not RFC 3339
// is an error: it is skipped, as transcript.DecodeEvent rejects it.
func decodeLine(b []byte, l *line) (time.Time, error) {
	// encoding/json decodes an array element into the slice's memory as
	// it is (SetLen within the capacity), without zeroing it: a block
	// would keep the fields its line leaves out (an origin, written only
	// when set) from the block at its place in an earlier line.
	blocks := l.Payload.Blocks[:cap(l.Payload.Blocks)]
	clear(blocks)
	blocks = blocks[:0]
	*l = line{}
	l.Payload.Blocks = blocks
	if err := json.Unmarshal(b, l); err != nil {
		return time.Time{}, err
	}
	if l.Type == "" {
		return time.Time{}, errNoType
	}
	if isNull(l.Payload.Input) {
		l.Payload.Input = nil
	}
	if isNull(l.Payload.Result) {
		l.Payload.Result = nil
	}
	if l.Timestamp == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, l.Timestamp)
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }
