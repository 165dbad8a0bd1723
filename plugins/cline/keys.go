package cline

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"agentId", "aggregateUsage", "apiProtocol", "ask", "attempt", "cacheReads", "cacheReadTokens", "cacheWrites", "cacheWriteTokens",
	"cancelReason", "capabilities", "code", "command", "commands", "content", "contentType", "contextCondense", "cost", "done", "encrypted_content",
	"error", "errorClass", "errorMessage", "event", "events", "exitCode", "failed", "files_in_context", "finishReason", "id", "input",
	"inputTokens", "is_error", "kind", "maxAttempts", "media", "mediaType", "message", "messages", "metadata", "metrics", "modality", "model", "model_usage",
	"modelId", "modelInfo", "name", "providerId", "noticeType", "output", "outputTokens", "parentTaskId", "partial", "path",
	"prompt", "protocol", "query", "question", "raw", "reason", "reasoning", "reasoning_details", "recoverable", "redacted",
	"response", "result", "role", "run", "say", "schemaVersion", "sessionId", "signature", "status", "store",
	"streamingFailedMessage", "subtype", "success", "summary", "task", "taskId", "text", "thinking", "tokensIn",
	"tokensOut", "tool", "tool_result", "tool_use", "tool_use_id", "toolCallId", "toolName",
	"totalCacheReadTokens", "totalCacheWriteTokens", "totalCost", "totalInputTokens", "totalOutputTokens", "ts", "usageBefore",
	"$twasm", "type", "usage", "workspace",
)
