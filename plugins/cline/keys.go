package cline

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"$twasm", "apiProtocol", "ask", "cacheReads", "cacheWrites", "cancelReason", "command", "content", "cost",
	"files_in_context", "id", "input", "is_error", "messages", "modelId", "modelInfo", "model_usage",
	"name", "parentTaskId", "partial", "path", "role", "say", "signature", "streamingFailedMessage", "text", "thinking",
	"tokensIn", "tokensOut", "tool_use_id", "ts", "type", "workspace",
)
