package claude

import "github.com/twasm/twasm/abi"

// keys are the members the normalizer reads from a line's top-level object
// and its message: one pass over an object (abi.Value.Lookup) answers all
// of them, instead of one scan of the object per Get.
var keys = abi.NewKeySet(
	"type",
	"event",
	"error",
	"content",
	"sessionId",
	"parentUuid",
	"isSidechain",
	"session_id",
	"claude_code_version",
	"version",
	"subtype",
	"model",
	"tool_use_id",
	"message",
	"timestamp",
	"id",
	"usage",
	"stop_reason",
	"tool_use_result",
	"toolUseResult",
	"isMeta",
	"isSynthetic",
	"isCompactSummary",
	"role",
	"parent_tool_use_id",
	"uuid",
	"agentId",
	"subagent_type",
	"task_description",
	"description",
	"status",
	"summary",
	"result",
	"is_error",
	"total_cost_usd",
	"modelUsage",
	"errors",
)

// Indexes into keys.
const (
	kType = iota
	kEvent
	kError
	kContent
	kSessionIdCamel
	kParentUuid
	kIsSidechain
	kSessionId
	kClaudeCodeVersion
	kVersion
	kSubtype
	kModel
	kToolUseId
	kMessage
	kTimestamp
	kId
	kUsage
	kStopReason
	kToolUseResult
	kToolUseResultCamel
	kIsMeta
	kIsSynthetic
	kIsCompactSummary
	kRole
	kParentToolUseId
	kUuid
	kAgentId
	kSubagentType
	kTaskDescription
	kDescription
	kStatus
	kSummary
	kResult
	kIsError
	kTotalCostUsd
	kModelUsage
	kErrors

	nKeys
)

// fieldCache holds the members of the last two objects looked up (a line
// and its message, typically). Values are compared by identity: a Value
// names a position in a Doc that stays alive, and unchanged, as long as the
// cache refers to it.
type fieldCache struct {
	v    [2]abi.Value
	f    [2][nKeys]abi.Value
	next int
}

// get is v.Get(keys.Name(k)), from one pass over v shared by every key.
func (n *normalizer) get(v abi.Value, k int) abi.Value {
	c := &n.fields
	switch {
	case !v.Exists():
		return abi.Value{}
	case v == c.v[0]:
		return c.f[0][k]
	case v == c.v[1]:
		return c.f[1][k]
	case v.Kind() != abi.KindObject:
		return abi.Value{}
	}
	j := c.next
	c.next ^= 1
	c.v[j] = v
	v.Lookup(keys, c.f[j][:])
	return c.f[j][k]
}
