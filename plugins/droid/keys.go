package droid

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys);
// TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"$twasm", "cacheCreationTokens", "cacheReadTokens", "command", "content", "cwd", "id", "input", "inputTokens",
	"is_error", "message", "model", "name", "outputTokens", "path", "reason", "resultKind", "role", "summaryText", "text", "thinking", "thinkingTokens",
	"timestamp", "tokenUsage", "tool_use_id", "totalTokens", "type", "visibility", "forkedAtMessageId", "turnId",
	// droid exec's output (exec.go).
	"cache_creation_input_tokens", "cache_read_input_tokens", "error", "exitCode", "finalText", "input_tokens", "isError",
	"level", "messageId", "output_tokens", "parameters", "permission_denials", "result", "session_id", "sessionId", "source", "subtype", "thinking_tokens",
	"toolCallId", "toolId", "toolName", "total_cost_usd", "usage", "value",
)
