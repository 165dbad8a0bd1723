package qwen

import (
	"slices"

	"github.com/twasm/twasm/abi"
)

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost (the Gemini plugin that reads the older chats
// reads its own); TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"agentId", "agentName", "args", "cachedContentTokenCount", "callId", "candidatesTokenCount", "code", "command", "cwd",
	"compressedHistory", "description", "error", "error_message", "error_type", "errorType", "event.name", "forkedFrom", "functionCall", "functionResponse", "id",
	"info", "isSidechain", "message", "messages", "model", "name", "newTokenCount", "originalTokenCount", "output",
	"parentSessionId", "parts", "prompt", "promptTokenCount", "response", "result", "resultDisplay", "role", "sessionId",
	"state", "status", "status_code", "subagent_type", "subtype", "summary", "systemPayload", "terminateReason", "text",
	"thought", "thoughtsTokenCount", "timestamp", "toolCallResult", "toolUsePromptTokenCount", "totalTokenCount",
	"truncatedCount", "type", "uiEvent", "usageMetadata", "uuid",
	"cache_read_input_tokens", "content", "data", "fromModel", "input", "input_tokens", "is_error", "output_tokens",
	"parent_tool_use_id", "qwen_code_version", "session_id", "stop_reason", "thinking", "toModel", "tool_use_id",
	"total_tokens", "usage",
)

// The members of a chat record the normalizer reads, by their number in
// keys: object files them all in one pass (abi.Value.Lookup) instead of
// a Get of each, which passes every member before the one it finds, and
// all of them for one the record lacks (forkedFrom, agentId,
// isSidechain, subtype, on almost every record).
var (
	kType          = keyIndex("type")
	kForkedFrom    = keyIndex("forkedFrom")
	kUUID          = keyIndex("uuid")
	kSubtype       = keyIndex("subtype")
	kTimestamp     = keyIndex("timestamp")
	kAgentID       = keyIndex("agentId")
	kIsSidechain   = keyIndex("isSidechain")
	kAgentName     = keyIndex("agentName")
	kModel         = keyIndex("model")
	kMessage       = keyIndex("message")
	kUsageMetadata = keyIndex("usageMetadata")
)

// keyIndex is the number of name in keys.
func keyIndex(name string) int {
	i := slices.Index(keys.Names(), name)
	if i < 0 {
		panic("qwen: " + name + " is not a declared key")
	}
	return i
}
