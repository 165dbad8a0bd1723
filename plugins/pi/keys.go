package pi

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"agent", "arguments", "branchedFrom", "cacheRead", "cacheWrite", "cancelled", "command", "content", "cost", "cwd",
	"details", "errorMessage", "exitCode", "finalError", "firstKeptEntryId", "firstKeptEntryIndex", "id", "input", "isError", "message",
	"messages", "model", "modelId", "name", "output", "parentId", "parentSession", "reasoning", "redacted", "result",
	"results", "role", "sections", "stopReason", "success", "summary", "task", "text", "thinking", "thinkingSignature",
	"timestamp", "tokensBefore", "toolCallId", "toolName", "total", "totalTokens", "type", "usage",
)
