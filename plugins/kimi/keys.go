package kimi

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. TestKeysCoverGets keeps
// the list complete.
var keys = abi.NewKeySet(
	"$twasm", "action", "copied", "lines", "run", "agent_id", "args", "arguments", "arguments_part", "body", "code", "command", "content", "cwd", "environmentDisclosure", "error", "error_type",
	"event", "finishReason", "function", "id", "input", "input_cache_creation", "input_cache_read", "input_other",
	"inputCacheCreation", "inputCacheRead", "inputOther", "isError", "is_error", "kind", "message", "messageId",
	"message_id", "model", "name", "note", "origin", "output", "parent_tool_call_id", "task_tool_call_id", "part", "path", "payload",
	"question", "reason", "response", "result", "return_value", "role", "severity", "status_code", "subagent_type", "text", "think", "time",
	"timestamp", "toolCallId", "toolCalls", "tool_call_id", "tool_calls", "token_usage", "type", "usage", "user_input", "uuid",
	"display", "file_path", "source_kind",
)

// lineNames are the members of a line's object Line reads, in the order
// of the l* constants; all are in keys (TestLookupKeysDeclared).
var (
	lineNames = [...]string{"$twasm", "type", "role", "message", "timestamp", "time"}
	lineKeys  = abi.NewKeySet(lineNames[:]...)
)

const (
	lTwasm = iota
	lType
	lRole
	lMessage
	lTimestamp
	lTime
)
