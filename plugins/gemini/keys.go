package gemini

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"$rewindTo", "$set", "agent_name", "agentId", "args", "cached", "command", "content", "delta",
	"description", "error", "functionCall", "functionResponse", "id", "input", "input_tokens", "kind", "main", "message",
	"messages", "model", "models", "name", "objective", "output", "output_tokens", "parameters",
	"response", "result", "resultDisplay", "role", "roles", "session_id", "sessionId", "severity",
	"stats", "status", "subject", "text", "thought", "thoughts", "timestamp", "tokens", "tool",
	"tool_id", "tool_name", "toolCalls", "total", "total_tokens", "type", "warnings",
)
