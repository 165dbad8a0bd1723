package amp

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys);
// TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"cacheCreationInputTokens", "cacheReadInputTokens", "cmd", "command", "content", "description", "diff", "env",
	"error", "exitCode", "id", "input", "inputTokens", "is_error", "message", "messageId", "messages", "meta", "model",
	"name", "output", "outputTokens", "progress", "prompt", "reason", "result", "role", "run", "sentAt", "state",
	"status", "stopReason", "summary", "text", "thinking", "thread", "timestamp", "toolUseID", "tool_use_id",
	"totalInputTokens", "trees", "type", "uri", "usage", "initial", "relationships", "threadID", "forkPointIndex",
	"v", "session_id", "cwd", "parent_tool_use_id", "input_tokens", "cache_read_input_tokens",
	"cache_creation_input_tokens", "output_tokens", "stop_reason", "subtype",
)
