package cline

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"$twasm", "apiProtocol", "ask", "cacheReads", "cacheWrites", "cancelReason", "command", "content", "cost",
	"error", "event", "exitCode", "files_in_context", "id", "input", "is_error", "message", "messages",
	"model_usage", "modelId", "modelInfo", "name", "parentTaskId", "partial", "path", "question", "response",
	"result", "role", "say", "schemaVersion", "signature", "status", "streamingFailedMessage", "taskId", "text",
	"thinking", "tokensIn", "tokensOut", "tool", "tool_use_id", "toolName", "ts", "type", "workspace",
)
