package cursor

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"$twasm", "bubbleId", "bubbles", "command", "content", "context", "conversation", "createdAt",
	"error", "file", "folder", "id", "images", "input", "inputTokens", "is_error", "key", "message",
	"modelConfig", "modelInfo", "modelName", "modelType", "name", "output", "outputTokens", "params",
	"path", "rawArgs", "rawText", "result", "role", "row", "selectedImages", "session", "status",
	"summary", "table", "text", "thinking", "timingInfo", "tokenCount", "tool_use_id", "toolCallId",
	"toolFormerData", "type", "userDecision", "uuid", "value", "workspace",
	// stream-json (stream.go)
	"args", "arguments", "cacheReadTokens", "cacheWriteTokens", "call_id", "cwd", "diffString", "exitCode",
	"interleavedOutput", "model", "model_call_id", "reason", "rejected", "session_id", "stderr", "stdout",
	"subtype", "success", "timestamp_ms", "tool_call", "usage",
)
